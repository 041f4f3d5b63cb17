from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.end_reason import EndReason
from ..models.status_report_ended_status import StatusReportEndedStatus
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="StatusReportEnded")



@_attrs_define
class StatusReportEnded:
    """ The workload is over and the slice torn down.

        Attributes:
            at (datetime.datetime): When it happened on the agent's clock; billing starts at `provisioned`'s `at`.
            reason (EndReason): Why a workload ended.
            status (StatusReportEndedStatus):
            exit_code (int | None | Unset): The command's exit code; `None` when it died by a signal or there was none.
            signal (int | None | Unset): The signal that ended it, e.g. 15 or 9.
     """

    at: datetime.datetime
    reason: EndReason
    status: StatusReportEndedStatus
    exit_code: int | None | Unset = UNSET
    signal: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        reason = self.reason.value

        status = self.status.value

        exit_code: int | None | Unset
        if isinstance(self.exit_code, Unset):
            exit_code = UNSET
        else:
            exit_code = self.exit_code

        signal: int | None | Unset
        if isinstance(self.signal, Unset):
            signal = UNSET
        else:
            signal = self.signal


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "reason": reason,
            "status": status,
        })
        if exit_code is not UNSET:
            field_dict["exit_code"] = exit_code
        if signal is not UNSET:
            field_dict["signal"] = signal

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = isoparse(d.pop("at"))




        reason = EndReason(d.pop("reason"))




        status = StatusReportEndedStatus(d.pop("status"))




        def _parse_exit_code(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        exit_code = _parse_exit_code(d.pop("exit_code", UNSET))


        def _parse_signal(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        signal = _parse_signal(d.pop("signal", UNSET))


        status_report_ended = cls(
            at=at,
            reason=reason,
            status=status,
            exit_code=exit_code,
            signal=signal,
        )


        status_report_ended.additional_properties = d
        return status_report_ended

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.status_report_failed_status import StatusReportFailedStatus
from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="StatusReportFailed")



@_attrs_define
class StatusReportFailed:
    """ The slice could not be provisioned or the command not started.

        Attributes:
            at (datetime.datetime): When it happened on the agent's clock; billing starts at `provisioned`'s `at`.
            reason (str): A human-readable reason, e.g. `MIG placement 3g.40gb@2 is not legal`.
            status (StatusReportFailedStatus):
     """

    at: datetime.datetime
    reason: str
    status: StatusReportFailedStatus
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        reason = self.reason

        status = self.status.value


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "reason": reason,
            "status": status,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = isoparse(d.pop("at"))




        reason = d.pop("reason")

        status = StatusReportFailedStatus(d.pop("status"))




        status_report_failed = cls(
            at=at,
            reason=reason,
            status=status,
        )


        status_report_failed.additional_properties = d
        return status_report_failed

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

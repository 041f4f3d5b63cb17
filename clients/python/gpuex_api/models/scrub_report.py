from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="ScrubReport")



@_attrs_define
class ScrubReport:
    """ How a whole or shared GPU's memory was cleared between tenants.

        Attributes:
            done (int): Scrubs that cleared the GPU.
            failed (int): Scrubs that failed (the agent logs why).
            last_at (datetime.datetime): When the latest one ran.
            last_ok (bool): Whether the latest one cleared the GPU.
     """

    done: int
    failed: int
    last_at: datetime.datetime
    last_ok: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        done = self.done

        failed = self.failed

        last_at = self.last_at.isoformat()

        last_ok = self.last_ok


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "done": done,
            "failed": failed,
            "last_at": last_at,
            "last_ok": last_ok,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        done = d.pop("done")

        failed = d.pop("failed")

        last_at = isoparse(d.pop("last_at"))




        last_ok = d.pop("last_ok")

        scrub_report = cls(
            done=done,
            failed=failed,
            last_at=last_at,
            last_ok=last_ok,
        )


        scrub_report.additional_properties = d
        return scrub_report

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

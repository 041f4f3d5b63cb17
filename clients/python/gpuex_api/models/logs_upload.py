from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="LogsUpload")



@_attrs_define
class LogsUpload:
    """ Body of `POST /v1/agent/assignments/{lease_id}/logs`: the workload's output
    tail (stdout and stderr interleaved), replacing the one uploaded before.

        Attributes:
            at (datetime.datetime): When the tail was taken.
            complete (bool): Whether the workload has finished, so this tail is final.
            tail (str): The last at most [`LOGS_TAIL_BYTES`] bytes, as UTF-8 (invalid bytes and NUL
                replaced with U+FFFD; the server refuses U+0000).
            total_bytes (int): Bytes the workload wrote in all; more than the tail when output was dropped.
     """

    at: datetime.datetime
    complete: bool
    tail: str
    total_bytes: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        complete = self.complete

        tail = self.tail

        total_bytes = self.total_bytes


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "complete": complete,
            "tail": tail,
            "total_bytes": total_bytes,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = isoparse(d.pop("at"))




        complete = d.pop("complete")

        tail = d.pop("tail")

        total_bytes = d.pop("total_bytes")

        logs_upload = cls(
            at=at,
            complete=complete,
            tail=tail,
            total_bytes=total_bytes,
        )


        logs_upload.additional_properties = d
        return logs_upload

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

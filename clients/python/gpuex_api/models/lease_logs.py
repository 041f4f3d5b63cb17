from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="LeaseLogs")



@_attrs_define
class LeaseLogs:
    """ A workload's output tail.

        Attributes:
            complete (bool): Whether the workload finished, so this tail is final.
            lease_id (UUID):
            tail (str): The last at most 64 KiB of stdout and stderr, interleaved.
            total_bytes (int): Bytes the workload wrote in all (more than the tail when output was dropped).
            updated_at (datetime.datetime | None | Unset): When the agent took the tail; absent before the first upload.
     """

    complete: bool
    lease_id: UUID
    tail: str
    total_bytes: int
    updated_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        complete = self.complete

        lease_id = str(self.lease_id)

        tail = self.tail

        total_bytes = self.total_bytes

        updated_at: None | str | Unset
        if isinstance(self.updated_at, Unset):
            updated_at = UNSET
        elif isinstance(self.updated_at, datetime.datetime):
            updated_at = self.updated_at.isoformat()
        else:
            updated_at = self.updated_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "complete": complete,
            "lease_id": lease_id,
            "tail": tail,
            "total_bytes": total_bytes,
        })
        if updated_at is not UNSET:
            field_dict["updated_at"] = updated_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        complete = d.pop("complete")

        lease_id = UUID(d.pop("lease_id"))




        tail = d.pop("tail")

        total_bytes = d.pop("total_bytes")

        def _parse_updated_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                updated_at_type_0 = isoparse(data)



                return updated_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        updated_at = _parse_updated_at(d.pop("updated_at", UNSET))


        lease_logs = cls(
            complete=complete,
            lease_id=lease_id,
            tail=tail,
            total_bytes=total_bytes,
            updated_at=updated_at,
        )


        lease_logs.additional_properties = d
        return lease_logs

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="ResumedFrom")



@_attrs_define
class ResumedFrom:
    """ Where a resumed lease started from.

        Attributes:
            lease_id (UUID): The lease that resumed.
            seq (int): The checkpoint's number within the order.
            stored_at (datetime.datetime): When that checkpoint was stored.
     """

    lease_id: UUID
    seq: int
    stored_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        lease_id = str(self.lease_id)

        seq = self.seq

        stored_at = self.stored_at.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "lease_id": lease_id,
            "seq": seq,
            "stored_at": stored_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        lease_id = UUID(d.pop("lease_id"))




        seq = d.pop("seq")

        stored_at = isoparse(d.pop("stored_at"))




        resumed_from = cls(
            lease_id=lease_id,
            seq=seq,
            stored_at=stored_at,
        )


        resumed_from.additional_properties = d
        return resumed_from

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

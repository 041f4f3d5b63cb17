from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from uuid import UUID






T = TypeVar("T", bound="RefusedUsage")



@_attrs_define
class RefusedUsage:
    """ One record of a batch that was not stored, and why.

        Attributes:
            field (str): The figure out of bounds, e.g. `records[2].tflops_s`.
            index (int): The record's place in `records` (from 0).
            lease_id (UUID):
            reason (str):
     """

    field: str
    index: int
    lease_id: UUID
    reason: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        field = self.field

        index = self.index

        lease_id = str(self.lease_id)

        reason = self.reason


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "field": field,
            "index": index,
            "lease_id": lease_id,
            "reason": reason,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        field = d.pop("field")

        index = d.pop("index")

        lease_id = UUID(d.pop("lease_id"))




        reason = d.pop("reason")

        refused_usage = cls(
            field=field,
            index=index,
            lease_id=lease_id,
            reason=reason,
        )


        refused_usage.additional_properties = d
        return refused_usage

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

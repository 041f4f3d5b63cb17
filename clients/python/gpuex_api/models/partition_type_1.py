from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.partition_type_1_kind import PartitionType1Kind






T = TypeVar("T", bound="PartitionType1")



@_attrs_define
class PartitionType1:
    """ A soft MPS share: `milli`/1000 of the compute and `memory_mb` MB of memory.

        Attributes:
            kind (PartitionType1Kind):
            memory_mb (int):
            milli (int):
     """

    kind: PartitionType1Kind
    memory_mb: int
    milli: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        memory_mb = self.memory_mb

        milli = self.milli


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "kind": kind,
            "memory_mb": memory_mb,
            "milli": milli,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = PartitionType1Kind(d.pop("kind"))




        memory_mb = d.pop("memory_mb")

        milli = d.pop("milli")

        partition_type_1 = cls(
            kind=kind,
            memory_mb=memory_mb,
            milli=milli,
        )


        partition_type_1.additional_properties = d
        return partition_type_1

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

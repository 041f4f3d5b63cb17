from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.partition_type_0_kind import PartitionType0Kind






T = TypeVar("T", bound="PartitionType0")



@_attrs_define
class PartitionType0:
    """ A MIG GPU instance of `profile` (catalog name) at memory slice `start`.

        Attributes:
            kind (PartitionType0Kind):
            profile (str):
            start (int):
     """

    kind: PartitionType0Kind
    profile: str
    start: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        profile = self.profile

        start = self.start


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "kind": kind,
            "profile": profile,
            "start": start,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = PartitionType0Kind(d.pop("kind"))




        profile = d.pop("profile")

        start = d.pop("start")

        partition_type_0 = cls(
            kind=kind,
            profile=profile,
            start=start,
        )


        partition_type_0.additional_properties = d
        return partition_type_0

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

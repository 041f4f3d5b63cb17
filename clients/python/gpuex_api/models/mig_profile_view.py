from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="MigProfileView")



@_attrs_define
class MigProfileView:
    """ A MIG profile and the units it holds.

        Attributes:
            compute_slices (int):
            memory_gb (int):
            memory_slices (int):
            name (str):
            starts (list[int]): Memory slices where an instance may start.
            tflops_units (str):
            vram_units (str):
     """

    compute_slices: int
    memory_gb: int
    memory_slices: int
    name: str
    starts: list[int]
    tflops_units: str
    vram_units: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        compute_slices = self.compute_slices

        memory_gb = self.memory_gb

        memory_slices = self.memory_slices

        name = self.name

        starts = self.starts



        tflops_units = self.tflops_units

        vram_units = self.vram_units


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "compute_slices": compute_slices,
            "memory_gb": memory_gb,
            "memory_slices": memory_slices,
            "name": name,
            "starts": starts,
            "tflops_units": tflops_units,
            "vram_units": vram_units,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        compute_slices = d.pop("compute_slices")

        memory_gb = d.pop("memory_gb")

        memory_slices = d.pop("memory_slices")

        name = d.pop("name")

        starts = cast(list[int], d.pop("starts"))


        tflops_units = d.pop("tflops_units")

        vram_units = d.pop("vram_units")

        mig_profile_view = cls(
            compute_slices=compute_slices,
            memory_gb=memory_gb,
            memory_slices=memory_slices,
            name=name,
            starts=starts,
            tflops_units=tflops_units,
            vram_units=vram_units,
        )


        mig_profile_view.additional_properties = d
        return mig_profile_view

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

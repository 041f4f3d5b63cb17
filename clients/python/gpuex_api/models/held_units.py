from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="HeldUnits")



@_attrs_define
class HeldUnits:
    """ The units a slice holds, per second of holding.

        Attributes:
            tflops (float | str): A decimal: a string (`"12.50"`, exact) or a number.
            vram_gb (float | str): A decimal: a string (`"12.50"`, exact) or a number.
     """

    tflops: float | str
    vram_gb: float | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        tflops: float | str
        tflops = self.tflops

        vram_gb: float | str
        vram_gb = self.vram_gb


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "tflops": tflops,
            "vram_gb": vram_gb,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_tflops(data: object) -> float | str:
            return cast(float | str, data)

        tflops = _parse_tflops(d.pop("tflops"))


        def _parse_vram_gb(data: object) -> float | str:
            return cast(float | str, data)

        vram_gb = _parse_vram_gb(d.pop("vram_gb"))


        held_units = cls(
            tflops=tflops,
            vram_gb=vram_gb,
        )


        held_units.additional_properties = d
        return held_units

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

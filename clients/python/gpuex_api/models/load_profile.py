from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.load_shape import LoadShape





T = TypeVar("T", bound="LoadProfile")



@_attrs_define
class LoadProfile:
    """ 
        Attributes:
            spot_share (str):
            tflops_units (LoadShape): A load shape as priced.
            vram_units (LoadShape): A load shape as priced.
     """

    spot_share: str
    tflops_units: LoadShape
    vram_units: LoadShape
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.load_shape import LoadShape
        spot_share = self.spot_share

        tflops_units = self.tflops_units.to_dict()

        vram_units = self.vram_units.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "spot_share": spot_share,
            "tflops_units": tflops_units,
            "vram_units": vram_units,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.load_shape import LoadShape
        d = dict(src_dict)
        spot_share = d.pop("spot_share")

        tflops_units = LoadShape.from_dict(d.pop("tflops_units"))




        vram_units = LoadShape.from_dict(d.pop("vram_units"))




        load_profile = cls(
            spot_share=spot_share,
            tflops_units=tflops_units,
            vram_units=vram_units,
        )


        load_profile.additional_properties = d
        return load_profile

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

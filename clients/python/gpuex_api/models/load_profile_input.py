from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.load_shape_input import LoadShapeInput





T = TypeVar("T", bound="LoadProfileInput")



@_attrs_define
class LoadProfileInput:
    """ The work to price, as a body gives it (the fields of a capacity profile's `total`).

        Attributes:
            tflops_units (LoadShapeInput): A load shape as a body gives it.
            vram_units (LoadShapeInput): A load shape as a body gives it.
            spot_share (float | None | str | Unset):
     """

    tflops_units: LoadShapeInput
    vram_units: LoadShapeInput
    spot_share: float | None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.load_shape_input import LoadShapeInput
        tflops_units = self.tflops_units.to_dict()

        vram_units = self.vram_units.to_dict()

        spot_share: float | None | str | Unset
        if isinstance(self.spot_share, Unset):
            spot_share = UNSET
        else:
            spot_share = self.spot_share


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "tflops_units": tflops_units,
            "vram_units": vram_units,
        })
        if spot_share is not UNSET:
            field_dict["spot_share"] = spot_share

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.load_shape_input import LoadShapeInput
        d = dict(src_dict)
        tflops_units = LoadShapeInput.from_dict(d.pop("tflops_units"))




        vram_units = LoadShapeInput.from_dict(d.pop("vram_units"))




        def _parse_spot_share(data: object) -> float | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | str | Unset, data)

        spot_share = _parse_spot_share(d.pop("spot_share", UNSET))


        load_profile_input = cls(
            tflops_units=tflops_units,
            vram_units=vram_units,
            spot_share=spot_share,
        )

        return load_profile_input


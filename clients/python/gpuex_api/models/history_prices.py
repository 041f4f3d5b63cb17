from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.ohlc import Ohlc





T = TypeVar("T", bound="HistoryPrices")



@_attrs_define
class HistoryPrices:
    """ Open, high, low and close of the unit prices a winner at the clearing
    index paid, per unit-hour.

        Attributes:
            tflops_h (Ohlc): Open, high, low and close of one figure over a bucket.
            vram_h (Ohlc): Open, high, low and close of one figure over a bucket.
     """

    tflops_h: Ohlc
    vram_h: Ohlc
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.ohlc import Ohlc
        tflops_h = self.tflops_h.to_dict()

        vram_h = self.vram_h.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "tflops_h": tflops_h,
            "vram_h": vram_h,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.ohlc import Ohlc
        d = dict(src_dict)
        tflops_h = Ohlc.from_dict(d.pop("tflops_h"))




        vram_h = Ohlc.from_dict(d.pop("vram_h"))




        history_prices = cls(
            tflops_h=tflops_h,
            vram_h=vram_h,
        )


        history_prices.additional_properties = d
        return history_prices

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

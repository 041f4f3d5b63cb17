from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="BidView")



@_attrs_define
class BidView:
    """ One spot bid in the book.

        Attributes:
            tflops (str):
            vram_gb (int):
            winning (bool): Whether the bid holds capacity now.
            max_price (None | str | Unset):
            price_index (None | str | Unset): max_price ÷ list value of the bid's resources per hour.
     """

    tflops: str
    vram_gb: int
    winning: bool
    max_price: None | str | Unset = UNSET
    price_index: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        tflops = self.tflops

        vram_gb = self.vram_gb

        winning = self.winning

        max_price: None | str | Unset
        if isinstance(self.max_price, Unset):
            max_price = UNSET
        else:
            max_price = self.max_price

        price_index: None | str | Unset
        if isinstance(self.price_index, Unset):
            price_index = UNSET
        else:
            price_index = self.price_index


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "tflops": tflops,
            "vram_gb": vram_gb,
            "winning": winning,
        })
        if max_price is not UNSET:
            field_dict["max_price"] = max_price
        if price_index is not UNSET:
            field_dict["price_index"] = price_index

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        tflops = d.pop("tflops")

        vram_gb = d.pop("vram_gb")

        winning = d.pop("winning")

        def _parse_max_price(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        max_price = _parse_max_price(d.pop("max_price", UNSET))


        def _parse_price_index(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        price_index = _parse_price_index(d.pop("price_index", UNSET))


        bid_view = cls(
            tflops=tflops,
            vram_gb=vram_gb,
            winning=winning,
            max_price=max_price,
            price_index=price_index,
        )


        bid_view.additional_properties = d
        return bid_view

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

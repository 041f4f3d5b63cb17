from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="UnitsQuote")



@_attrs_define
class UnitsQuote:
    """ What an order of `count` units would get if placed now.

        Attributes:
            count (int): The units asked.
            placeable_now (int): The units free capacity holds now (at most `count`): an order with
                `all_or_none` fills only when this equals `count`, one with
                `min_count` when this reaches it.
            price_per_hour (str): What those units would be charged per hour together.
     """

    count: int
    placeable_now: int
    price_per_hour: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        count = self.count

        placeable_now = self.placeable_now

        price_per_hour = self.price_per_hour


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "count": count,
            "placeable_now": placeable_now,
            "price_per_hour": price_per_hour,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        count = d.pop("count")

        placeable_now = d.pop("placeable_now")

        price_per_hour = d.pop("price_per_hour")

        units_quote = cls(
            count=count,
            placeable_now=placeable_now,
            price_per_hour=price_per_hour,
        )


        units_quote.additional_properties = d
        return units_quote

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

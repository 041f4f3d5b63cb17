from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.unit import Unit






T = TypeVar("T", bound="UnitPrices")



@_attrs_define
class UnitPrices:
    """ A unit's prices per unit-hour.

        Attributes:
            list_ (str):
            on_demand (str):
            reserved (str):
            spot (str): `spot_index` × list.
            unit (Unit): A unit gpuex sells, priced per hour and metered per second.
     """

    list_: str
    on_demand: str
    reserved: str
    spot: str
    unit: Unit
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        list_ = self.list_

        on_demand = self.on_demand

        reserved = self.reserved

        spot = self.spot

        unit = self.unit.value


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "list": list_,
            "on_demand": on_demand,
            "reserved": reserved,
            "spot": spot,
            "unit": unit,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        list_ = d.pop("list")

        on_demand = d.pop("on_demand")

        reserved = d.pop("reserved")

        spot = d.pop("spot")

        unit = Unit(d.pop("unit"))




        unit_prices = cls(
            list_=list_,
            on_demand=on_demand,
            reserved=reserved,
            spot=spot,
            unit=unit,
        )


        unit_prices.additional_properties = d
        return unit_prices

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

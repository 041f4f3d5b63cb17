from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="DerivedPrices")



@_attrs_define
class DerivedPrices:
    """ Every price derived from one list price, per unit-hour.

        Attributes:
            list_ (str):
            on_demand (str):
            pooled (str):
            resale_cap (str): The most a reseller may ask for an hour starting within the hour (0.9 × on-demand).
            resale_cap_reserved (str): The most a reseller may ask for an hour starting an hour or more ahead (0.9 ×
                reserved).
            reserved (str):
            spot_cap (str): The highest price the spot auction clears at.
            spot_floor (str): The lowest price the spot auction clears at.
     """

    list_: str
    on_demand: str
    pooled: str
    resale_cap: str
    resale_cap_reserved: str
    reserved: str
    spot_cap: str
    spot_floor: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        list_ = self.list_

        on_demand = self.on_demand

        pooled = self.pooled

        resale_cap = self.resale_cap

        resale_cap_reserved = self.resale_cap_reserved

        reserved = self.reserved

        spot_cap = self.spot_cap

        spot_floor = self.spot_floor


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "list": list_,
            "on_demand": on_demand,
            "pooled": pooled,
            "resale_cap": resale_cap,
            "resale_cap_reserved": resale_cap_reserved,
            "reserved": reserved,
            "spot_cap": spot_cap,
            "spot_floor": spot_floor,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        list_ = d.pop("list")

        on_demand = d.pop("on_demand")

        pooled = d.pop("pooled")

        resale_cap = d.pop("resale_cap")

        resale_cap_reserved = d.pop("resale_cap_reserved")

        reserved = d.pop("reserved")

        spot_cap = d.pop("spot_cap")

        spot_floor = d.pop("spot_floor")

        derived_prices = cls(
            list_=list_,
            on_demand=on_demand,
            pooled=pooled,
            resale_cap=resale_cap,
            resale_cap_reserved=resale_cap_reserved,
            reserved=reserved,
            spot_cap=spot_cap,
            spot_floor=spot_floor,
        )


        derived_prices.additional_properties = d
        return derived_prices

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

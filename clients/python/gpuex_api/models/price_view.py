from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.unit import Unit
from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="PriceView")



@_attrs_define
class PriceView:
    """ Prices of one unit of one model in one region, per unit-hour.

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
            currency (str):
            gpu_model (str):
            region (str):
            unit (Unit): A unit gpuex sells, priced per hour and metered per second.
            updated_at (datetime.datetime):
     """

    list_: str
    on_demand: str
    pooled: str
    resale_cap: str
    resale_cap_reserved: str
    reserved: str
    spot_cap: str
    spot_floor: str
    currency: str
    gpu_model: str
    region: str
    unit: Unit
    updated_at: datetime.datetime
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

        currency = self.currency

        gpu_model = self.gpu_model

        region = self.region

        unit = self.unit.value

        updated_at = self.updated_at.isoformat()


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
            "currency": currency,
            "gpu_model": gpu_model,
            "region": region,
            "unit": unit,
            "updated_at": updated_at,
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

        currency = d.pop("currency")

        gpu_model = d.pop("gpu_model")

        region = d.pop("region")

        unit = Unit(d.pop("unit"))




        updated_at = isoparse(d.pop("updated_at"))




        price_view = cls(
            list_=list_,
            on_demand=on_demand,
            pooled=pooled,
            resale_cap=resale_cap,
            resale_cap_reserved=resale_cap_reserved,
            reserved=reserved,
            spot_cap=spot_cap,
            spot_floor=spot_floor,
            currency=currency,
            gpu_model=gpu_model,
            region=region,
            unit=unit,
            updated_at=updated_at,
        )


        price_view.additional_properties = d
        return price_view

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

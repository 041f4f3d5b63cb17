from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.unit import Unit






T = TypeVar("T", bound="PriceUpdate")



@_attrs_define
class PriceUpdate:
    """ 
        Attributes:
            gpu_model (str):
            list_price (str): Money: a decimal string (no JSON number, no exponent), above 0 and below 1000000, with at most
                6 decimals. Kept and answered at 6 decimals at most.
            region (str):
            unit (Unit): A unit gpuex sells, priced per hour and metered per second.
     """

    gpu_model: str
    list_price: str
    region: str
    unit: Unit





    def to_dict(self) -> dict[str, Any]:
        gpu_model = self.gpu_model

        list_price = self.list_price

        region = self.region

        unit = self.unit.value


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "gpu_model": gpu_model,
            "list_price": list_price,
            "region": region,
            "unit": unit,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        gpu_model = d.pop("gpu_model")

        list_price = d.pop("list_price")

        region = d.pop("region")

        unit = Unit(d.pop("unit"))




        price_update = cls(
            gpu_model=gpu_model,
            list_price=list_price,
            region=region,
            unit=unit,
        )

        return price_update


from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.mode import Mode
from ..models.unit import Unit






T = TypeVar("T", bound="MixLine")



@_attrs_define
class MixLine:
    """ One part of the gpuex mix.

        Attributes:
            mode (Mode): How an order buys capacity.
            per_hour (str): `units × price_per_unit_hour`, to 6 decimals.
            price_per_unit_hour (str):
            unit (Unit): A unit gpuex sells, priced per hour and metered per second.
            units (str): Units bought on average each hour (unit-hours per hour).
     """

    mode: Mode
    per_hour: str
    price_per_unit_hour: str
    unit: Unit
    units: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        mode = self.mode.value

        per_hour = self.per_hour

        price_per_unit_hour = self.price_per_unit_hour

        unit = self.unit.value

        units = self.units


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "mode": mode,
            "per_hour": per_hour,
            "price_per_unit_hour": price_per_unit_hour,
            "unit": unit,
            "units": units,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        mode = Mode(d.pop("mode"))




        per_hour = d.pop("per_hour")

        price_per_unit_hour = d.pop("price_per_unit_hour")

        unit = Unit(d.pop("unit"))




        units = d.pop("units")

        mix_line = cls(
            mode=mode,
            per_hour=per_hour,
            price_per_unit_hour=price_per_unit_hour,
            unit=unit,
            units=units,
        )


        mix_line.additional_properties = d
        return mix_line

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.unit import Unit






T = TypeVar("T", bound="QuoteLine")



@_attrs_define
class QuoteLine:
    """ One line of a quote: one unit for the window.

        Attributes:
            amount (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            hours (str):
            list_unit_price (str):
            quantity (str): Units held.
            unit (Unit): A unit gpuex sells, priced per hour and metered per second.
            unit_price (str): Price per unit-hour in this mode.
     """

    amount: str
    hours: str
    list_unit_price: str
    quantity: str
    unit: Unit
    unit_price: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        hours = self.hours

        list_unit_price = self.list_unit_price

        quantity = self.quantity

        unit = self.unit.value

        unit_price = self.unit_price


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "amount": amount,
            "hours": hours,
            "list_unit_price": list_unit_price,
            "quantity": quantity,
            "unit": unit,
            "unit_price": unit_price,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        amount = d.pop("amount")

        hours = d.pop("hours")

        list_unit_price = d.pop("list_unit_price")

        quantity = d.pop("quantity")

        unit = Unit(d.pop("unit"))




        unit_price = d.pop("unit_price")

        quote_line = cls(
            amount=amount,
            hours=hours,
            list_unit_price=list_unit_price,
            quantity=quantity,
            unit=unit,
            unit_price=unit_price,
        )


        quote_line.additional_properties = d
        return quote_line

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

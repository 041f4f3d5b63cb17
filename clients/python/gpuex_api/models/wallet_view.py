from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="WalletView")



@_attrs_define
class WalletView:
    """ The caller's money.

        Attributes:
            available (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or
                billed; the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            balance (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            currency (str):
            held (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed; the
                ledger's `platform:rounding` account takes any residue, so the books balance exactly.
     """

    available: str
    balance: str
    currency: str
    held: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        available = self.available

        balance = self.balance

        currency = self.currency

        held = self.held


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "available": available,
            "balance": balance,
            "currency": currency,
            "held": held,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        available = d.pop("available")

        balance = d.pop("balance")

        currency = d.pop("currency")

        held = d.pop("held")

        wallet_view = cls(
            available=available,
            balance=balance,
            currency=currency,
            held=held,
        )


        wallet_view.additional_properties = d
        return wallet_view

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

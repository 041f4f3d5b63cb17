from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.earnings_group import EarningsGroup





T = TypeVar("T", bound="Earnings")



@_attrs_define
class Earnings:
    """ 
        Attributes:
            currency (str):
            gross (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            groups (list[EarningsGroup]):
            net (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed; the
                ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            payable_balance (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or
                billed; the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            platform_fee (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or
                billed; the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
     """

    currency: str
    gross: str
    groups: list[EarningsGroup]
    net: str
    payable_balance: str
    platform_fee: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.earnings_group import EarningsGroup
        currency = self.currency

        gross = self.gross

        groups = []
        for groups_item_data in self.groups:
            groups_item = groups_item_data.to_dict()
            groups.append(groups_item)



        net = self.net

        payable_balance = self.payable_balance

        platform_fee = self.platform_fee


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "currency": currency,
            "gross": gross,
            "groups": groups,
            "net": net,
            "payable_balance": payable_balance,
            "platform_fee": platform_fee,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.earnings_group import EarningsGroup
        d = dict(src_dict)
        currency = d.pop("currency")

        gross = d.pop("gross")

        groups = []
        _groups = d.pop("groups")
        for groups_item_data in (_groups):
            groups_item = EarningsGroup.from_dict(groups_item_data)



            groups.append(groups_item)


        net = d.pop("net")

        payable_balance = d.pop("payable_balance")

        platform_fee = d.pop("platform_fee")

        earnings = cls(
            currency=currency,
            gross=gross,
            groups=groups,
            net=net,
            payable_balance=payable_balance,
            platform_fee=platform_fee,
        )


        earnings.additional_properties = d
        return earnings

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

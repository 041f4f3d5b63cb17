from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="BudgetView")



@_attrs_define
class BudgetView:
    """ 
        Attributes:
            currency (str):
            monthly_limit (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or
                billed; the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            remaining (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or
                billed; the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            spent (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            tag_key (str):
            tag_value (str):
     """

    currency: str
    monthly_limit: str
    remaining: str
    spent: str
    tag_key: str
    tag_value: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        currency = self.currency

        monthly_limit = self.monthly_limit

        remaining = self.remaining

        spent = self.spent

        tag_key = self.tag_key

        tag_value = self.tag_value


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "currency": currency,
            "monthly_limit": monthly_limit,
            "remaining": remaining,
            "spent": spent,
            "tag_key": tag_key,
            "tag_value": tag_value,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        currency = d.pop("currency")

        monthly_limit = d.pop("monthly_limit")

        remaining = d.pop("remaining")

        spent = d.pop("spent")

        tag_key = d.pop("tag_key")

        tag_value = d.pop("tag_value")

        budget_view = cls(
            currency=currency,
            monthly_limit=monthly_limit,
            remaining=remaining,
            spent=spent,
            tag_key=tag_key,
            tag_value=tag_value,
        )


        budget_view.additional_properties = d
        return budget_view

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from uuid import UUID






T = TypeVar("T", bound="AdjustmentView")



@_attrs_define
class AdjustmentView:
    """ 
        Attributes:
            amount (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            entry_id (UUID):
            reason (str):
            user_id (UUID):
     """

    amount: str
    entry_id: UUID
    reason: str
    user_id: UUID
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        entry_id = str(self.entry_id)

        reason = self.reason

        user_id = str(self.user_id)


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "amount": amount,
            "entry_id": entry_id,
            "reason": reason,
            "user_id": user_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        amount = d.pop("amount")

        entry_id = UUID(d.pop("entry_id"))




        reason = d.pop("reason")

        user_id = UUID(d.pop("user_id"))




        adjustment_view = cls(
            amount=amount,
            entry_id=entry_id,
            reason=reason,
            user_id=user_id,
        )


        adjustment_view.additional_properties = d
        return adjustment_view

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

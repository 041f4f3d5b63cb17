from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
from uuid import UUID






T = TypeVar("T", bound="CreditRequest")



@_attrs_define
class CreditRequest:
    """ 
        Attributes:
            amount (str): Money: a decimal string (no JSON number, no exponent), above 0 and below 1000000000, with at most
                6 decimals. Kept and answered at 6 decimals at most.
            user_id (UUID):
            memo (None | str | Unset): Why the credit was given; shown on the ledger.
     """

    amount: str
    user_id: UUID
    memo: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        user_id = str(self.user_id)

        memo: None | str | Unset
        if isinstance(self.memo, Unset):
            memo = UNSET
        else:
            memo = self.memo


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "amount": amount,
            "user_id": user_id,
        })
        if memo is not UNSET:
            field_dict["memo"] = memo

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        amount = d.pop("amount")

        user_id = UUID(d.pop("user_id"))




        def _parse_memo(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        memo = _parse_memo(d.pop("memo", UNSET))


        credit_request = cls(
            amount=amount,
            user_id=user_id,
            memo=memo,
        )

        return credit_request


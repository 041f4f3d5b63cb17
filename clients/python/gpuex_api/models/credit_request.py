from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
from uuid import UUID

if TYPE_CHECKING:
  from ..models.amount_type_0 import AmountType0





T = TypeVar("T", bound="CreditRequest")



@_attrs_define
class CreditRequest:
    """ 
        Attributes:
            amount (AmountType0 | float): A decimal: above 0 and below 1000000000, with at most 6 decimals.
            user_id (UUID):
            memo (None | str | Unset): Why the credit was given; shown on the ledger.
     """

    amount: AmountType0 | float
    user_id: UUID
    memo: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.amount_type_0 import AmountType0
        amount: dict[str, Any] | float
        if isinstance(self.amount, AmountType0):
            amount = self.amount.to_dict()
        else:
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
        from ..models.amount_type_0 import AmountType0
        d = dict(src_dict)
        def _parse_amount(data: object) -> AmountType0 | float:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_amount_type_0 = AmountType0.from_dict(data)



                return componentsschemas_amount_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AmountType0 | float, data)

        amount = _parse_amount(d.pop("amount"))


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


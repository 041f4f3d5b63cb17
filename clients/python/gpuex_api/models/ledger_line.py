from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="LedgerLine")



@_attrs_define
class LedgerLine:
    """ One posting to one of the caller's accounts.

        Attributes:
            account (str): `wallet`, `holds` or `payable`.
            amount (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            balance_after (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or
                billed; the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            created_at (datetime.datetime):
            entry_id (UUID):
            id (int):
            kind (str): `credit`, `hold`, `capture`, `release`, `charge`, …
            memo (str):
            reference (None | str | Unset):
     """

    account: str
    amount: str
    balance_after: str
    created_at: datetime.datetime
    entry_id: UUID
    id: int
    kind: str
    memo: str
    reference: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        account = self.account

        amount = self.amount

        balance_after = self.balance_after

        created_at = self.created_at.isoformat()

        entry_id = str(self.entry_id)

        id = self.id

        kind = self.kind

        memo = self.memo

        reference: None | str | Unset
        if isinstance(self.reference, Unset):
            reference = UNSET
        else:
            reference = self.reference


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "account": account,
            "amount": amount,
            "balance_after": balance_after,
            "created_at": created_at,
            "entry_id": entry_id,
            "id": id,
            "kind": kind,
            "memo": memo,
        })
        if reference is not UNSET:
            field_dict["reference"] = reference

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        account = d.pop("account")

        amount = d.pop("amount")

        balance_after = d.pop("balance_after")

        created_at = isoparse(d.pop("created_at"))




        entry_id = UUID(d.pop("entry_id"))




        id = d.pop("id")

        kind = d.pop("kind")

        memo = d.pop("memo")

        def _parse_reference(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reference = _parse_reference(d.pop("reference", UNSET))


        ledger_line = cls(
            account=account,
            amount=amount,
            balance_after=balance_after,
            created_at=created_at,
            entry_id=entry_id,
            id=id,
            kind=kind,
            memo=memo,
            reference=reference,
        )


        ledger_line.additional_properties = d
        return ledger_line

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

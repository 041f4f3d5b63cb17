from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.invoice_item import InvoiceItem





T = TypeVar("T", bound="Invoice")



@_attrs_define
class Invoice:
    """ 
        Attributes:
            buyer_id (UUID):
            charges (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            credits_ (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            currency (str):
            id (str):
            invoice_id (str): The monthly InvoiceId (for `on-demand`: that of the period's first month).
            items (list[InvoiceItem]):
            ledger_total (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or
                billed; the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            period_end (datetime.datetime):
            period_start (datetime.datetime):
            total (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
     """

    buyer_id: UUID
    charges: str
    credits_: str
    currency: str
    id: str
    invoice_id: str
    items: list[InvoiceItem]
    ledger_total: str
    period_end: datetime.datetime
    period_start: datetime.datetime
    total: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.invoice_item import InvoiceItem
        buyer_id = str(self.buyer_id)

        charges = self.charges

        credits_ = self.credits_

        currency = self.currency

        id = self.id

        invoice_id = self.invoice_id

        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)



        ledger_total = self.ledger_total

        period_end = self.period_end.isoformat()

        period_start = self.period_start.isoformat()

        total = self.total


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "buyer_id": buyer_id,
            "charges": charges,
            "credits": credits_,
            "currency": currency,
            "id": id,
            "invoice_id": invoice_id,
            "items": items,
            "ledger_total": ledger_total,
            "period_end": period_end,
            "period_start": period_start,
            "total": total,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.invoice_item import InvoiceItem
        d = dict(src_dict)
        buyer_id = UUID(d.pop("buyer_id"))




        charges = d.pop("charges")

        credits_ = d.pop("credits")

        currency = d.pop("currency")

        id = d.pop("id")

        invoice_id = d.pop("invoice_id")

        items = []
        _items = d.pop("items")
        for items_item_data in (_items):
            items_item = InvoiceItem.from_dict(items_item_data)



            items.append(items_item)


        ledger_total = d.pop("ledger_total")

        period_end = isoparse(d.pop("period_end"))




        period_start = isoparse(d.pop("period_start"))




        total = d.pop("total")

        invoice = cls(
            buyer_id=buyer_id,
            charges=charges,
            credits_=credits_,
            currency=currency,
            id=id,
            invoice_id=invoice_id,
            items=items,
            ledger_total=ledger_total,
            period_end=period_end,
            period_start=period_start,
            total=total,
        )


        invoice.additional_properties = d
        return invoice

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

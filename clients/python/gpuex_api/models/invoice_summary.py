from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="InvoiceSummary")



@_attrs_define
class InvoiceSummary:
    """ One month's invoice, in a list.

        Attributes:
            currency (str):
            id (str): `YYYY-MM`: pass to `GET /v1/billing/invoices/{id}`.
            invoice_id (str): The InvoiceId the FOCUS export carries.
            lines (int):
            period_end (datetime.datetime):
            period_start (datetime.datetime):
            total (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
     """

    currency: str
    id: str
    invoice_id: str
    lines: int
    period_end: datetime.datetime
    period_start: datetime.datetime
    total: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        currency = self.currency

        id = self.id

        invoice_id = self.invoice_id

        lines = self.lines

        period_end = self.period_end.isoformat()

        period_start = self.period_start.isoformat()

        total = self.total


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "currency": currency,
            "id": id,
            "invoice_id": invoice_id,
            "lines": lines,
            "period_end": period_end,
            "period_start": period_start,
            "total": total,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        currency = d.pop("currency")

        id = d.pop("id")

        invoice_id = d.pop("invoice_id")

        lines = d.pop("lines")

        period_end = isoparse(d.pop("period_end"))




        period_start = isoparse(d.pop("period_start"))




        total = d.pop("total")

        invoice_summary = cls(
            currency=currency,
            id=id,
            invoice_id=invoice_id,
            lines=lines,
            period_end=period_end,
            period_start=period_start,
            total=total,
        )


        invoice_summary.additional_properties = d
        return invoice_summary

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

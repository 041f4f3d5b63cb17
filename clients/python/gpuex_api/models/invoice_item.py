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
  from ..models.invoice_item_tags import InvoiceItemTags





T = TypeVar("T", bound="InvoiceItem")



@_attrs_define
class InvoiceItem:
    """ One line item: lines of one lease, kind, mode, SKU and tags summed.

        Attributes:
            amount (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            kind (str): `usage`, `reserved_used`, `reserved_unused` or `credit`.
            lines (int):
            quantity (str): Unit-hours.
            tags (InvoiceItemTags):
            unit_price (str):
            lease_id (None | Unset | UUID):
            memo (None | str | Unset): Credits: why.
            mode (None | str | Unset):
            region (None | str | Unset):
            sku (None | str | Unset): `{gpu_model}:{unit}`.
     """

    amount: str
    kind: str
    lines: int
    quantity: str
    tags: InvoiceItemTags
    unit_price: str
    lease_id: None | Unset | UUID = UNSET
    memo: None | str | Unset = UNSET
    mode: None | str | Unset = UNSET
    region: None | str | Unset = UNSET
    sku: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.invoice_item_tags import InvoiceItemTags
        amount = self.amount

        kind = self.kind

        lines = self.lines

        quantity = self.quantity

        tags = self.tags.to_dict()

        unit_price = self.unit_price

        lease_id: None | str | Unset
        if isinstance(self.lease_id, Unset):
            lease_id = UNSET
        elif isinstance(self.lease_id, UUID):
            lease_id = str(self.lease_id)
        else:
            lease_id = self.lease_id

        memo: None | str | Unset
        if isinstance(self.memo, Unset):
            memo = UNSET
        else:
            memo = self.memo

        mode: None | str | Unset
        if isinstance(self.mode, Unset):
            mode = UNSET
        else:
            mode = self.mode

        region: None | str | Unset
        if isinstance(self.region, Unset):
            region = UNSET
        else:
            region = self.region

        sku: None | str | Unset
        if isinstance(self.sku, Unset):
            sku = UNSET
        else:
            sku = self.sku


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "amount": amount,
            "kind": kind,
            "lines": lines,
            "quantity": quantity,
            "tags": tags,
            "unit_price": unit_price,
        })
        if lease_id is not UNSET:
            field_dict["lease_id"] = lease_id
        if memo is not UNSET:
            field_dict["memo"] = memo
        if mode is not UNSET:
            field_dict["mode"] = mode
        if region is not UNSET:
            field_dict["region"] = region
        if sku is not UNSET:
            field_dict["sku"] = sku

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.invoice_item_tags import InvoiceItemTags
        d = dict(src_dict)
        amount = d.pop("amount")

        kind = d.pop("kind")

        lines = d.pop("lines")

        quantity = d.pop("quantity")

        tags = InvoiceItemTags.from_dict(d.pop("tags"))




        unit_price = d.pop("unit_price")

        def _parse_lease_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                lease_id_type_0 = UUID(data)



                return lease_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        lease_id = _parse_lease_id(d.pop("lease_id", UNSET))


        def _parse_memo(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        memo = _parse_memo(d.pop("memo", UNSET))


        def _parse_mode(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mode = _parse_mode(d.pop("mode", UNSET))


        def _parse_region(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        region = _parse_region(d.pop("region", UNSET))


        def _parse_sku(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        sku = _parse_sku(d.pop("sku", UNSET))


        invoice_item = cls(
            amount=amount,
            kind=kind,
            lines=lines,
            quantity=quantity,
            tags=tags,
            unit_price=unit_price,
            lease_id=lease_id,
            memo=memo,
            mode=mode,
            region=region,
            sku=sku,
        )


        invoice_item.additional_properties = d
        return invoice_item

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

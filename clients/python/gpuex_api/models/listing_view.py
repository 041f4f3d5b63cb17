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






T = TypeVar("T", bound="ListingView")



@_attrs_define
class ListingView:
    """ A listing as its seller sees it.

        Attributes:
            ask_per_hour (str):
            created_at (datetime.datetime):
            from_ (datetime.datetime):
            gpu_model (str):
            id (UUID):
            lease_id (UUID):
            region (str):
            state (str): `open`, `sold`, `cancelled`, `expired` or `withdrawn` (its node left the market).
            until (datetime.datetime):
            parent_id (None | Unset | UUID): The listing a sale left this one of.
            sold_amount (None | str | Unset): Sold: the ask for that part (each charge pays it, less the platform fee).
            sold_from (datetime.datetime | None | Unset): Sold: the part sold.
            sold_until (datetime.datetime | None | Unset):
     """

    ask_per_hour: str
    created_at: datetime.datetime
    from_: datetime.datetime
    gpu_model: str
    id: UUID
    lease_id: UUID
    region: str
    state: str
    until: datetime.datetime
    parent_id: None | Unset | UUID = UNSET
    sold_amount: None | str | Unset = UNSET
    sold_from: datetime.datetime | None | Unset = UNSET
    sold_until: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        ask_per_hour = self.ask_per_hour

        created_at = self.created_at.isoformat()

        from_ = self.from_.isoformat()

        gpu_model = self.gpu_model

        id = str(self.id)

        lease_id = str(self.lease_id)

        region = self.region

        state = self.state

        until = self.until.isoformat()

        parent_id: None | str | Unset
        if isinstance(self.parent_id, Unset):
            parent_id = UNSET
        elif isinstance(self.parent_id, UUID):
            parent_id = str(self.parent_id)
        else:
            parent_id = self.parent_id

        sold_amount: None | str | Unset
        if isinstance(self.sold_amount, Unset):
            sold_amount = UNSET
        else:
            sold_amount = self.sold_amount

        sold_from: None | str | Unset
        if isinstance(self.sold_from, Unset):
            sold_from = UNSET
        elif isinstance(self.sold_from, datetime.datetime):
            sold_from = self.sold_from.isoformat()
        else:
            sold_from = self.sold_from

        sold_until: None | str | Unset
        if isinstance(self.sold_until, Unset):
            sold_until = UNSET
        elif isinstance(self.sold_until, datetime.datetime):
            sold_until = self.sold_until.isoformat()
        else:
            sold_until = self.sold_until


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "ask_per_hour": ask_per_hour,
            "created_at": created_at,
            "from": from_,
            "gpu_model": gpu_model,
            "id": id,
            "lease_id": lease_id,
            "region": region,
            "state": state,
            "until": until,
        })
        if parent_id is not UNSET:
            field_dict["parent_id"] = parent_id
        if sold_amount is not UNSET:
            field_dict["sold_amount"] = sold_amount
        if sold_from is not UNSET:
            field_dict["sold_from"] = sold_from
        if sold_until is not UNSET:
            field_dict["sold_until"] = sold_until

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ask_per_hour = d.pop("ask_per_hour")

        created_at = isoparse(d.pop("created_at"))




        from_ = isoparse(d.pop("from"))




        gpu_model = d.pop("gpu_model")

        id = UUID(d.pop("id"))




        lease_id = UUID(d.pop("lease_id"))




        region = d.pop("region")

        state = d.pop("state")

        until = isoparse(d.pop("until"))




        def _parse_parent_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                parent_id_type_0 = UUID(data)



                return parent_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        parent_id = _parse_parent_id(d.pop("parent_id", UNSET))


        def _parse_sold_amount(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        sold_amount = _parse_sold_amount(d.pop("sold_amount", UNSET))


        def _parse_sold_from(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                sold_from_type_0 = isoparse(data)



                return sold_from_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        sold_from = _parse_sold_from(d.pop("sold_from", UNSET))


        def _parse_sold_until(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                sold_until_type_0 = isoparse(data)



                return sold_until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        sold_until = _parse_sold_until(d.pop("sold_until", UNSET))


        listing_view = cls(
            ask_per_hour=ask_per_hour,
            created_at=created_at,
            from_=from_,
            gpu_model=gpu_model,
            id=id,
            lease_id=lease_id,
            region=region,
            state=state,
            until=until,
            parent_id=parent_id,
            sold_amount=sold_amount,
            sold_from=sold_from,
            sold_until=sold_until,
        )


        listing_view.additional_properties = d
        return listing_view

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

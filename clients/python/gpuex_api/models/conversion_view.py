from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.mode import Mode
from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="ConversionView")



@_attrs_define
class ConversionView:
    """ One mode conversion of a lease (ARCHITECTURE.md §3 "Mode changes").

        Attributes:
            at (datetime.datetime): When the buyer converted.
            effective_at (datetime.datetime): When the new price applies: `at`, or a reserved window's `from`.
            from_mode (Mode): How an order buys capacity.
            price_per_hour_after (str):
            price_per_hour_before (str):
            to_mode (Mode): How an order buys capacity.
     """

    at: datetime.datetime
    effective_at: datetime.datetime
    from_mode: Mode
    price_per_hour_after: str
    price_per_hour_before: str
    to_mode: Mode
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        effective_at = self.effective_at.isoformat()

        from_mode = self.from_mode.value

        price_per_hour_after = self.price_per_hour_after

        price_per_hour_before = self.price_per_hour_before

        to_mode = self.to_mode.value


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "effective_at": effective_at,
            "from_mode": from_mode,
            "price_per_hour_after": price_per_hour_after,
            "price_per_hour_before": price_per_hour_before,
            "to_mode": to_mode,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = isoparse(d.pop("at"))




        effective_at = isoparse(d.pop("effective_at"))




        from_mode = Mode(d.pop("from_mode"))




        price_per_hour_after = d.pop("price_per_hour_after")

        price_per_hour_before = d.pop("price_per_hour_before")

        to_mode = Mode(d.pop("to_mode"))




        conversion_view = cls(
            at=at,
            effective_at=effective_at,
            from_mode=from_mode,
            price_per_hour_after=price_per_hour_after,
            price_per_hour_before=price_per_hour_before,
            to_mode=to_mode,
        )


        conversion_view.additional_properties = d
        return conversion_view

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

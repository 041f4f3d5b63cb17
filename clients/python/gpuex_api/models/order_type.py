from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.time_in_force import TimeInForce
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="OrderType")



@_attrs_define
class OrderType:
    """ An order's type as its fills report it (ARCHITECTURE.md §22).

        Attributes:
            count (int): Units asked.
            min_count (int): The fewest units it would take (`count` when all-or-none).
            expires_at (datetime.datetime | None | Unset): Until when a `gtt` order waited.
            time_in_force (None | TimeInForce | Unset):
     """

    count: int
    min_count: int
    expires_at: datetime.datetime | None | Unset = UNSET
    time_in_force: None | TimeInForce | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        count = self.count

        min_count = self.min_count

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        time_in_force: None | str | Unset
        if isinstance(self.time_in_force, Unset):
            time_in_force = UNSET
        elif isinstance(self.time_in_force, TimeInForce):
            time_in_force = self.time_in_force.value
        else:
            time_in_force = self.time_in_force


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "count": count,
            "min_count": min_count,
        })
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if time_in_force is not UNSET:
            field_dict["time_in_force"] = time_in_force

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        count = d.pop("count")

        min_count = d.pop("min_count")

        def _parse_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = isoparse(data)



                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))


        def _parse_time_in_force(data: object) -> None | TimeInForce | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                time_in_force_type_1 = TimeInForce(data)



                return time_in_force_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TimeInForce | Unset, data)

        time_in_force = _parse_time_in_force(d.pop("time_in_force", UNSET))


        order_type = cls(
            count=count,
            min_count=min_count,
            expires_at=expires_at,
            time_in_force=time_in_force,
        )


        order_type.additional_properties = d
        return order_type

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

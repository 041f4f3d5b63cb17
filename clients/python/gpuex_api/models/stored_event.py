from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.event_type import EventType
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.stored_event_data import StoredEventData





T = TypeVar("T", bound="StoredEvent")



@_attrs_define
class StoredEvent:
    """ An event as stored and as every channel shows it.

        Attributes:
            at (datetime.datetime):
            data (StoredEventData): What happened; its fields depend on `type` (README, "Events").
            id (int): Grows with every event; resume after it with `after` or `Last-Event-ID`.
            type_ (EventType): What an event reports.
            lease_id (None | Unset | UUID):
            order_id (None | Unset | UUID): The order it concerns (for a lease's event, the lease's order).
     """

    at: datetime.datetime
    data: StoredEventData
    id: int
    type_: EventType
    lease_id: None | Unset | UUID = UNSET
    order_id: None | Unset | UUID = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.stored_event_data import StoredEventData
        at = self.at.isoformat()

        data = self.data.to_dict()

        id = self.id

        type_ = self.type_.value

        lease_id: None | str | Unset
        if isinstance(self.lease_id, Unset):
            lease_id = UNSET
        elif isinstance(self.lease_id, UUID):
            lease_id = str(self.lease_id)
        else:
            lease_id = self.lease_id

        order_id: None | str | Unset
        if isinstance(self.order_id, Unset):
            order_id = UNSET
        elif isinstance(self.order_id, UUID):
            order_id = str(self.order_id)
        else:
            order_id = self.order_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "data": data,
            "id": id,
            "type": type_,
        })
        if lease_id is not UNSET:
            field_dict["lease_id"] = lease_id
        if order_id is not UNSET:
            field_dict["order_id"] = order_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.stored_event_data import StoredEventData
        d = dict(src_dict)
        at = isoparse(d.pop("at"))




        data = StoredEventData.from_dict(d.pop("data"))




        id = d.pop("id")

        type_ = EventType(d.pop("type"))




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


        def _parse_order_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                order_id_type_0 = UUID(data)



                return order_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        order_id = _parse_order_id(d.pop("order_id", UNSET))


        stored_event = cls(
            at=at,
            data=data,
            id=id,
            type_=type_,
            lease_id=lease_id,
            order_id=order_id,
        )


        stored_event.additional_properties = d
        return stored_event

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.delivery_state import DeliveryState
from ..models.event_type import EventType
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.attempt_view import AttemptView





T = TypeVar("T", bound="DeliveryView")



@_attrs_define
class DeliveryView:
    """ A delivery as its endpoint's owner sees it.

        Attributes:
            attempts (list[AttemptView]): Oldest first.
            created_at (datetime.datetime):
            event_id (int):
            event_type (EventType): What an event reports.
            id (int):
            state (DeliveryState): Where a delivery stands.
            next_attempt_at (datetime.datetime | None | Unset): When the next try is due, while pending.
     """

    attempts: list[AttemptView]
    created_at: datetime.datetime
    event_id: int
    event_type: EventType
    id: int
    state: DeliveryState
    next_attempt_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.attempt_view import AttemptView
        attempts = []
        for attempts_item_data in self.attempts:
            attempts_item = attempts_item_data.to_dict()
            attempts.append(attempts_item)



        created_at = self.created_at.isoformat()

        event_id = self.event_id

        event_type = self.event_type.value

        id = self.id

        state = self.state.value

        next_attempt_at: None | str | Unset
        if isinstance(self.next_attempt_at, Unset):
            next_attempt_at = UNSET
        elif isinstance(self.next_attempt_at, datetime.datetime):
            next_attempt_at = self.next_attempt_at.isoformat()
        else:
            next_attempt_at = self.next_attempt_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "attempts": attempts,
            "created_at": created_at,
            "event_id": event_id,
            "event_type": event_type,
            "id": id,
            "state": state,
        })
        if next_attempt_at is not UNSET:
            field_dict["next_attempt_at"] = next_attempt_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt_view import AttemptView
        d = dict(src_dict)
        attempts = []
        _attempts = d.pop("attempts")
        for attempts_item_data in (_attempts):
            attempts_item = AttemptView.from_dict(attempts_item_data)



            attempts.append(attempts_item)


        created_at = isoparse(d.pop("created_at"))




        event_id = d.pop("event_id")

        event_type = EventType(d.pop("event_type"))




        id = d.pop("id")

        state = DeliveryState(d.pop("state"))




        def _parse_next_attempt_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_attempt_at_type_0 = isoparse(data)



                return next_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at", UNSET))


        delivery_view = cls(
            attempts=attempts,
            created_at=created_at,
            event_id=event_id,
            event_type=event_type,
            id=id,
            state=state,
            next_attempt_at=next_attempt_at,
        )


        delivery_view.additional_properties = d
        return delivery_view

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

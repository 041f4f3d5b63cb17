from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.event_type import EventType
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="NewWebhook")



@_attrs_define
class NewWebhook:
    """ 
        Attributes:
            url (str): Where events are POSTed: http(s), resolving to public addresses only
                (unless the server allows private ones).
            events (list[EventType] | None | Unset): Only these event types; absent or `null`: all of them.
     """

    url: str
    events: list[EventType] | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        url = self.url

        events: list[str] | None | Unset
        if isinstance(self.events, Unset):
            events = UNSET
        elif isinstance(self.events, list):
            events = []
            for events_type_0_item_data in self.events:
                events_type_0_item = events_type_0_item_data.value
                events.append(events_type_0_item)


        else:
            events = self.events


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "url": url,
        })
        if events is not UNSET:
            field_dict["events"] = events

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        url = d.pop("url")

        def _parse_events(data: object) -> list[EventType] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                events_type_0 = []
                _events_type_0 = data
                for events_type_0_item_data in (_events_type_0):
                    events_type_0_item = EventType(events_type_0_item_data)



                    events_type_0.append(events_type_0_item)

                return events_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[EventType] | None | Unset, data)

        events = _parse_events(d.pop("events", UNSET))


        new_webhook = cls(
            url=url,
            events=events,
        )

        return new_webhook


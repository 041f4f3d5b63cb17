from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.stored_event import StoredEvent





T = TypeVar("T", bound="EventPage")



@_attrs_define
class EventPage:
    """ 
        Attributes:
            has_more (bool): Whether more events follow at once.
            items (list[StoredEvent]): Oldest first.
            next_after (int): Pass as `after` for the next page (the last id here, or the `after`
                given when the page is empty).
     """

    has_more: bool
    items: list[StoredEvent]
    next_after: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.stored_event import StoredEvent
        has_more = self.has_more

        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)



        next_after = self.next_after


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "has_more": has_more,
            "items": items,
            "next_after": next_after,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.stored_event import StoredEvent
        d = dict(src_dict)
        has_more = d.pop("has_more")

        items = []
        _items = d.pop("items")
        for items_item_data in (_items):
            items_item = StoredEvent.from_dict(items_item_data)



            items.append(items_item)


        next_after = d.pop("next_after")

        event_page = cls(
            has_more=has_more,
            items=items,
            next_after=next_after,
        )


        event_page.additional_properties = d
        return event_page

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

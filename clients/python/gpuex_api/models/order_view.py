from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.mode import Mode
from ..models.order_state import OrderState
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.order_view_tags import OrderViewTags
  from ..models.order_view_request import OrderViewRequest
  from ..models.resumed_from import ResumedFrom





T = TypeVar("T", bound="OrderView")



@_attrs_define
class OrderView:
    """ An order and where it stands.

        Attributes:
            attempts (list[UUID]): Every lease the order has had, oldest first: more than one when a
                lease was preempted or its node lost and the order placed again.
            created_at (datetime.datetime):
            id (UUID):
            lease_ids (list[UUID]): The leases the order holds now, oldest first: several for an order
                of `count` units. Once all have ended, those of its last fill.
            mode (Mode): How an order buys capacity.
            region (str): The region asked for (`any` lets the engine choose).
            request (OrderViewRequest): The order as placed.
            state (OrderState): Where an order stands. Rows keep the name as text; this names the values
                for the API's schema.
            tags (OrderViewTags):
            updated_at (datetime.datetime):
            client_order_id (None | str | Unset):
            lease_id (None | Unset | UUID): The order's current lease, once filled.
            reject_message (None | str | Unset):
            reject_reason (None | str | Unset): The reason code of a rejection, e.g. `no_capacity`.
            resumed_from (None | ResumedFrom | Unset):
     """

    attempts: list[UUID]
    created_at: datetime.datetime
    id: UUID
    lease_ids: list[UUID]
    mode: Mode
    region: str
    request: OrderViewRequest
    state: OrderState
    tags: OrderViewTags
    updated_at: datetime.datetime
    client_order_id: None | str | Unset = UNSET
    lease_id: None | Unset | UUID = UNSET
    reject_message: None | str | Unset = UNSET
    reject_reason: None | str | Unset = UNSET
    resumed_from: None | ResumedFrom | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.order_view_tags import OrderViewTags
        from ..models.order_view_request import OrderViewRequest
        from ..models.resumed_from import ResumedFrom
        attempts = []
        for attempts_item_data in self.attempts:
            attempts_item = str(attempts_item_data)
            attempts.append(attempts_item)



        created_at = self.created_at.isoformat()

        id = str(self.id)

        lease_ids = []
        for lease_ids_item_data in self.lease_ids:
            lease_ids_item = str(lease_ids_item_data)
            lease_ids.append(lease_ids_item)



        mode = self.mode.value

        region = self.region

        request = self.request.to_dict()

        state = self.state.value

        tags = self.tags.to_dict()

        updated_at = self.updated_at.isoformat()

        client_order_id: None | str | Unset
        if isinstance(self.client_order_id, Unset):
            client_order_id = UNSET
        else:
            client_order_id = self.client_order_id

        lease_id: None | str | Unset
        if isinstance(self.lease_id, Unset):
            lease_id = UNSET
        elif isinstance(self.lease_id, UUID):
            lease_id = str(self.lease_id)
        else:
            lease_id = self.lease_id

        reject_message: None | str | Unset
        if isinstance(self.reject_message, Unset):
            reject_message = UNSET
        else:
            reject_message = self.reject_message

        reject_reason: None | str | Unset
        if isinstance(self.reject_reason, Unset):
            reject_reason = UNSET
        else:
            reject_reason = self.reject_reason

        resumed_from: dict[str, Any] | None | Unset
        if isinstance(self.resumed_from, Unset):
            resumed_from = UNSET
        elif isinstance(self.resumed_from, ResumedFrom):
            resumed_from = self.resumed_from.to_dict()
        else:
            resumed_from = self.resumed_from


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "attempts": attempts,
            "created_at": created_at,
            "id": id,
            "lease_ids": lease_ids,
            "mode": mode,
            "region": region,
            "request": request,
            "state": state,
            "tags": tags,
            "updated_at": updated_at,
        })
        if client_order_id is not UNSET:
            field_dict["client_order_id"] = client_order_id
        if lease_id is not UNSET:
            field_dict["lease_id"] = lease_id
        if reject_message is not UNSET:
            field_dict["reject_message"] = reject_message
        if reject_reason is not UNSET:
            field_dict["reject_reason"] = reject_reason
        if resumed_from is not UNSET:
            field_dict["resumed_from"] = resumed_from

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.order_view_tags import OrderViewTags
        from ..models.order_view_request import OrderViewRequest
        from ..models.resumed_from import ResumedFrom
        d = dict(src_dict)
        attempts = []
        _attempts = d.pop("attempts")
        for attempts_item_data in (_attempts):
            attempts_item = UUID(attempts_item_data)



            attempts.append(attempts_item)


        created_at = isoparse(d.pop("created_at"))




        id = UUID(d.pop("id"))




        lease_ids = []
        _lease_ids = d.pop("lease_ids")
        for lease_ids_item_data in (_lease_ids):
            lease_ids_item = UUID(lease_ids_item_data)



            lease_ids.append(lease_ids_item)


        mode = Mode(d.pop("mode"))




        region = d.pop("region")

        request = OrderViewRequest.from_dict(d.pop("request"))




        state = OrderState(d.pop("state"))




        tags = OrderViewTags.from_dict(d.pop("tags"))




        updated_at = isoparse(d.pop("updated_at"))




        def _parse_client_order_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_order_id = _parse_client_order_id(d.pop("client_order_id", UNSET))


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


        def _parse_reject_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reject_message = _parse_reject_message(d.pop("reject_message", UNSET))


        def _parse_reject_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reject_reason = _parse_reject_reason(d.pop("reject_reason", UNSET))


        def _parse_resumed_from(data: object) -> None | ResumedFrom | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                resumed_from_type_1 = ResumedFrom.from_dict(data)



                return resumed_from_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ResumedFrom | Unset, data)

        resumed_from = _parse_resumed_from(d.pop("resumed_from", UNSET))


        order_view = cls(
            attempts=attempts,
            created_at=created_at,
            id=id,
            lease_ids=lease_ids,
            mode=mode,
            region=region,
            request=request,
            state=state,
            tags=tags,
            updated_at=updated_at,
            client_order_id=client_order_id,
            lease_id=lease_id,
            reject_message=reject_message,
            reject_reason=reject_reason,
            resumed_from=resumed_from,
        )


        order_view.additional_properties = d
        return order_view

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

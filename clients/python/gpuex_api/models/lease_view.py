from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.lease_state import LeaseState
from ..models.mode import Mode
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.conversion_view import ConversionView
  from ..models.units_view import UnitsView
  from ..models.usage_view import UsageView
  from ..models.lease_view_placement import LeaseViewPlacement





T = TypeVar("T", bound="LeaseView")



@_attrs_define
class LeaseView:
    """ A lease: a slice of one node's GPUs for a window, at a price.

        Attributes:
            conversions (list[ConversionView]): Mode conversions, oldest first (`POST /v1/leases/{id}/convert`).
            gpu_model (str):
            id (UUID):
            mode (Mode): How an order buys capacity.
            node_id (UUID):
            order_id (UUID):
            placement (LeaseViewPlacement): GPU indices with their slot: whole, MIG profile and start, or shared
                milli/memory.
            price_per_hour (str):
            region (str):
            starts_at (datetime.datetime):
            state (LeaseState): Where a lease stands (ARCHITECTURE.md §4); rows keep the name as text.
            unit_prices (UnitsView): Units a lease holds.
            units (UnitsView): Units a lease holds.
            usage (UsageView): What a lease has used and been charged so far.
            device (None | str | Unset): The device handle the agent reported (e.g. a MIG UUID).
            end_reason (None | str | Unset):
            ends_at (datetime.datetime | None | Unset):
            exit_code (int | None | Unset):
            failure (None | str | Unset): Why the agent could not run the lease (`end_reason` `agent_failed`),
                as it reported: a bad artifact hash, a failed fetch, a slice it could
                not make. At most 1,000 characters; the logs have the rest.
            image_id (None | str | Unset): The order's image by the ID the agent resolved it to when the lease
                started (`sha256:` and 64 hex digits): what ran, even after its tag
                moves. `null` for a lease without an image.
            preempt_at (datetime.datetime | None | Unset): A preempting lease ends here.
            ready_at (datetime.datetime | None | Unset): A pending lease waiting on a preemption notice starts here.
            rebalance_at (datetime.datetime | None | Unset): Spot: when the clearing index came within 10 % of this lease's
                own
                index (the `lease.rebalance` warning; a moment to convert or move).
                Cleared when the index moves away again.
            vacate_at (datetime.datetime | None | Unset): Listed for resale: the lease gives its slice up here (the
                listing's
                `from`) and its workload is stopped then, whether or not the listing
                sells (ARCHITECTURE.md §6); `ends_at` stays the end of the window it still
                owes. Set from the moment it is listed; cleared when the listing is
                cancelled and the lease runs on to `ends_at` again.
     """

    conversions: list[ConversionView]
    gpu_model: str
    id: UUID
    mode: Mode
    node_id: UUID
    order_id: UUID
    placement: LeaseViewPlacement
    price_per_hour: str
    region: str
    starts_at: datetime.datetime
    state: LeaseState
    unit_prices: UnitsView
    units: UnitsView
    usage: UsageView
    device: None | str | Unset = UNSET
    end_reason: None | str | Unset = UNSET
    ends_at: datetime.datetime | None | Unset = UNSET
    exit_code: int | None | Unset = UNSET
    failure: None | str | Unset = UNSET
    image_id: None | str | Unset = UNSET
    preempt_at: datetime.datetime | None | Unset = UNSET
    ready_at: datetime.datetime | None | Unset = UNSET
    rebalance_at: datetime.datetime | None | Unset = UNSET
    vacate_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.conversion_view import ConversionView
        from ..models.units_view import UnitsView
        from ..models.usage_view import UsageView
        from ..models.lease_view_placement import LeaseViewPlacement
        conversions = []
        for conversions_item_data in self.conversions:
            conversions_item = conversions_item_data.to_dict()
            conversions.append(conversions_item)



        gpu_model = self.gpu_model

        id = str(self.id)

        mode = self.mode.value

        node_id = str(self.node_id)

        order_id = str(self.order_id)

        placement = self.placement.to_dict()

        price_per_hour = self.price_per_hour

        region = self.region

        starts_at = self.starts_at.isoformat()

        state = self.state.value

        unit_prices = self.unit_prices.to_dict()

        units = self.units.to_dict()

        usage = self.usage.to_dict()

        device: None | str | Unset
        if isinstance(self.device, Unset):
            device = UNSET
        else:
            device = self.device

        end_reason: None | str | Unset
        if isinstance(self.end_reason, Unset):
            end_reason = UNSET
        else:
            end_reason = self.end_reason

        ends_at: None | str | Unset
        if isinstance(self.ends_at, Unset):
            ends_at = UNSET
        elif isinstance(self.ends_at, datetime.datetime):
            ends_at = self.ends_at.isoformat()
        else:
            ends_at = self.ends_at

        exit_code: int | None | Unset
        if isinstance(self.exit_code, Unset):
            exit_code = UNSET
        else:
            exit_code = self.exit_code

        failure: None | str | Unset
        if isinstance(self.failure, Unset):
            failure = UNSET
        else:
            failure = self.failure

        image_id: None | str | Unset
        if isinstance(self.image_id, Unset):
            image_id = UNSET
        else:
            image_id = self.image_id

        preempt_at: None | str | Unset
        if isinstance(self.preempt_at, Unset):
            preempt_at = UNSET
        elif isinstance(self.preempt_at, datetime.datetime):
            preempt_at = self.preempt_at.isoformat()
        else:
            preempt_at = self.preempt_at

        ready_at: None | str | Unset
        if isinstance(self.ready_at, Unset):
            ready_at = UNSET
        elif isinstance(self.ready_at, datetime.datetime):
            ready_at = self.ready_at.isoformat()
        else:
            ready_at = self.ready_at

        rebalance_at: None | str | Unset
        if isinstance(self.rebalance_at, Unset):
            rebalance_at = UNSET
        elif isinstance(self.rebalance_at, datetime.datetime):
            rebalance_at = self.rebalance_at.isoformat()
        else:
            rebalance_at = self.rebalance_at

        vacate_at: None | str | Unset
        if isinstance(self.vacate_at, Unset):
            vacate_at = UNSET
        elif isinstance(self.vacate_at, datetime.datetime):
            vacate_at = self.vacate_at.isoformat()
        else:
            vacate_at = self.vacate_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "conversions": conversions,
            "gpu_model": gpu_model,
            "id": id,
            "mode": mode,
            "node_id": node_id,
            "order_id": order_id,
            "placement": placement,
            "price_per_hour": price_per_hour,
            "region": region,
            "starts_at": starts_at,
            "state": state,
            "unit_prices": unit_prices,
            "units": units,
            "usage": usage,
        })
        if device is not UNSET:
            field_dict["device"] = device
        if end_reason is not UNSET:
            field_dict["end_reason"] = end_reason
        if ends_at is not UNSET:
            field_dict["ends_at"] = ends_at
        if exit_code is not UNSET:
            field_dict["exit_code"] = exit_code
        if failure is not UNSET:
            field_dict["failure"] = failure
        if image_id is not UNSET:
            field_dict["image_id"] = image_id
        if preempt_at is not UNSET:
            field_dict["preempt_at"] = preempt_at
        if ready_at is not UNSET:
            field_dict["ready_at"] = ready_at
        if rebalance_at is not UNSET:
            field_dict["rebalance_at"] = rebalance_at
        if vacate_at is not UNSET:
            field_dict["vacate_at"] = vacate_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.conversion_view import ConversionView
        from ..models.units_view import UnitsView
        from ..models.usage_view import UsageView
        from ..models.lease_view_placement import LeaseViewPlacement
        d = dict(src_dict)
        conversions = []
        _conversions = d.pop("conversions")
        for conversions_item_data in (_conversions):
            conversions_item = ConversionView.from_dict(conversions_item_data)



            conversions.append(conversions_item)


        gpu_model = d.pop("gpu_model")

        id = UUID(d.pop("id"))




        mode = Mode(d.pop("mode"))




        node_id = UUID(d.pop("node_id"))




        order_id = UUID(d.pop("order_id"))




        placement = LeaseViewPlacement.from_dict(d.pop("placement"))




        price_per_hour = d.pop("price_per_hour")

        region = d.pop("region")

        starts_at = isoparse(d.pop("starts_at"))




        state = LeaseState(d.pop("state"))




        unit_prices = UnitsView.from_dict(d.pop("unit_prices"))




        units = UnitsView.from_dict(d.pop("units"))




        usage = UsageView.from_dict(d.pop("usage"))




        def _parse_device(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        device = _parse_device(d.pop("device", UNSET))


        def _parse_end_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        end_reason = _parse_end_reason(d.pop("end_reason", UNSET))


        def _parse_ends_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ends_at_type_0 = isoparse(data)



                return ends_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        ends_at = _parse_ends_at(d.pop("ends_at", UNSET))


        def _parse_exit_code(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        exit_code = _parse_exit_code(d.pop("exit_code", UNSET))


        def _parse_failure(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        failure = _parse_failure(d.pop("failure", UNSET))


        def _parse_image_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image_id = _parse_image_id(d.pop("image_id", UNSET))


        def _parse_preempt_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                preempt_at_type_0 = isoparse(data)



                return preempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        preempt_at = _parse_preempt_at(d.pop("preempt_at", UNSET))


        def _parse_ready_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ready_at_type_0 = isoparse(data)



                return ready_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        ready_at = _parse_ready_at(d.pop("ready_at", UNSET))


        def _parse_rebalance_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                rebalance_at_type_0 = isoparse(data)



                return rebalance_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        rebalance_at = _parse_rebalance_at(d.pop("rebalance_at", UNSET))


        def _parse_vacate_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                vacate_at_type_0 = isoparse(data)



                return vacate_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        vacate_at = _parse_vacate_at(d.pop("vacate_at", UNSET))


        lease_view = cls(
            conversions=conversions,
            gpu_model=gpu_model,
            id=id,
            mode=mode,
            node_id=node_id,
            order_id=order_id,
            placement=placement,
            price_per_hour=price_per_hour,
            region=region,
            starts_at=starts_at,
            state=state,
            unit_prices=unit_prices,
            units=units,
            usage=usage,
            device=device,
            end_reason=end_reason,
            ends_at=ends_at,
            exit_code=exit_code,
            failure=failure,
            image_id=image_id,
            preempt_at=preempt_at,
            ready_at=ready_at,
            rebalance_at=rebalance_at,
            vacate_at=vacate_at,
        )


        lease_view.additional_properties = d
        return lease_view

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

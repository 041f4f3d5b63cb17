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
  from ..models.slice_quote_unit_prices import SliceQuoteUnitPrices
  from ..models.slice_quote_placement import SliceQuotePlacement
  from ..models.slice_quote_units import SliceQuoteUnits





T = TypeVar("T", bound="SliceQuote")



@_attrs_define
class SliceQuote:
    """ The concrete slice the order would get if placed now.

        Attributes:
            gpu_model (str):
            hold (str): Funds the order would hold.
            max_price_binds (bool): Whether the request's `max_price` is below `price_per_hour`: an order
                like it would be refused with `max_price_exceeded` (or wait, with
                `max_wait_s`). Never for spot, whose `max_price` is its bid.
            needs_preemption (bool): Whether it would first wait on a preemption notice.
            node_id (UUID):
            placement (SliceQuotePlacement): GPU indices with their slot: whole, MIG profile and start, or shared
                milli/memory.
            price_per_hour (str): What the lease would be charged per hour for the units it holds:
                exactly the fill's `price_per_hour` when nothing changes in between.
            region (str):
            source (str): `primary`, or `resale` when a listing is the cheaper source.
            total (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            unit_prices (SliceQuoteUnitPrices):
            units (SliceQuoteUnits): Units the slice holds (what is charged), and what was asked.
            listing_id (None | Unset | UUID): Resale: the listing it would take.
            primary_price_per_hour (None | str | Unset): Resale: what primary capacity would charge per hour (`null`: none
                is free).
            saving_per_hour (None | str | Unset): Resale: the primary price per hour less this one.
     """

    gpu_model: str
    hold: str
    max_price_binds: bool
    needs_preemption: bool
    node_id: UUID
    placement: SliceQuotePlacement
    price_per_hour: str
    region: str
    source: str
    total: str
    unit_prices: SliceQuoteUnitPrices
    units: SliceQuoteUnits
    listing_id: None | Unset | UUID = UNSET
    primary_price_per_hour: None | str | Unset = UNSET
    saving_per_hour: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.slice_quote_unit_prices import SliceQuoteUnitPrices
        from ..models.slice_quote_placement import SliceQuotePlacement
        from ..models.slice_quote_units import SliceQuoteUnits
        gpu_model = self.gpu_model

        hold = self.hold

        max_price_binds = self.max_price_binds

        needs_preemption = self.needs_preemption

        node_id = str(self.node_id)

        placement = self.placement.to_dict()

        price_per_hour = self.price_per_hour

        region = self.region

        source = self.source

        total = self.total

        unit_prices = self.unit_prices.to_dict()

        units = self.units.to_dict()

        listing_id: None | str | Unset
        if isinstance(self.listing_id, Unset):
            listing_id = UNSET
        elif isinstance(self.listing_id, UUID):
            listing_id = str(self.listing_id)
        else:
            listing_id = self.listing_id

        primary_price_per_hour: None | str | Unset
        if isinstance(self.primary_price_per_hour, Unset):
            primary_price_per_hour = UNSET
        else:
            primary_price_per_hour = self.primary_price_per_hour

        saving_per_hour: None | str | Unset
        if isinstance(self.saving_per_hour, Unset):
            saving_per_hour = UNSET
        else:
            saving_per_hour = self.saving_per_hour


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "gpu_model": gpu_model,
            "hold": hold,
            "max_price_binds": max_price_binds,
            "needs_preemption": needs_preemption,
            "node_id": node_id,
            "placement": placement,
            "price_per_hour": price_per_hour,
            "region": region,
            "source": source,
            "total": total,
            "unit_prices": unit_prices,
            "units": units,
        })
        if listing_id is not UNSET:
            field_dict["listing_id"] = listing_id
        if primary_price_per_hour is not UNSET:
            field_dict["primary_price_per_hour"] = primary_price_per_hour
        if saving_per_hour is not UNSET:
            field_dict["saving_per_hour"] = saving_per_hour

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.slice_quote_unit_prices import SliceQuoteUnitPrices
        from ..models.slice_quote_placement import SliceQuotePlacement
        from ..models.slice_quote_units import SliceQuoteUnits
        d = dict(src_dict)
        gpu_model = d.pop("gpu_model")

        hold = d.pop("hold")

        max_price_binds = d.pop("max_price_binds")

        needs_preemption = d.pop("needs_preemption")

        node_id = UUID(d.pop("node_id"))




        placement = SliceQuotePlacement.from_dict(d.pop("placement"))




        price_per_hour = d.pop("price_per_hour")

        region = d.pop("region")

        source = d.pop("source")

        total = d.pop("total")

        unit_prices = SliceQuoteUnitPrices.from_dict(d.pop("unit_prices"))




        units = SliceQuoteUnits.from_dict(d.pop("units"))




        def _parse_listing_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                listing_id_type_0 = UUID(data)



                return listing_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        listing_id = _parse_listing_id(d.pop("listing_id", UNSET))


        def _parse_primary_price_per_hour(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        primary_price_per_hour = _parse_primary_price_per_hour(d.pop("primary_price_per_hour", UNSET))


        def _parse_saving_per_hour(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        saving_per_hour = _parse_saving_per_hour(d.pop("saving_per_hour", UNSET))


        slice_quote = cls(
            gpu_model=gpu_model,
            hold=hold,
            max_price_binds=max_price_binds,
            needs_preemption=needs_preemption,
            node_id=node_id,
            placement=placement,
            price_per_hour=price_per_hour,
            region=region,
            source=source,
            total=total,
            unit_prices=unit_prices,
            units=units,
            listing_id=listing_id,
            primary_price_per_hour=primary_price_per_hour,
            saving_per_hour=saving_per_hour,
        )


        slice_quote.additional_properties = d
        return slice_quote

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

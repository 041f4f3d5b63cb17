from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.profile_source import ProfileSource
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.unit_prices import UnitPrices
  from ..models.load_profile import LoadProfile





T = TypeVar("T", bound="TcoAssumptions")



@_attrs_define
class TcoAssumptions:
    """ Everything the figures were computed from.

        Attributes:
            gpu_model (str):
            gpu_tflops_units (str): What one GPU of the model holds.
            gpu_vram_units (str):
            hours_per_month (int):
            mix_rule (str): How the mix was chosen, in words.
            months (int):
            node_gpus (int):
            node_price_per_hour (str):
            on_demand_factor (str):
            prices (list[UnitPrices]):
            profile (LoadProfile):
            profile_source (ProfileSource): Where the priced work came from.
            region (str):
            reserved_factor (str):
            spot_index (str): Spot price ÷ list.
            spot_index_source (str): `market_clearing` (the auction's current index) or `default_discount`.
            spot_preemption_overhead (str): Extra spot work for preemptions, as a share of it.
            utilization (str): The share of the nodes' hours doing the work, to 6 decimals.
            utilization_source (str): `given`, or `sized_to_peak` (nodes for the peak; utilization = mean ÷ capacity).
            history_from (datetime.datetime | None | Unset): The history window (sources `history` and `import`).
            history_to (datetime.datetime | None | Unset):
            import_id (None | Unset | UUID): The import priced (source `import`).
     """

    gpu_model: str
    gpu_tflops_units: str
    gpu_vram_units: str
    hours_per_month: int
    mix_rule: str
    months: int
    node_gpus: int
    node_price_per_hour: str
    on_demand_factor: str
    prices: list[UnitPrices]
    profile: LoadProfile
    profile_source: ProfileSource
    region: str
    reserved_factor: str
    spot_index: str
    spot_index_source: str
    spot_preemption_overhead: str
    utilization: str
    utilization_source: str
    history_from: datetime.datetime | None | Unset = UNSET
    history_to: datetime.datetime | None | Unset = UNSET
    import_id: None | Unset | UUID = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.unit_prices import UnitPrices
        from ..models.load_profile import LoadProfile
        gpu_model = self.gpu_model

        gpu_tflops_units = self.gpu_tflops_units

        gpu_vram_units = self.gpu_vram_units

        hours_per_month = self.hours_per_month

        mix_rule = self.mix_rule

        months = self.months

        node_gpus = self.node_gpus

        node_price_per_hour = self.node_price_per_hour

        on_demand_factor = self.on_demand_factor

        prices = []
        for prices_item_data in self.prices:
            prices_item = prices_item_data.to_dict()
            prices.append(prices_item)



        profile = self.profile.to_dict()

        profile_source = self.profile_source.value

        region = self.region

        reserved_factor = self.reserved_factor

        spot_index = self.spot_index

        spot_index_source = self.spot_index_source

        spot_preemption_overhead = self.spot_preemption_overhead

        utilization = self.utilization

        utilization_source = self.utilization_source

        history_from: None | str | Unset
        if isinstance(self.history_from, Unset):
            history_from = UNSET
        elif isinstance(self.history_from, datetime.datetime):
            history_from = self.history_from.isoformat()
        else:
            history_from = self.history_from

        history_to: None | str | Unset
        if isinstance(self.history_to, Unset):
            history_to = UNSET
        elif isinstance(self.history_to, datetime.datetime):
            history_to = self.history_to.isoformat()
        else:
            history_to = self.history_to

        import_id: None | str | Unset
        if isinstance(self.import_id, Unset):
            import_id = UNSET
        elif isinstance(self.import_id, UUID):
            import_id = str(self.import_id)
        else:
            import_id = self.import_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "gpu_model": gpu_model,
            "gpu_tflops_units": gpu_tflops_units,
            "gpu_vram_units": gpu_vram_units,
            "hours_per_month": hours_per_month,
            "mix_rule": mix_rule,
            "months": months,
            "node_gpus": node_gpus,
            "node_price_per_hour": node_price_per_hour,
            "on_demand_factor": on_demand_factor,
            "prices": prices,
            "profile": profile,
            "profile_source": profile_source,
            "region": region,
            "reserved_factor": reserved_factor,
            "spot_index": spot_index,
            "spot_index_source": spot_index_source,
            "spot_preemption_overhead": spot_preemption_overhead,
            "utilization": utilization,
            "utilization_source": utilization_source,
        })
        if history_from is not UNSET:
            field_dict["history_from"] = history_from
        if history_to is not UNSET:
            field_dict["history_to"] = history_to
        if import_id is not UNSET:
            field_dict["import_id"] = import_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.unit_prices import UnitPrices
        from ..models.load_profile import LoadProfile
        d = dict(src_dict)
        gpu_model = d.pop("gpu_model")

        gpu_tflops_units = d.pop("gpu_tflops_units")

        gpu_vram_units = d.pop("gpu_vram_units")

        hours_per_month = d.pop("hours_per_month")

        mix_rule = d.pop("mix_rule")

        months = d.pop("months")

        node_gpus = d.pop("node_gpus")

        node_price_per_hour = d.pop("node_price_per_hour")

        on_demand_factor = d.pop("on_demand_factor")

        prices = []
        _prices = d.pop("prices")
        for prices_item_data in (_prices):
            prices_item = UnitPrices.from_dict(prices_item_data)



            prices.append(prices_item)


        profile = LoadProfile.from_dict(d.pop("profile"))




        profile_source = ProfileSource(d.pop("profile_source"))




        region = d.pop("region")

        reserved_factor = d.pop("reserved_factor")

        spot_index = d.pop("spot_index")

        spot_index_source = d.pop("spot_index_source")

        spot_preemption_overhead = d.pop("spot_preemption_overhead")

        utilization = d.pop("utilization")

        utilization_source = d.pop("utilization_source")

        def _parse_history_from(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                history_from_type_0 = isoparse(data)



                return history_from_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        history_from = _parse_history_from(d.pop("history_from", UNSET))


        def _parse_history_to(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                history_to_type_0 = isoparse(data)



                return history_to_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        history_to = _parse_history_to(d.pop("history_to", UNSET))


        def _parse_import_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                import_id_type_0 = UUID(data)



                return import_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        import_id = _parse_import_id(d.pop("import_id", UNSET))


        tco_assumptions = cls(
            gpu_model=gpu_model,
            gpu_tflops_units=gpu_tflops_units,
            gpu_vram_units=gpu_vram_units,
            hours_per_month=hours_per_month,
            mix_rule=mix_rule,
            months=months,
            node_gpus=node_gpus,
            node_price_per_hour=node_price_per_hour,
            on_demand_factor=on_demand_factor,
            prices=prices,
            profile=profile,
            profile_source=profile_source,
            region=region,
            reserved_factor=reserved_factor,
            spot_index=spot_index,
            spot_index_source=spot_index_source,
            spot_preemption_overhead=spot_preemption_overhead,
            utilization=utilization,
            utilization_source=utilization_source,
            history_from=history_from,
            history_to=history_to,
            import_id=import_id,
        )


        tco_assumptions.additional_properties = d
        return tco_assumptions

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

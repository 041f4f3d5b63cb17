from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.pool_stats import PoolStats
  from ..models.market_stats_leases_by_state import MarketStatsLeasesByState





T = TypeVar("T", bound="MarketStats")



@_attrs_define
class MarketStats:
    """ The market's figures.

        Attributes:
            frag_ratio (float): FGD's fragmentation: free capacity the demand mix cannot use, 0–1.
            internal_waste_milli (int): Compute held beyond what was asked (MIG profiles, whole GPUs), milli-GPU.
            leases_by_state (MarketStatsLeasesByState):
            open_orders (int):
            pools (list[PoolStats]):
            utilization (float): allocated / total compute over every pool, in percent.
     """

    frag_ratio: float
    internal_waste_milli: int
    leases_by_state: MarketStatsLeasesByState
    open_orders: int
    pools: list[PoolStats]
    utilization: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.pool_stats import PoolStats
        from ..models.market_stats_leases_by_state import MarketStatsLeasesByState
        frag_ratio = self.frag_ratio

        internal_waste_milli = self.internal_waste_milli

        leases_by_state = self.leases_by_state.to_dict()

        open_orders = self.open_orders

        pools = []
        for pools_item_data in self.pools:
            pools_item = pools_item_data.to_dict()
            pools.append(pools_item)



        utilization = self.utilization


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "frag_ratio": frag_ratio,
            "internal_waste_milli": internal_waste_milli,
            "leases_by_state": leases_by_state,
            "open_orders": open_orders,
            "pools": pools,
            "utilization": utilization,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.pool_stats import PoolStats
        from ..models.market_stats_leases_by_state import MarketStatsLeasesByState
        d = dict(src_dict)
        frag_ratio = d.pop("frag_ratio")

        internal_waste_milli = d.pop("internal_waste_milli")

        leases_by_state = MarketStatsLeasesByState.from_dict(d.pop("leases_by_state"))




        open_orders = d.pop("open_orders")

        pools = []
        _pools = d.pop("pools")
        for pools_item_data in (_pools):
            pools_item = PoolStats.from_dict(pools_item_data)



            pools.append(pools_item)


        utilization = d.pop("utilization")

        market_stats = cls(
            frag_ratio=frag_ratio,
            internal_waste_milli=internal_waste_milli,
            leases_by_state=leases_by_state,
            open_orders=open_orders,
            pools=pools,
            utilization=utilization,
        )


        market_stats.additional_properties = d
        return market_stats

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

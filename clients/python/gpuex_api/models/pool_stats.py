from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="PoolStats")



@_attrs_define
class PoolStats:
    """ Capacity of one (GPU model, region).

        Attributes:
            allocated_milli (int):
            gpu_model (str):
            gpus (int):
            idle_gpus (int): GPUs with nothing on them.
            region (str):
            total_milli (int): Compute, in milli-GPU (1000 per GPU).
            utilization (float): allocated / total, in percent.
            clearing_index (None | str | Unset): The spot auction's last clearing index (× list), if it has cleared.
     """

    allocated_milli: int
    gpu_model: str
    gpus: int
    idle_gpus: int
    region: str
    total_milli: int
    utilization: float
    clearing_index: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        allocated_milli = self.allocated_milli

        gpu_model = self.gpu_model

        gpus = self.gpus

        idle_gpus = self.idle_gpus

        region = self.region

        total_milli = self.total_milli

        utilization = self.utilization

        clearing_index: None | str | Unset
        if isinstance(self.clearing_index, Unset):
            clearing_index = UNSET
        else:
            clearing_index = self.clearing_index


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "allocated_milli": allocated_milli,
            "gpu_model": gpu_model,
            "gpus": gpus,
            "idle_gpus": idle_gpus,
            "region": region,
            "total_milli": total_milli,
            "utilization": utilization,
        })
        if clearing_index is not UNSET:
            field_dict["clearing_index"] = clearing_index

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        allocated_milli = d.pop("allocated_milli")

        gpu_model = d.pop("gpu_model")

        gpus = d.pop("gpus")

        idle_gpus = d.pop("idle_gpus")

        region = d.pop("region")

        total_milli = d.pop("total_milli")

        utilization = d.pop("utilization")

        def _parse_clearing_index(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        clearing_index = _parse_clearing_index(d.pop("clearing_index", UNSET))


        pool_stats = cls(
            allocated_milli=allocated_milli,
            gpu_model=gpu_model,
            gpus=gpus,
            idle_gpus=idle_gpus,
            region=region,
            total_milli=total_milli,
            utilization=utilization,
            clearing_index=clearing_index,
        )


        pool_stats.additional_properties = d
        return pool_stats

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

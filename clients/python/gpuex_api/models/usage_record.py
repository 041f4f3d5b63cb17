from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="UsageRecord")



@_attrs_define
class UsageRecord:
    """ What one lease consumed over one interval (FOCUS ConsumedQuantity).

        Attributes:
            interval_end (datetime.datetime):
            interval_start (datetime.datetime):
            lease_id (UUID):
            tflops_s (float | str): A decimal: a string (`"12.50"`, exact) or a number.
            vram_gb_s (float | str): A decimal: a string (`"12.50"`, exact) or a number.
            mean_utilization (float | None | str | Unset):
            peak_memory_mb (int | None | Unset): The most memory the lease's workload held during the interval, MB
                (10⁶ bytes): on real GPUs the GPU memory of its processes, on the
                simulated backend its host memory (which stands in for it). `None`
                when the agent could not see it, or predates it.
     """

    interval_end: datetime.datetime
    interval_start: datetime.datetime
    lease_id: UUID
    tflops_s: float | str
    vram_gb_s: float | str
    mean_utilization: float | None | str | Unset = UNSET
    peak_memory_mb: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        interval_end = self.interval_end.isoformat()

        interval_start = self.interval_start.isoformat()

        lease_id = str(self.lease_id)

        tflops_s: float | str
        tflops_s = self.tflops_s

        vram_gb_s: float | str
        vram_gb_s = self.vram_gb_s

        mean_utilization: float | None | str | Unset
        if isinstance(self.mean_utilization, Unset):
            mean_utilization = UNSET
        else:
            mean_utilization = self.mean_utilization

        peak_memory_mb: int | None | Unset
        if isinstance(self.peak_memory_mb, Unset):
            peak_memory_mb = UNSET
        else:
            peak_memory_mb = self.peak_memory_mb


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "interval_end": interval_end,
            "interval_start": interval_start,
            "lease_id": lease_id,
            "tflops_s": tflops_s,
            "vram_gb_s": vram_gb_s,
        })
        if mean_utilization is not UNSET:
            field_dict["mean_utilization"] = mean_utilization
        if peak_memory_mb is not UNSET:
            field_dict["peak_memory_mb"] = peak_memory_mb

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        interval_end = isoparse(d.pop("interval_end"))




        interval_start = isoparse(d.pop("interval_start"))




        lease_id = UUID(d.pop("lease_id"))




        def _parse_tflops_s(data: object) -> float | str:
            return cast(float | str, data)

        tflops_s = _parse_tflops_s(d.pop("tflops_s"))


        def _parse_vram_gb_s(data: object) -> float | str:
            return cast(float | str, data)

        vram_gb_s = _parse_vram_gb_s(d.pop("vram_gb_s"))


        def _parse_mean_utilization(data: object) -> float | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | str | Unset, data)

        mean_utilization = _parse_mean_utilization(d.pop("mean_utilization", UNSET))


        def _parse_peak_memory_mb(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        peak_memory_mb = _parse_peak_memory_mb(d.pop("peak_memory_mb", UNSET))


        usage_record = cls(
            interval_end=interval_end,
            interval_start=interval_start,
            lease_id=lease_id,
            tflops_s=tflops_s,
            vram_gb_s=vram_gb_s,
            mean_utilization=mean_utilization,
            peak_memory_mb=peak_memory_mb,
        )


        usage_record.additional_properties = d
        return usage_record

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

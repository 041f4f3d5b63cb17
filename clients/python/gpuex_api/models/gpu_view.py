from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.gpu_mode import GpuMode
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.gpu_view_metrics_type_0 import GpuViewMetricsType0
  from ..models.slice_view import SliceView





T = TypeVar("T", bound="GpuView")



@_attrs_define
class GpuView:
    """ One GPU: how it is sold, what its agent reported, and who holds which slice.

        Attributes:
            held_milli (int): Milli-GPU of compute held by live leases (1000 = the whole GPU).
            index (int):
            mode (GpuMode): How a GPU is sold, and how a slice of it is cut.
            model (str):
            nvlink (list[int]):
            slices (list[SliceView]):
            driver_version (None | str | Unset):
            memory_mib (int | None | Unset):
            metrics (GpuViewMetricsType0 | None | Unset): The latest heartbeat's sample: DCGM fields, MIG instances,
                processes.
            uuid (None | str | Unset):
     """

    held_milli: int
    index: int
    mode: GpuMode
    model: str
    nvlink: list[int]
    slices: list[SliceView]
    driver_version: None | str | Unset = UNSET
    memory_mib: int | None | Unset = UNSET
    metrics: GpuViewMetricsType0 | None | Unset = UNSET
    uuid: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.gpu_view_metrics_type_0 import GpuViewMetricsType0
        from ..models.slice_view import SliceView
        held_milli = self.held_milli

        index = self.index

        mode = self.mode.value

        model = self.model

        nvlink = self.nvlink



        slices = []
        for slices_item_data in self.slices:
            slices_item = slices_item_data.to_dict()
            slices.append(slices_item)



        driver_version: None | str | Unset
        if isinstance(self.driver_version, Unset):
            driver_version = UNSET
        else:
            driver_version = self.driver_version

        memory_mib: int | None | Unset
        if isinstance(self.memory_mib, Unset):
            memory_mib = UNSET
        else:
            memory_mib = self.memory_mib

        metrics: dict[str, Any] | None | Unset
        if isinstance(self.metrics, Unset):
            metrics = UNSET
        elif isinstance(self.metrics, GpuViewMetricsType0):
            metrics = self.metrics.to_dict()
        else:
            metrics = self.metrics

        uuid: None | str | Unset
        if isinstance(self.uuid, Unset):
            uuid = UNSET
        else:
            uuid = self.uuid


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "held_milli": held_milli,
            "index": index,
            "mode": mode,
            "model": model,
            "nvlink": nvlink,
            "slices": slices,
        })
        if driver_version is not UNSET:
            field_dict["driver_version"] = driver_version
        if memory_mib is not UNSET:
            field_dict["memory_mib"] = memory_mib
        if metrics is not UNSET:
            field_dict["metrics"] = metrics
        if uuid is not UNSET:
            field_dict["uuid"] = uuid

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.gpu_view_metrics_type_0 import GpuViewMetricsType0
        from ..models.slice_view import SliceView
        d = dict(src_dict)
        held_milli = d.pop("held_milli")

        index = d.pop("index")

        mode = GpuMode(d.pop("mode"))




        model = d.pop("model")

        nvlink = cast(list[int], d.pop("nvlink"))


        slices = []
        _slices = d.pop("slices")
        for slices_item_data in (_slices):
            slices_item = SliceView.from_dict(slices_item_data)



            slices.append(slices_item)


        def _parse_driver_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        driver_version = _parse_driver_version(d.pop("driver_version", UNSET))


        def _parse_memory_mib(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        memory_mib = _parse_memory_mib(d.pop("memory_mib", UNSET))


        def _parse_metrics(data: object) -> GpuViewMetricsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                metrics_type_0 = GpuViewMetricsType0.from_dict(data)



                return metrics_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(GpuViewMetricsType0 | None | Unset, data)

        metrics = _parse_metrics(d.pop("metrics", UNSET))


        def _parse_uuid(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        uuid = _parse_uuid(d.pop("uuid", UNSET))


        gpu_view = cls(
            held_milli=held_milli,
            index=index,
            mode=mode,
            model=model,
            nvlink=nvlink,
            slices=slices,
            driver_version=driver_version,
            memory_mib=memory_mib,
            metrics=metrics,
            uuid=uuid,
        )


        gpu_view.additional_properties = d
        return gpu_view

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

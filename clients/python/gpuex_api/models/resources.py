from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.isolation import Isolation
from ..models.precision import Precision
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.tflops_type_0 import TflopsType0





T = TypeVar("T", bound="Resources")



@_attrs_define
class Resources:
    """ What an order asks for (ARCHITECTURE.md §4).

        Attributes:
            tflops (float | TflopsType0): A decimal: above 0 and below 100000, with at most 3 decimals.
            vram_gb (int): Total GPU memory in GB, a multiple of 4.
            cpu_milli (int | None | Unset): Host CPU in milli-cores (default: the share matching the GPU share).
            gpu_model (None | str | Unset): Restrict to one catalog model.
            gpus (int | None | Unset): Number of GPUs (1–8, default 1); more than one takes whole GPUs of one node.
            interconnect (None | str | Unset): `nvlink` to require NVLink between the GPUs.
            isolation (Isolation | None | Unset):
            memory_mib (int | None | Unset): Host memory in MiB (default: the share matching the GPU share).
            min_cuda (None | str | Unset): Only nodes whose driver supports at least this CUDA version, e.g. `12.2`
                (compared as numbers: `12.10` is above `12.4`).
            precision (None | Precision | Unset):
     """

    tflops: float | TflopsType0
    vram_gb: int
    cpu_milli: int | None | Unset = UNSET
    gpu_model: None | str | Unset = UNSET
    gpus: int | None | Unset = UNSET
    interconnect: None | str | Unset = UNSET
    isolation: Isolation | None | Unset = UNSET
    memory_mib: int | None | Unset = UNSET
    min_cuda: None | str | Unset = UNSET
    precision: None | Precision | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.tflops_type_0 import TflopsType0
        tflops: dict[str, Any] | float
        if isinstance(self.tflops, TflopsType0):
            tflops = self.tflops.to_dict()
        else:
            tflops = self.tflops

        vram_gb = self.vram_gb

        cpu_milli: int | None | Unset
        if isinstance(self.cpu_milli, Unset):
            cpu_milli = UNSET
        else:
            cpu_milli = self.cpu_milli

        gpu_model: None | str | Unset
        if isinstance(self.gpu_model, Unset):
            gpu_model = UNSET
        else:
            gpu_model = self.gpu_model

        gpus: int | None | Unset
        if isinstance(self.gpus, Unset):
            gpus = UNSET
        else:
            gpus = self.gpus

        interconnect: None | str | Unset
        if isinstance(self.interconnect, Unset):
            interconnect = UNSET
        else:
            interconnect = self.interconnect

        isolation: None | str | Unset
        if isinstance(self.isolation, Unset):
            isolation = UNSET
        elif isinstance(self.isolation, Isolation):
            isolation = self.isolation.value
        else:
            isolation = self.isolation

        memory_mib: int | None | Unset
        if isinstance(self.memory_mib, Unset):
            memory_mib = UNSET
        else:
            memory_mib = self.memory_mib

        min_cuda: None | str | Unset
        if isinstance(self.min_cuda, Unset):
            min_cuda = UNSET
        else:
            min_cuda = self.min_cuda

        precision: None | str | Unset
        if isinstance(self.precision, Unset):
            precision = UNSET
        elif isinstance(self.precision, Precision):
            precision = self.precision.value
        else:
            precision = self.precision


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "tflops": tflops,
            "vram_gb": vram_gb,
        })
        if cpu_milli is not UNSET:
            field_dict["cpu_milli"] = cpu_milli
        if gpu_model is not UNSET:
            field_dict["gpu_model"] = gpu_model
        if gpus is not UNSET:
            field_dict["gpus"] = gpus
        if interconnect is not UNSET:
            field_dict["interconnect"] = interconnect
        if isolation is not UNSET:
            field_dict["isolation"] = isolation
        if memory_mib is not UNSET:
            field_dict["memory_mib"] = memory_mib
        if min_cuda is not UNSET:
            field_dict["min_cuda"] = min_cuda
        if precision is not UNSET:
            field_dict["precision"] = precision

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tflops_type_0 import TflopsType0
        d = dict(src_dict)
        def _parse_tflops(data: object) -> float | TflopsType0:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_tflops_type_0 = TflopsType0.from_dict(data)



                return componentsschemas_tflops_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(float | TflopsType0, data)

        tflops = _parse_tflops(d.pop("tflops"))


        vram_gb = d.pop("vram_gb")

        def _parse_cpu_milli(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        cpu_milli = _parse_cpu_milli(d.pop("cpu_milli", UNSET))


        def _parse_gpu_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        gpu_model = _parse_gpu_model(d.pop("gpu_model", UNSET))


        def _parse_gpus(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        gpus = _parse_gpus(d.pop("gpus", UNSET))


        def _parse_interconnect(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        interconnect = _parse_interconnect(d.pop("interconnect", UNSET))


        def _parse_isolation(data: object) -> Isolation | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                isolation_type_1 = Isolation(data)



                return isolation_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Isolation | None | Unset, data)

        isolation = _parse_isolation(d.pop("isolation", UNSET))


        def _parse_memory_mib(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        memory_mib = _parse_memory_mib(d.pop("memory_mib", UNSET))


        def _parse_min_cuda(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        min_cuda = _parse_min_cuda(d.pop("min_cuda", UNSET))


        def _parse_precision(data: object) -> None | Precision | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                precision_type_1 = Precision(data)



                return precision_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Precision | Unset, data)

        precision = _parse_precision(d.pop("precision", UNSET))


        resources = cls(
            tflops=tflops,
            vram_gb=vram_gb,
            cpu_milli=cpu_milli,
            gpu_model=gpu_model,
            gpus=gpus,
            interconnect=interconnect,
            isolation=isolation,
            memory_mib=memory_mib,
            min_cuda=min_cuda,
            precision=precision,
        )

        return resources


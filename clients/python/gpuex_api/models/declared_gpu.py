from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.gpu_mode import GpuMode
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="DeclaredGpu")



@_attrs_define
class DeclaredGpu:
    """ One GPU a provider declares before its agent registers.

        Attributes:
            model (str): Catalog model name, e.g. `H100-SXM5-80GB`.
            index (int | None | Unset): Index on the node (default: its position in the list).
            memory_mib (int | None | Unset): GPU memory in MiB; must not exceed the model's.
            mig_capable (bool | None | Unset): Whether the GPU can run MIG (default: whether the model can).
            mode (GpuMode | None | Unset):
            nvlink (list[int] | Unset): Indices of the GPUs joined to this one by NVLink.
     """

    model: str
    index: int | None | Unset = UNSET
    memory_mib: int | None | Unset = UNSET
    mig_capable: bool | None | Unset = UNSET
    mode: GpuMode | None | Unset = UNSET
    nvlink: list[int] | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        model = self.model

        index: int | None | Unset
        if isinstance(self.index, Unset):
            index = UNSET
        else:
            index = self.index

        memory_mib: int | None | Unset
        if isinstance(self.memory_mib, Unset):
            memory_mib = UNSET
        else:
            memory_mib = self.memory_mib

        mig_capable: bool | None | Unset
        if isinstance(self.mig_capable, Unset):
            mig_capable = UNSET
        else:
            mig_capable = self.mig_capable

        mode: None | str | Unset
        if isinstance(self.mode, Unset):
            mode = UNSET
        elif isinstance(self.mode, GpuMode):
            mode = self.mode.value
        else:
            mode = self.mode

        nvlink: list[int] | Unset = UNSET
        if not isinstance(self.nvlink, Unset):
            nvlink = self.nvlink




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "model": model,
        })
        if index is not UNSET:
            field_dict["index"] = index
        if memory_mib is not UNSET:
            field_dict["memory_mib"] = memory_mib
        if mig_capable is not UNSET:
            field_dict["mig_capable"] = mig_capable
        if mode is not UNSET:
            field_dict["mode"] = mode
        if nvlink is not UNSET:
            field_dict["nvlink"] = nvlink

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        model = d.pop("model")

        def _parse_index(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        index = _parse_index(d.pop("index", UNSET))


        def _parse_memory_mib(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        memory_mib = _parse_memory_mib(d.pop("memory_mib", UNSET))


        def _parse_mig_capable(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        mig_capable = _parse_mig_capable(d.pop("mig_capable", UNSET))


        def _parse_mode(data: object) -> GpuMode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                mode_type_1 = GpuMode(data)



                return mode_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(GpuMode | None | Unset, data)

        mode = _parse_mode(d.pop("mode", UNSET))


        nvlink = cast(list[int], d.pop("nvlink", UNSET))


        declared_gpu = cls(
            model=model,
            index=index,
            memory_mib=memory_mib,
            mig_capable=mig_capable,
            mode=mode,
            nvlink=nvlink,
        )

        return declared_gpu


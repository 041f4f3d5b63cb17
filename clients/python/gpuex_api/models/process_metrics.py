from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
from uuid import UUID






T = TypeVar("T", bound="ProcessMetrics")



@_attrs_define
class ProcessMetrics:
    """ One compute process on a GPU.

        Attributes:
            pid (int):
            gpu_instance_id (int | None | Unset): The MIG GPU instance it runs in.
            lease_id (None | Unset | UUID): The lease whose workload this process belongs to, when the agent knows.
            sm_util (float | None | Unset): SM utilization of the process, percent.
            used_memory_mib (float | None | Unset): GPU memory the process uses, MiB.
     """

    pid: int
    gpu_instance_id: int | None | Unset = UNSET
    lease_id: None | Unset | UUID = UNSET
    sm_util: float | None | Unset = UNSET
    used_memory_mib: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        pid = self.pid

        gpu_instance_id: int | None | Unset
        if isinstance(self.gpu_instance_id, Unset):
            gpu_instance_id = UNSET
        else:
            gpu_instance_id = self.gpu_instance_id

        lease_id: None | str | Unset
        if isinstance(self.lease_id, Unset):
            lease_id = UNSET
        elif isinstance(self.lease_id, UUID):
            lease_id = str(self.lease_id)
        else:
            lease_id = self.lease_id

        sm_util: float | None | Unset
        if isinstance(self.sm_util, Unset):
            sm_util = UNSET
        else:
            sm_util = self.sm_util

        used_memory_mib: float | None | Unset
        if isinstance(self.used_memory_mib, Unset):
            used_memory_mib = UNSET
        else:
            used_memory_mib = self.used_memory_mib


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "pid": pid,
        })
        if gpu_instance_id is not UNSET:
            field_dict["gpu_instance_id"] = gpu_instance_id
        if lease_id is not UNSET:
            field_dict["lease_id"] = lease_id
        if sm_util is not UNSET:
            field_dict["sm_util"] = sm_util
        if used_memory_mib is not UNSET:
            field_dict["used_memory_mib"] = used_memory_mib

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        pid = d.pop("pid")

        def _parse_gpu_instance_id(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        gpu_instance_id = _parse_gpu_instance_id(d.pop("gpu_instance_id", UNSET))


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


        def _parse_sm_util(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        sm_util = _parse_sm_util(d.pop("sm_util", UNSET))


        def _parse_used_memory_mib(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        used_memory_mib = _parse_used_memory_mib(d.pop("used_memory_mib", UNSET))


        process_metrics = cls(
            pid=pid,
            gpu_instance_id=gpu_instance_id,
            lease_id=lease_id,
            sm_util=sm_util,
            used_memory_mib=used_memory_mib,
        )


        process_metrics.additional_properties = d
        return process_metrics

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

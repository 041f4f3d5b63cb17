from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.gpu_mode import GpuMode
from ..models.lease_state import LeaseState
from ..types import UNSET, Unset
from typing import cast
from uuid import UUID






T = TypeVar("T", bound="SliceView")



@_attrs_define
class SliceView:
    """ A slice of a GPU and the lease holding it.

        Attributes:
            kind (GpuMode): How a GPU is sold, and how a slice of it is cut.
            lease_id (UUID):
            milli (int): Compute held, milli-GPU.
            state (LeaseState): Where a lease stands (ARCHITECTURE.md §4); rows keep the name as text.
            device (None | str | Unset): What the workload sees as `CUDA_VISIBLE_DEVICES`, once provisioned.
            memory_mb (int | None | Unset): Shared slices: GPU memory held, MB.
            profile (None | str | Unset): MIG profile and first memory slice.
            start (int | None | Unset):
     """

    kind: GpuMode
    lease_id: UUID
    milli: int
    state: LeaseState
    device: None | str | Unset = UNSET
    memory_mb: int | None | Unset = UNSET
    profile: None | str | Unset = UNSET
    start: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        lease_id = str(self.lease_id)

        milli = self.milli

        state = self.state.value

        device: None | str | Unset
        if isinstance(self.device, Unset):
            device = UNSET
        else:
            device = self.device

        memory_mb: int | None | Unset
        if isinstance(self.memory_mb, Unset):
            memory_mb = UNSET
        else:
            memory_mb = self.memory_mb

        profile: None | str | Unset
        if isinstance(self.profile, Unset):
            profile = UNSET
        else:
            profile = self.profile

        start: int | None | Unset
        if isinstance(self.start, Unset):
            start = UNSET
        else:
            start = self.start


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "kind": kind,
            "lease_id": lease_id,
            "milli": milli,
            "state": state,
        })
        if device is not UNSET:
            field_dict["device"] = device
        if memory_mb is not UNSET:
            field_dict["memory_mb"] = memory_mb
        if profile is not UNSET:
            field_dict["profile"] = profile
        if start is not UNSET:
            field_dict["start"] = start

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = GpuMode(d.pop("kind"))




        lease_id = UUID(d.pop("lease_id"))




        milli = d.pop("milli")

        state = LeaseState(d.pop("state"))




        def _parse_device(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        device = _parse_device(d.pop("device", UNSET))


        def _parse_memory_mb(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        memory_mb = _parse_memory_mb(d.pop("memory_mb", UNSET))


        def _parse_profile(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        profile = _parse_profile(d.pop("profile", UNSET))


        def _parse_start(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        start = _parse_start(d.pop("start", UNSET))


        slice_view = cls(
            kind=kind,
            lease_id=lease_id,
            milli=milli,
            state=state,
            device=device,
            memory_mb=memory_mb,
            profile=profile,
            start=start,
        )


        slice_view.additional_properties = d
        return slice_view

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="MigInstanceMetrics")



@_attrs_define
class MigInstanceMetrics:
    """ One MIG instance's sample.

        Attributes:
            uuid (str): `MIG-…` UUID.
            fb_free_mib (float | None | Unset): `DCGM_FI_DEV_FB_FREE` of the instance, MiB.
            fb_used_mib (float | None | Unset): `DCGM_FI_DEV_FB_USED` of the instance, MiB.
            gpu_instance_id (int | None | Unset):
            gr_engine_active (float | None | Unset): `DCGM_FI_PROF_GR_ENGINE_ACTIVE`: the ratio (0–1) of time the graphics
                engine of the instance was active, where measurable (DCGM profiling).
            profile (None | str | Unset): Catalog profile name, when the backend knows it.
            start (int | None | Unset): First memory slice, when the backend knows it.
     """

    uuid: str
    fb_free_mib: float | None | Unset = UNSET
    fb_used_mib: float | None | Unset = UNSET
    gpu_instance_id: int | None | Unset = UNSET
    gr_engine_active: float | None | Unset = UNSET
    profile: None | str | Unset = UNSET
    start: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        uuid = self.uuid

        fb_free_mib: float | None | Unset
        if isinstance(self.fb_free_mib, Unset):
            fb_free_mib = UNSET
        else:
            fb_free_mib = self.fb_free_mib

        fb_used_mib: float | None | Unset
        if isinstance(self.fb_used_mib, Unset):
            fb_used_mib = UNSET
        else:
            fb_used_mib = self.fb_used_mib

        gpu_instance_id: int | None | Unset
        if isinstance(self.gpu_instance_id, Unset):
            gpu_instance_id = UNSET
        else:
            gpu_instance_id = self.gpu_instance_id

        gr_engine_active: float | None | Unset
        if isinstance(self.gr_engine_active, Unset):
            gr_engine_active = UNSET
        else:
            gr_engine_active = self.gr_engine_active

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
            "uuid": uuid,
        })
        if fb_free_mib is not UNSET:
            field_dict["fb_free_mib"] = fb_free_mib
        if fb_used_mib is not UNSET:
            field_dict["fb_used_mib"] = fb_used_mib
        if gpu_instance_id is not UNSET:
            field_dict["gpu_instance_id"] = gpu_instance_id
        if gr_engine_active is not UNSET:
            field_dict["gr_engine_active"] = gr_engine_active
        if profile is not UNSET:
            field_dict["profile"] = profile
        if start is not UNSET:
            field_dict["start"] = start

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        uuid = d.pop("uuid")

        def _parse_fb_free_mib(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        fb_free_mib = _parse_fb_free_mib(d.pop("fb_free_mib", UNSET))


        def _parse_fb_used_mib(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        fb_used_mib = _parse_fb_used_mib(d.pop("fb_used_mib", UNSET))


        def _parse_gpu_instance_id(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        gpu_instance_id = _parse_gpu_instance_id(d.pop("gpu_instance_id", UNSET))


        def _parse_gr_engine_active(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        gr_engine_active = _parse_gr_engine_active(d.pop("gr_engine_active", UNSET))


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


        mig_instance_metrics = cls(
            uuid=uuid,
            fb_free_mib=fb_free_mib,
            fb_used_mib=fb_used_mib,
            gpu_instance_id=gpu_instance_id,
            gr_engine_active=gr_engine_active,
            profile=profile,
            start=start,
        )


        mig_instance_metrics.additional_properties = d
        return mig_instance_metrics

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

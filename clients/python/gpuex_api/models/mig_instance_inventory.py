from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="MigInstanceInventory")



@_attrs_define
class MigInstanceInventory:
    """ One MIG GPU instance that exists on a GPU.

        Attributes:
            uuid (str): `MIG-…` UUID of its compute instance, the handle CUDA accepts.
            gpu_instance_id (int | None | Unset): NVML GPU-instance id.
            profile (None | str | Unset): Catalog profile name, e.g. `1g.10gb`, when the backend knows it.
            start (int | None | Unset): First memory slice of the placement, when the backend knows it.
     """

    uuid: str
    gpu_instance_id: int | None | Unset = UNSET
    profile: None | str | Unset = UNSET
    start: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        uuid = self.uuid

        gpu_instance_id: int | None | Unset
        if isinstance(self.gpu_instance_id, Unset):
            gpu_instance_id = UNSET
        else:
            gpu_instance_id = self.gpu_instance_id

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
        if gpu_instance_id is not UNSET:
            field_dict["gpu_instance_id"] = gpu_instance_id
        if profile is not UNSET:
            field_dict["profile"] = profile
        if start is not UNSET:
            field_dict["start"] = start

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        uuid = d.pop("uuid")

        def _parse_gpu_instance_id(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        gpu_instance_id = _parse_gpu_instance_id(d.pop("gpu_instance_id", UNSET))


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


        mig_instance_inventory = cls(
            uuid=uuid,
            gpu_instance_id=gpu_instance_id,
            profile=profile,
            start=start,
        )


        mig_instance_inventory.additional_properties = d
        return mig_instance_inventory

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="CheckpointPlan")



@_attrs_define
class CheckpointPlan:
    """ A lease's checkpoint (ARCHITECTURE.md §21): the agent sends its `checkpoint/`
    folder to `PUT /v1/agent/assignments/{lease_id}/checkpoint` every
    `every_s` and after the workload ends, and, with `restore`, puts the
    order's last checkpoint there before the workload starts
    (`GET` of the same path; 404: none yet).

        Attributes:
            every_s (int): Seconds between uploads.
            path (str): Where a container sees the folder (`/checkpoint` by default); the
                other launchers tell the workload in `$GPUEX_CHECKPOINT`.
            restore (bool): Whether the order's last checkpoint is put in place before the start.
     """

    every_s: int
    path: str
    restore: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        every_s = self.every_s

        path = self.path

        restore = self.restore


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "every_s": every_s,
            "path": path,
            "restore": restore,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        every_s = d.pop("every_s")

        path = d.pop("path")

        restore = d.pop("restore")

        checkpoint_plan = cls(
            every_s=every_s,
            path=path,
            restore=restore,
        )


        checkpoint_plan.additional_properties = d
        return checkpoint_plan

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

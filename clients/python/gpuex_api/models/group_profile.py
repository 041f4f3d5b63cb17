from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.held_utilization import HeldUtilization
  from ..models.lease_durations import LeaseDurations
  from ..models.concurrency import Concurrency





T = TypeVar("T", bound="GroupProfile")



@_attrs_define
class GroupProfile:
    """ The profile of one group (or of everything, in `total`).

        Attributes:
            durations (LeaseDurations): How long leases ran in the window, in seconds (nearest-rank percentiles).
                A lease cut by the window's edges counts the part inside it.
            key (str): A mode, a GPU model, `KEY=VALUE` of a tag, `(untagged)`, or `all`.
            tflops_units (Concurrency): How many units of one kind were held at once. Means are over the elapsed
                part of the window (`elapsed_s`), idle time included.
            utilization (HeldUtilization): What was used of what was held, from the agents' usage reports.
            vram_units (Concurrency): How many units of one kind were held at once. Means are over the elapsed
                part of the window (`elapsed_s`), idle time included.
     """

    durations: LeaseDurations
    key: str
    tflops_units: Concurrency
    utilization: HeldUtilization
    vram_units: Concurrency
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.held_utilization import HeldUtilization
        from ..models.lease_durations import LeaseDurations
        from ..models.concurrency import Concurrency
        durations = self.durations.to_dict()

        key = self.key

        tflops_units = self.tflops_units.to_dict()

        utilization = self.utilization.to_dict()

        vram_units = self.vram_units.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "durations": durations,
            "key": key,
            "tflops_units": tflops_units,
            "utilization": utilization,
            "vram_units": vram_units,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.held_utilization import HeldUtilization
        from ..models.lease_durations import LeaseDurations
        from ..models.concurrency import Concurrency
        d = dict(src_dict)
        durations = LeaseDurations.from_dict(d.pop("durations"))




        key = d.pop("key")

        tflops_units = Concurrency.from_dict(d.pop("tflops_units"))




        utilization = HeldUtilization.from_dict(d.pop("utilization"))




        vram_units = Concurrency.from_dict(d.pop("vram_units"))




        group_profile = cls(
            durations=durations,
            key=key,
            tflops_units=tflops_units,
            utilization=utilization,
            vram_units=vram_units,
        )


        group_profile.additional_properties = d
        return group_profile

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

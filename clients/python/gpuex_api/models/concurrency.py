from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Concurrency")



@_attrs_define
class Concurrency:
    """ How many units of one kind were held at once. Means are over the elapsed
    part of the window (`elapsed_s`), idle time included.

        Attributes:
            baseline (str): The highest level held for at least half of the elapsed time: what a
                reservation would keep busy at least half the time. Example: 100.
            mean (str): Unit-seconds held ÷ elapsed seconds, to 6 decimals. Example: 150.5.
            mean_above_baseline (str): The mean of what was held above `baseline` (0 when below it), to 6
                decimals: the work a reservation at `baseline` leaves to other modes. Example: 60.5.
            peak (str): The most held at any second. Example: 400.
            unit_hours (str): Unit-hours held, to 6 decimals. Example: 3612.
     """

    baseline: str
    mean: str
    mean_above_baseline: str
    peak: str
    unit_hours: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        baseline = self.baseline

        mean = self.mean

        mean_above_baseline = self.mean_above_baseline

        peak = self.peak

        unit_hours = self.unit_hours


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "baseline": baseline,
            "mean": mean,
            "mean_above_baseline": mean_above_baseline,
            "peak": peak,
            "unit_hours": unit_hours,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        baseline = d.pop("baseline")

        mean = d.pop("mean")

        mean_above_baseline = d.pop("mean_above_baseline")

        peak = d.pop("peak")

        unit_hours = d.pop("unit_hours")

        concurrency = cls(
            baseline=baseline,
            mean=mean,
            mean_above_baseline=mean_above_baseline,
            peak=peak,
            unit_hours=unit_hours,
        )


        concurrency.additional_properties = d
        return concurrency

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

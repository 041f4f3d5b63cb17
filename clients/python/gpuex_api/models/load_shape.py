from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="LoadShape")



@_attrs_define
class LoadShape:
    """ A load shape as priced.

        Attributes:
            baseline (str):
            mean (str):
            mean_above_baseline (str):
            peak (str):
     """

    baseline: str
    mean: str
    mean_above_baseline: str
    peak: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        baseline = self.baseline

        mean = self.mean

        mean_above_baseline = self.mean_above_baseline

        peak = self.peak


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "baseline": baseline,
            "mean": mean,
            "mean_above_baseline": mean_above_baseline,
            "peak": peak,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        baseline = d.pop("baseline")

        mean = d.pop("mean")

        mean_above_baseline = d.pop("mean_above_baseline")

        peak = d.pop("peak")

        load_shape = cls(
            baseline=baseline,
            mean=mean,
            mean_above_baseline=mean_above_baseline,
            peak=peak,
        )


        load_shape.additional_properties = d
        return load_shape

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

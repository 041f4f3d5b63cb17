from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="LoadShapeInput")



@_attrs_define
class LoadShapeInput:
    """ A load shape as a body gives it.

        Attributes:
            mean (float | str): A decimal: 0 or more and below 1000000000, with at most 6 decimals.
            peak (float | str): A decimal: 0 or more and below 1000000000, with at most 6 decimals.
            baseline (float | None | str | Unset):
            mean_above_baseline (float | None | str | Unset):
     """

    mean: float | str
    peak: float | str
    baseline: float | None | str | Unset = UNSET
    mean_above_baseline: float | None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        mean: float | str
        mean = self.mean

        peak: float | str
        peak = self.peak

        baseline: float | None | str | Unset
        if isinstance(self.baseline, Unset):
            baseline = UNSET
        else:
            baseline = self.baseline

        mean_above_baseline: float | None | str | Unset
        if isinstance(self.mean_above_baseline, Unset):
            mean_above_baseline = UNSET
        else:
            mean_above_baseline = self.mean_above_baseline


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "mean": mean,
            "peak": peak,
        })
        if baseline is not UNSET:
            field_dict["baseline"] = baseline
        if mean_above_baseline is not UNSET:
            field_dict["mean_above_baseline"] = mean_above_baseline

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_mean(data: object) -> float | str:
            return cast(float | str, data)

        mean = _parse_mean(d.pop("mean"))


        def _parse_peak(data: object) -> float | str:
            return cast(float | str, data)

        peak = _parse_peak(d.pop("peak"))


        def _parse_baseline(data: object) -> float | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | str | Unset, data)

        baseline = _parse_baseline(d.pop("baseline", UNSET))


        def _parse_mean_above_baseline(data: object) -> float | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | str | Unset, data)

        mean_above_baseline = _parse_mean_above_baseline(d.pop("mean_above_baseline", UNSET))


        load_shape_input = cls(
            mean=mean,
            peak=peak,
            baseline=baseline,
            mean_above_baseline=mean_above_baseline,
        )

        return load_shape_input


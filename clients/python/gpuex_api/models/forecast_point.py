from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="ForecastPoint")



@_attrs_define
class ForecastPoint:
    """ One forecast minute.

        Attributes:
            at (datetime.datetime): The minute's start.
            lower (float): The prediction interval's bounds (see `level`).
            tflops (float): Standard TFLOPS on-demand and reserved orders are expected to ask for.
            upper (float):
     """

    at: datetime.datetime
    lower: float
    tflops: float
    upper: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        lower = self.lower

        tflops = self.tflops

        upper = self.upper


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "lower": lower,
            "tflops": tflops,
            "upper": upper,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = isoparse(d.pop("at"))




        lower = d.pop("lower")

        tflops = d.pop("tflops")

        upper = d.pop("upper")

        forecast_point = cls(
            at=at,
            lower=lower,
            tflops=tflops,
            upper=upper,
        )


        forecast_point.additional_properties = d
        return forecast_point

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

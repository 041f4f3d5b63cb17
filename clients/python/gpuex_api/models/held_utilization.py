from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="HeldUtilization")



@_attrs_define
class HeldUtilization:
    """ What was used of what was held, from the agents' usage reports.

        Attributes:
            measured_tflops_h (str): TFLOPS-hours held over the intervals whose utilization an agent
                measured, to 6 decimals. Example: 200.
            used_tflops_h (str): Of those, the TFLOPS-hours used (held × mean utilization), to 6 decimals. Example: 150.
            fraction (None | str | Unset): `used_tflops_h ÷ measured_tflops_h`, to 6 decimals; null when no
                agent reported a utilization. Example: 0.75.
     """

    measured_tflops_h: str
    used_tflops_h: str
    fraction: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        measured_tflops_h = self.measured_tflops_h

        used_tflops_h = self.used_tflops_h

        fraction: None | str | Unset
        if isinstance(self.fraction, Unset):
            fraction = UNSET
        else:
            fraction = self.fraction


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "measured_tflops_h": measured_tflops_h,
            "used_tflops_h": used_tflops_h,
        })
        if fraction is not UNSET:
            field_dict["fraction"] = fraction

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        measured_tflops_h = d.pop("measured_tflops_h")

        used_tflops_h = d.pop("used_tflops_h")

        def _parse_fraction(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        fraction = _parse_fraction(d.pop("fraction", UNSET))


        held_utilization = cls(
            measured_tflops_h=measured_tflops_h,
            used_tflops_h=used_tflops_h,
            fraction=fraction,
        )


        held_utilization.additional_properties = d
        return held_utilization

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

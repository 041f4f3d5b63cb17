from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.usage_group_units import UsageGroupUnits





T = TypeVar("T", bound="UsageGroup")



@_attrs_define
class UsageGroup:
    """ Cost and units of one group.

        Attributes:
            cost (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed; the
                ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            key (str):
            lines (int):
            units (UsageGroupUnits): Unit-hours per unit (`tflops_h`, `vram_h`).
     """

    cost: str
    key: str
    lines: int
    units: UsageGroupUnits
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.usage_group_units import UsageGroupUnits
        cost = self.cost

        key = self.key

        lines = self.lines

        units = self.units.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "cost": cost,
            "key": key,
            "lines": lines,
            "units": units,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.usage_group_units import UsageGroupUnits
        d = dict(src_dict)
        cost = d.pop("cost")

        key = d.pop("key")

        lines = d.pop("lines")

        units = UsageGroupUnits.from_dict(d.pop("units"))




        usage_group = cls(
            cost=cost,
            key=key,
            lines=lines,
            units=units,
        )


        usage_group.additional_properties = d
        return usage_group

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

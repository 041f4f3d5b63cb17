from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.mix_line import MixLine





T = TypeVar("T", bound="GpuexCost")



@_attrs_define
class GpuexCost:
    """ 
        Attributes:
            mix (list[MixLine]):
            per_hour (str):
            per_month (str):
            total (str):
     """

    mix: list[MixLine]
    per_hour: str
    per_month: str
    total: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.mix_line import MixLine
        mix = []
        for mix_item_data in self.mix:
            mix_item = mix_item_data.to_dict()
            mix.append(mix_item)



        per_hour = self.per_hour

        per_month = self.per_month

        total = self.total


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "mix": mix,
            "per_hour": per_hour,
            "per_month": per_month,
            "total": total,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.mix_line import MixLine
        d = dict(src_dict)
        mix = []
        _mix = d.pop("mix")
        for mix_item_data in (_mix):
            mix_item = MixLine.from_dict(mix_item_data)



            mix.append(mix_item)


        per_hour = d.pop("per_hour")

        per_month = d.pop("per_month")

        total = d.pop("total")

        gpuex_cost = cls(
            mix=mix,
            per_hour=per_hour,
            per_month=per_month,
            total=total,
        )


        gpuex_cost.additional_properties = d
        return gpuex_cost

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.whole_node_cost import WholeNodeCost
  from ..models.tco_assumptions import TcoAssumptions
  from ..models.gpuex_cost import GpuexCost
  from ..models.tco_saving import TcoSaving





T = TypeVar("T", bound="Tco")



@_attrs_define
class Tco:
    """ 
        Attributes:
            assumptions (TcoAssumptions): Everything the figures were computed from.
            currency (str):
            gpuex (GpuexCost):
            saving (TcoSaving):
            whole_node (WholeNodeCost):
     """

    assumptions: TcoAssumptions
    currency: str
    gpuex: GpuexCost
    saving: TcoSaving
    whole_node: WholeNodeCost
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.whole_node_cost import WholeNodeCost
        from ..models.tco_assumptions import TcoAssumptions
        from ..models.gpuex_cost import GpuexCost
        from ..models.tco_saving import TcoSaving
        assumptions = self.assumptions.to_dict()

        currency = self.currency

        gpuex = self.gpuex.to_dict()

        saving = self.saving.to_dict()

        whole_node = self.whole_node.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "assumptions": assumptions,
            "currency": currency,
            "gpuex": gpuex,
            "saving": saving,
            "whole_node": whole_node,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.whole_node_cost import WholeNodeCost
        from ..models.tco_assumptions import TcoAssumptions
        from ..models.gpuex_cost import GpuexCost
        from ..models.tco_saving import TcoSaving
        d = dict(src_dict)
        assumptions = TcoAssumptions.from_dict(d.pop("assumptions"))




        currency = d.pop("currency")

        gpuex = GpuexCost.from_dict(d.pop("gpuex"))




        saving = TcoSaving.from_dict(d.pop("saving"))




        whole_node = WholeNodeCost.from_dict(d.pop("whole_node"))




        tco = cls(
            assumptions=assumptions,
            currency=currency,
            gpuex=gpuex,
            saving=saving,
            whole_node=whole_node,
        )


        tco.additional_properties = d
        return tco

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.refused_usage import RefusedUsage





T = TypeVar("T", bound="UsageAck")



@_attrs_define
class UsageAck:
    """ The server's answer to a usage batch.

        Attributes:
            duplicate (bool): `true` when this `(agent_id, seq)` had been applied before.
            seq (int): The batch acknowledged; the agent deletes it from its spool.
            refused (list[RefusedUsage] | Unset): Records refused on their own (the rest of the batch was stored): a
                figure beyond what the lease holds times the interval. The node is
                then marked for review. Absent when none was refused, so agents that
                predate it read the answer unchanged.
     """

    duplicate: bool
    seq: int
    refused: list[RefusedUsage] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.refused_usage import RefusedUsage
        duplicate = self.duplicate

        seq = self.seq

        refused: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.refused, Unset):
            refused = []
            for refused_item_data in self.refused:
                refused_item = refused_item_data.to_dict()
                refused.append(refused_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "duplicate": duplicate,
            "seq": seq,
        })
        if refused is not UNSET:
            field_dict["refused"] = refused

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.refused_usage import RefusedUsage
        d = dict(src_dict)
        duplicate = d.pop("duplicate")

        seq = d.pop("seq")

        _refused = d.pop("refused", UNSET)
        refused: list[RefusedUsage] | Unset = UNSET
        if _refused is not UNSET:
            refused = []
            for refused_item_data in _refused:
                refused_item = RefusedUsage.from_dict(refused_item_data)



                refused.append(refused_item)


        usage_ack = cls(
            duplicate=duplicate,
            seq=seq,
            refused=refused,
        )


        usage_ack.additional_properties = d
        return usage_ack

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

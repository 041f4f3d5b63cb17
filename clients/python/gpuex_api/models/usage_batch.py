from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
from uuid import UUID

if TYPE_CHECKING:
  from ..models.usage_record import UsageRecord





T = TypeVar("T", bound="UsageBatch")



@_attrs_define
class UsageBatch:
    """ A batch of usage records. `seq` grows by one per batch and survives agent
    restarts; the server applies each `(agent_id, seq)` once and acknowledges a
    duplicate without applying it again.

        Attributes:
            agent_id (UUID):
            records (list[UsageRecord]):
            seq (int): Monotonic per agent, starting at 1.
     """

    agent_id: UUID
    records: list[UsageRecord]
    seq: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.usage_record import UsageRecord
        agent_id = str(self.agent_id)

        records = []
        for records_item_data in self.records:
            records_item = records_item_data.to_dict()
            records.append(records_item)



        seq = self.seq


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "agent_id": agent_id,
            "records": records,
            "seq": seq,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.usage_record import UsageRecord
        d = dict(src_dict)
        agent_id = UUID(d.pop("agent_id"))




        records = []
        _records = d.pop("records")
        for records_item_data in (_records):
            records_item = UsageRecord.from_dict(records_item_data)



            records.append(records_item)


        seq = d.pop("seq")

        usage_batch = cls(
            agent_id=agent_id,
            records=records,
            seq=seq,
        )


        usage_batch.additional_properties = d
        return usage_batch

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

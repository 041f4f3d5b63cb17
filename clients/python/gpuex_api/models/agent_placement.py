from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.partition_type_1 import PartitionType1
  from ..models.partition_type_0 import PartitionType0
  from ..models.partition_type_2 import PartitionType2





T = TypeVar("T", bound="AgentPlacement")



@_attrs_define
class AgentPlacement:
    """ The GPUs a lease holds and how, as its agent sets them up: the GPU
    indices and the partition, without the engine's units, scores and catalog
    indices (the engine's `Placement` is the whole of it).

        Attributes:
            gpus (list[int]): GPU indices on this node (one for `mig` and `shared`).
            partition (PartitionType0 | PartitionType1 | PartitionType2): The partition mode of a placement (ARCHITECTURE.md
                §2), tagged by `kind`:
                `{"kind": "mig", "profile": "1g.10gb", "start": 2}`,
                `{"kind": "shared", "milli": 250, "memory_mb": 8000}`, `{"kind": "whole"}`.
     """

    gpus: list[int]
    partition: PartitionType0 | PartitionType1 | PartitionType2
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.partition_type_1 import PartitionType1
        from ..models.partition_type_0 import PartitionType0
        from ..models.partition_type_2 import PartitionType2
        gpus = self.gpus



        partition: dict[str, Any]
        if isinstance(self.partition, PartitionType0):
            partition = self.partition.to_dict()
        elif isinstance(self.partition, PartitionType1):
            partition = self.partition.to_dict()
        else:
            partition = self.partition.to_dict()



        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "gpus": gpus,
            "partition": partition,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.partition_type_1 import PartitionType1
        from ..models.partition_type_0 import PartitionType0
        from ..models.partition_type_2 import PartitionType2
        d = dict(src_dict)
        gpus = cast(list[int], d.pop("gpus"))


        def _parse_partition(data: object) -> PartitionType0 | PartitionType1 | PartitionType2:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_partition_type_0 = PartitionType0.from_dict(data)



                return componentsschemas_partition_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_partition_type_1 = PartitionType1.from_dict(data)



                return componentsschemas_partition_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_partition_type_2 = PartitionType2.from_dict(data)



            return componentsschemas_partition_type_2

        partition = _parse_partition(d.pop("partition"))


        agent_placement = cls(
            gpus=gpus,
            partition=partition,
        )


        agent_placement.additional_properties = d
        return agent_placement

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

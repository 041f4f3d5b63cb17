from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.declared_gpu import DeclaredGpu





T = TypeVar("T", bound="CreateNodeRequest")



@_attrs_define
class CreateNodeRequest:
    """ A new node, optionally with its inventory declared ahead of its agent.

        Attributes:
            name (str): 1 to 64 characters.
            region (str): An existing region.
            cpu_milli (int | None | Unset): Host CPU in milli-CPU (default 16 000 per GPU).
            gpus (list[DeclaredGpu] | Unset): The GPUs, until the agent registers its own inventory.
            memory_mib (int | None | Unset): Host memory in MiB (default 128 GiB per GPU).
            zone (None | str | Unset): The node's failure domain within the region (a rack, a building, a
                power feed): when a node is lost, its leases are placed in another
                zone first. 1 to 63 of a-z, 0-9, `.`, `_`, `-`.
     """

    name: str
    region: str
    cpu_milli: int | None | Unset = UNSET
    gpus: list[DeclaredGpu] | Unset = UNSET
    memory_mib: int | None | Unset = UNSET
    zone: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.declared_gpu import DeclaredGpu
        name = self.name

        region = self.region

        cpu_milli: int | None | Unset
        if isinstance(self.cpu_milli, Unset):
            cpu_milli = UNSET
        else:
            cpu_milli = self.cpu_milli

        gpus: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.gpus, Unset):
            gpus = []
            for gpus_item_data in self.gpus:
                gpus_item = gpus_item_data.to_dict()
                gpus.append(gpus_item)



        memory_mib: int | None | Unset
        if isinstance(self.memory_mib, Unset):
            memory_mib = UNSET
        else:
            memory_mib = self.memory_mib

        zone: None | str | Unset
        if isinstance(self.zone, Unset):
            zone = UNSET
        else:
            zone = self.zone


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "name": name,
            "region": region,
        })
        if cpu_milli is not UNSET:
            field_dict["cpu_milli"] = cpu_milli
        if gpus is not UNSET:
            field_dict["gpus"] = gpus
        if memory_mib is not UNSET:
            field_dict["memory_mib"] = memory_mib
        if zone is not UNSET:
            field_dict["zone"] = zone

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.declared_gpu import DeclaredGpu
        d = dict(src_dict)
        name = d.pop("name")

        region = d.pop("region")

        def _parse_cpu_milli(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        cpu_milli = _parse_cpu_milli(d.pop("cpu_milli", UNSET))


        _gpus = d.pop("gpus", UNSET)
        gpus: list[DeclaredGpu] | Unset = UNSET
        if _gpus is not UNSET:
            gpus = []
            for gpus_item_data in _gpus:
                gpus_item = DeclaredGpu.from_dict(gpus_item_data)



                gpus.append(gpus_item)


        def _parse_memory_mib(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        memory_mib = _parse_memory_mib(d.pop("memory_mib", UNSET))


        def _parse_zone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        zone = _parse_zone(d.pop("zone", UNSET))


        create_node_request = cls(
            name=name,
            region=region,
            cpu_milli=cpu_milli,
            gpus=gpus,
            memory_mib=memory_mib,
            zone=zone,
        )

        return create_node_request


from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.backend_kind import BackendKind
from typing import cast

if TYPE_CHECKING:
  from ..models.gpu_inventory import GpuInventory
  from ..models.host_inventory import HostInventory





T = TypeVar("T", bound="AgentRegisterRequest")



@_attrs_define
class AgentRegisterRequest:
    """ What the agent has to offer. It replaces any inventory declared with
    `POST /v1/nodes`; a node whose GPUs changed under live leases is quarantined.

        Attributes:
            agent_version (str): Version of `gpuex-agent`, e.g. `0.1.0`.
            backend (BackendKind): Which backend the agent runs.
            gpus (list[GpuInventory]): Every GPU the agent sees, by index.
            host (HostInventory): Host resources.
            hostname (str): The node's host name.
     """

    agent_version: str
    backend: BackendKind
    gpus: list[GpuInventory]
    host: HostInventory
    hostname: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.gpu_inventory import GpuInventory
        from ..models.host_inventory import HostInventory
        agent_version = self.agent_version

        backend = self.backend.value

        gpus = []
        for gpus_item_data in self.gpus:
            gpus_item = gpus_item_data.to_dict()
            gpus.append(gpus_item)



        host = self.host.to_dict()

        hostname = self.hostname


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "agent_version": agent_version,
            "backend": backend,
            "gpus": gpus,
            "host": host,
            "hostname": hostname,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.gpu_inventory import GpuInventory
        from ..models.host_inventory import HostInventory
        d = dict(src_dict)
        agent_version = d.pop("agent_version")

        backend = BackendKind(d.pop("backend"))




        gpus = []
        _gpus = d.pop("gpus")
        for gpus_item_data in (_gpus):
            gpus_item = GpuInventory.from_dict(gpus_item_data)



            gpus.append(gpus_item)


        host = HostInventory.from_dict(d.pop("host"))




        hostname = d.pop("hostname")

        agent_register_request = cls(
            agent_version=agent_version,
            backend=backend,
            gpus=gpus,
            host=host,
            hostname=hostname,
        )


        agent_register_request.additional_properties = d
        return agent_register_request

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

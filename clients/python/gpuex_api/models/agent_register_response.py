from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="AgentRegisterResponse")



@_attrs_define
class AgentRegisterResponse:
    """ The server's answer to a registration.

        Attributes:
            agent_id (UUID): The node id, which is the agent id in every later request.
            heartbeat_interval_s (int): Seconds between heartbeats the server expects (default 5).
            node_timeout_s (int): Seconds without a heartbeat after which the server declares the node lost
                (default 30). Informational: the agent stops its workloads after its own
                `--node-timeout`, which the operator keeps equal to this.
            server_time (datetime.datetime): The server's clock, so the agent can notice a skew.
            last_usage_seq (int | None | Unset): The highest usage `seq` the server has applied for this agent, if any: the
                agent continues above it and drops spooled batches at or below it.
            quarantined (None | str | Unset): Present when the node is quarantined (its GPUs changed under live
                leases): why. The node takes no new leases until its provider uncordons it.
     """

    agent_id: UUID
    heartbeat_interval_s: int
    node_timeout_s: int
    server_time: datetime.datetime
    last_usage_seq: int | None | Unset = UNSET
    quarantined: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        agent_id = str(self.agent_id)

        heartbeat_interval_s = self.heartbeat_interval_s

        node_timeout_s = self.node_timeout_s

        server_time = self.server_time.isoformat()

        last_usage_seq: int | None | Unset
        if isinstance(self.last_usage_seq, Unset):
            last_usage_seq = UNSET
        else:
            last_usage_seq = self.last_usage_seq

        quarantined: None | str | Unset
        if isinstance(self.quarantined, Unset):
            quarantined = UNSET
        else:
            quarantined = self.quarantined


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "agent_id": agent_id,
            "heartbeat_interval_s": heartbeat_interval_s,
            "node_timeout_s": node_timeout_s,
            "server_time": server_time,
        })
        if last_usage_seq is not UNSET:
            field_dict["last_usage_seq"] = last_usage_seq
        if quarantined is not UNSET:
            field_dict["quarantined"] = quarantined

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        agent_id = UUID(d.pop("agent_id"))




        heartbeat_interval_s = d.pop("heartbeat_interval_s")

        node_timeout_s = d.pop("node_timeout_s")

        server_time = isoparse(d.pop("server_time"))




        def _parse_last_usage_seq(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_usage_seq = _parse_last_usage_seq(d.pop("last_usage_seq", UNSET))


        def _parse_quarantined(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        quarantined = _parse_quarantined(d.pop("quarantined", UNSET))


        agent_register_response = cls(
            agent_id=agent_id,
            heartbeat_interval_s=heartbeat_interval_s,
            node_timeout_s=node_timeout_s,
            server_time=server_time,
            last_usage_seq=last_usage_seq,
            quarantined=quarantined,
        )


        agent_register_response.additional_properties = d
        return agent_register_response

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

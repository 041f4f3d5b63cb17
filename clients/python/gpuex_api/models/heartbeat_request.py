from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.lease_report import LeaseReport
  from ..models.gpu_metrics import GpuMetrics





T = TypeVar("T", bound="HeartbeatRequest")



@_attrs_define
class HeartbeatRequest:
    """ Body of a heartbeat, sent every `heartbeat_interval_s`.

        Attributes:
            agent_id (UUID):
            gpus (list[GpuMetrics]): One entry per GPU, by index.
            leases (list[LeaseReport]): Every lease the agent holds a slice or a workload for.
            sent_at (datetime.datetime): The agent's clock when it sent this.
     """

    agent_id: UUID
    gpus: list[GpuMetrics]
    leases: list[LeaseReport]
    sent_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.lease_report import LeaseReport
        from ..models.gpu_metrics import GpuMetrics
        agent_id = str(self.agent_id)

        gpus = []
        for gpus_item_data in self.gpus:
            gpus_item = gpus_item_data.to_dict()
            gpus.append(gpus_item)



        leases = []
        for leases_item_data in self.leases:
            leases_item = leases_item_data.to_dict()
            leases.append(leases_item)



        sent_at = self.sent_at.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "agent_id": agent_id,
            "gpus": gpus,
            "leases": leases,
            "sent_at": sent_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.lease_report import LeaseReport
        from ..models.gpu_metrics import GpuMetrics
        d = dict(src_dict)
        agent_id = UUID(d.pop("agent_id"))




        gpus = []
        _gpus = d.pop("gpus")
        for gpus_item_data in (_gpus):
            gpus_item = GpuMetrics.from_dict(gpus_item_data)



            gpus.append(gpus_item)


        leases = []
        _leases = d.pop("leases")
        for leases_item_data in (_leases):
            leases_item = LeaseReport.from_dict(leases_item_data)



            leases.append(leases_item)


        sent_at = isoparse(d.pop("sent_at"))




        heartbeat_request = cls(
            agent_id=agent_id,
            gpus=gpus,
            leases=leases,
            sent_at=sent_at,
        )


        heartbeat_request.additional_properties = d
        return heartbeat_request

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

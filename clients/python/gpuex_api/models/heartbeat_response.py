from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.assignment_start import AssignmentStart
  from ..models.assignment_stop import AssignmentStop
  from ..models.assignment_preempt import AssignmentPreempt





T = TypeVar("T", bound="HeartbeatResponse")



@_attrs_define
class HeartbeatResponse:
    """ The server's answer to a heartbeat.

        Attributes:
            heartbeat_interval_s (int): Seconds until the next heartbeat.
            server_time (datetime.datetime):
            assignments (list[AssignmentPreempt | AssignmentStart | AssignmentStop] | Unset): What to change, in order.
     """

    heartbeat_interval_s: int
    server_time: datetime.datetime
    assignments: list[AssignmentPreempt | AssignmentStart | AssignmentStop] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.assignment_start import AssignmentStart
        from ..models.assignment_stop import AssignmentStop
        from ..models.assignment_preempt import AssignmentPreempt
        heartbeat_interval_s = self.heartbeat_interval_s

        server_time = self.server_time.isoformat()

        assignments: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.assignments, Unset):
            assignments = []
            for assignments_item_data in self.assignments:
                assignments_item: dict[str, Any]
                if isinstance(assignments_item_data, AssignmentStart):
                    assignments_item = assignments_item_data.to_dict()
                elif isinstance(assignments_item_data, AssignmentStop):
                    assignments_item = assignments_item_data.to_dict()
                else:
                    assignments_item = assignments_item_data.to_dict()

                assignments.append(assignments_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "heartbeat_interval_s": heartbeat_interval_s,
            "server_time": server_time,
        })
        if assignments is not UNSET:
            field_dict["assignments"] = assignments

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.assignment_start import AssignmentStart
        from ..models.assignment_stop import AssignmentStop
        from ..models.assignment_preempt import AssignmentPreempt
        d = dict(src_dict)
        heartbeat_interval_s = d.pop("heartbeat_interval_s")

        server_time = isoparse(d.pop("server_time"))




        _assignments = d.pop("assignments", UNSET)
        assignments: list[AssignmentPreempt | AssignmentStart | AssignmentStop] | Unset = UNSET
        if _assignments is not UNSET:
            assignments = []
            for assignments_item_data in _assignments:
                def _parse_assignments_item(data: object) -> AssignmentPreempt | AssignmentStart | AssignmentStop:
                    try:
                        if not isinstance(data, dict):
                            raise TypeError()
                        componentsschemas_assignment_type_0 = AssignmentStart.from_dict(data)



                        return componentsschemas_assignment_type_0
                    except (TypeError, ValueError, AttributeError, KeyError):
                        pass
                    try:
                        if not isinstance(data, dict):
                            raise TypeError()
                        componentsschemas_assignment_type_1 = AssignmentStop.from_dict(data)



                        return componentsschemas_assignment_type_1
                    except (TypeError, ValueError, AttributeError, KeyError):
                        pass
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_assignment_type_2 = AssignmentPreempt.from_dict(data)



                    return componentsschemas_assignment_type_2

                assignments_item = _parse_assignments_item(assignments_item_data)

                assignments.append(assignments_item)


        heartbeat_response = cls(
            heartbeat_interval_s=heartbeat_interval_s,
            server_time=server_time,
            assignments=assignments,
        )


        heartbeat_response.additional_properties = d
        return heartbeat_response

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

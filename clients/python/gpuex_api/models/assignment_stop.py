from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.assignment_stop_action import AssignmentStopAction
from uuid import UUID






T = TypeVar("T", bound="AssignmentStop")



@_attrs_define
class AssignmentStop:
    """ Stop the workload now (SIGTERM, SIGKILL after a short grace) and tear
    the slice down: release, end of window, or an unknown lease.

        Attributes:
            action (AssignmentStopAction):
            lease_id (UUID):
     """

    action: AssignmentStopAction
    lease_id: UUID
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        action = self.action.value

        lease_id = str(self.lease_id)


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "action": action,
            "lease_id": lease_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        action = AssignmentStopAction(d.pop("action"))




        lease_id = UUID(d.pop("lease_id"))




        assignment_stop = cls(
            action=action,
            lease_id=lease_id,
        )


        assignment_stop.additional_properties = d
        return assignment_stop

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.assignment_preempt_action import AssignmentPreemptAction
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="AssignmentPreempt")



@_attrs_define
class AssignmentPreempt:
    """ Preemption notice: SIGTERM now, SIGKILL at `preempt_at`, then tear down.

        Attributes:
            action (AssignmentPreemptAction):
            lease_id (UUID):
            preempt_at (datetime.datetime): The deadline.
     """

    action: AssignmentPreemptAction
    lease_id: UUID
    preempt_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        action = self.action.value

        lease_id = str(self.lease_id)

        preempt_at = self.preempt_at.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "action": action,
            "lease_id": lease_id,
            "preempt_at": preempt_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        action = AssignmentPreemptAction(d.pop("action"))




        lease_id = UUID(d.pop("lease_id"))




        preempt_at = isoparse(d.pop("preempt_at"))




        assignment_preempt = cls(
            action=action,
            lease_id=lease_id,
            preempt_at=preempt_at,
        )


        assignment_preempt.additional_properties = d
        return assignment_preempt

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

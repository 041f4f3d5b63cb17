from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.assignment_start_action import AssignmentStartAction
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.assignment_start_env import AssignmentStartEnv
  from ..models.placement import Placement
  from ..models.held_units import HeldUnits





T = TypeVar("T", bound="AssignmentStart")



@_attrs_define
class AssignmentStart:
    """ Provision the slice and run the workload. Idempotent: a lease the agent
    already runs is left alone.

        Attributes:
            action (AssignmentStartAction):
            lease_id (UUID):
            placement (Placement): The GPUs a lease holds and how.
            command (None | str | Unset): Shell command run with `sh -c`; `None` provisions the slice only.
            end_at (datetime.datetime | None | Unset): When the lease's window ends; the agent stops the job then. `None`:
                open-ended.
            env (AssignmentStartEnv | Unset): Extra environment for the command.
            held (HeldUnits | None | Unset):
     """

    action: AssignmentStartAction
    lease_id: UUID
    placement: Placement
    command: None | str | Unset = UNSET
    end_at: datetime.datetime | None | Unset = UNSET
    env: AssignmentStartEnv | Unset = UNSET
    held: HeldUnits | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.assignment_start_env import AssignmentStartEnv
        from ..models.placement import Placement
        from ..models.held_units import HeldUnits
        action = self.action.value

        lease_id = str(self.lease_id)

        placement = self.placement.to_dict()

        command: None | str | Unset
        if isinstance(self.command, Unset):
            command = UNSET
        else:
            command = self.command

        end_at: None | str | Unset
        if isinstance(self.end_at, Unset):
            end_at = UNSET
        elif isinstance(self.end_at, datetime.datetime):
            end_at = self.end_at.isoformat()
        else:
            end_at = self.end_at

        env: dict[str, Any] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = self.env.to_dict()

        held: dict[str, Any] | None | Unset
        if isinstance(self.held, Unset):
            held = UNSET
        elif isinstance(self.held, HeldUnits):
            held = self.held.to_dict()
        else:
            held = self.held


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "action": action,
            "lease_id": lease_id,
            "placement": placement,
        })
        if command is not UNSET:
            field_dict["command"] = command
        if end_at is not UNSET:
            field_dict["end_at"] = end_at
        if env is not UNSET:
            field_dict["env"] = env
        if held is not UNSET:
            field_dict["held"] = held

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.assignment_start_env import AssignmentStartEnv
        from ..models.placement import Placement
        from ..models.held_units import HeldUnits
        d = dict(src_dict)
        action = AssignmentStartAction(d.pop("action"))




        lease_id = UUID(d.pop("lease_id"))




        placement = Placement.from_dict(d.pop("placement"))




        def _parse_command(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        command = _parse_command(d.pop("command", UNSET))


        def _parse_end_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                end_at_type_0 = isoparse(data)



                return end_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        end_at = _parse_end_at(d.pop("end_at", UNSET))


        _env = d.pop("env", UNSET)
        env: AssignmentStartEnv | Unset
        if isinstance(_env,  Unset):
            env = UNSET
        else:
            env = AssignmentStartEnv.from_dict(_env)




        def _parse_held(data: object) -> HeldUnits | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                held_type_1 = HeldUnits.from_dict(data)



                return held_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HeldUnits | None | Unset, data)

        held = _parse_held(d.pop("held", UNSET))


        assignment_start = cls(
            action=action,
            lease_id=lease_id,
            placement=placement,
            command=command,
            end_at=end_at,
            env=env,
            held=held,
        )


        assignment_start.additional_properties = d
        return assignment_start

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

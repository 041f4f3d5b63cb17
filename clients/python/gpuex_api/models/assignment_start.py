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
  from ..models.checkpoint_plan import CheckpointPlan
  from ..models.registry_auth import RegistryAuth
  from ..models.assignment_start_env import AssignmentStartEnv
  from ..models.held_units import HeldUnits
  from ..models.host_limits import HostLimits
  from ..models.agent_placement import AgentPlacement
  from ..models.artifact import Artifact





T = TypeVar("T", bound="AssignmentStart")



@_attrs_define
class AssignmentStart:
    """ Provision the slice and run the workload. Idempotent: a lease the agent
    already runs is left alone.

        Attributes:
            action (AssignmentStartAction):
            lease_id (UUID):
            placement (AgentPlacement): The GPUs a lease holds and how, as its agent sets them up: the GPU
                indices and the partition, without the engine's units, scores and catalog
                indices (the engine's `Placement` is the whole of it).
            artifacts (list[Artifact] | Unset): Files the agent fetches into the working folder before the workload
                starts; a failed fetch or a wrong hash fails the lease.
            checkpoint (CheckpointPlan | None | Unset):
            command (None | str | Unset): Shell command run with `sh -c`; `None` provisions the slice only.
            end_at (datetime.datetime | None | Unset): When the lease's window ends; the agent stops the job then. `None`:
                open-ended.
            env (AssignmentStartEnv | Unset): Extra environment for the command.
            held (HeldUnits | None | Unset):
            image (None | str | Unset): The OCI image the `container` launcher runs the command in.
            limits (HostLimits | None | Unset):
            network (bool | Unset): Whether the workload may use the network (`sandbox` and `container`
                give it none otherwise).
            registry_auth (None | RegistryAuth | Unset):
     """

    action: AssignmentStartAction
    lease_id: UUID
    placement: AgentPlacement
    artifacts: list[Artifact] | Unset = UNSET
    checkpoint: CheckpointPlan | None | Unset = UNSET
    command: None | str | Unset = UNSET
    end_at: datetime.datetime | None | Unset = UNSET
    env: AssignmentStartEnv | Unset = UNSET
    held: HeldUnits | None | Unset = UNSET
    image: None | str | Unset = UNSET
    limits: HostLimits | None | Unset = UNSET
    network: bool | Unset = UNSET
    registry_auth: None | RegistryAuth | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.checkpoint_plan import CheckpointPlan
        from ..models.registry_auth import RegistryAuth
        from ..models.assignment_start_env import AssignmentStartEnv
        from ..models.held_units import HeldUnits
        from ..models.host_limits import HostLimits
        from ..models.agent_placement import AgentPlacement
        from ..models.artifact import Artifact
        action = self.action.value

        lease_id = str(self.lease_id)

        placement = self.placement.to_dict()

        artifacts: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.artifacts, Unset):
            artifacts = []
            for artifacts_item_data in self.artifacts:
                artifacts_item = artifacts_item_data.to_dict()
                artifacts.append(artifacts_item)



        checkpoint: dict[str, Any] | None | Unset
        if isinstance(self.checkpoint, Unset):
            checkpoint = UNSET
        elif isinstance(self.checkpoint, CheckpointPlan):
            checkpoint = self.checkpoint.to_dict()
        else:
            checkpoint = self.checkpoint

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

        image: None | str | Unset
        if isinstance(self.image, Unset):
            image = UNSET
        else:
            image = self.image

        limits: dict[str, Any] | None | Unset
        if isinstance(self.limits, Unset):
            limits = UNSET
        elif isinstance(self.limits, HostLimits):
            limits = self.limits.to_dict()
        else:
            limits = self.limits

        network = self.network

        registry_auth: dict[str, Any] | None | Unset
        if isinstance(self.registry_auth, Unset):
            registry_auth = UNSET
        elif isinstance(self.registry_auth, RegistryAuth):
            registry_auth = self.registry_auth.to_dict()
        else:
            registry_auth = self.registry_auth


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "action": action,
            "lease_id": lease_id,
            "placement": placement,
        })
        if artifacts is not UNSET:
            field_dict["artifacts"] = artifacts
        if checkpoint is not UNSET:
            field_dict["checkpoint"] = checkpoint
        if command is not UNSET:
            field_dict["command"] = command
        if end_at is not UNSET:
            field_dict["end_at"] = end_at
        if env is not UNSET:
            field_dict["env"] = env
        if held is not UNSET:
            field_dict["held"] = held
        if image is not UNSET:
            field_dict["image"] = image
        if limits is not UNSET:
            field_dict["limits"] = limits
        if network is not UNSET:
            field_dict["network"] = network
        if registry_auth is not UNSET:
            field_dict["registry_auth"] = registry_auth

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.checkpoint_plan import CheckpointPlan
        from ..models.registry_auth import RegistryAuth
        from ..models.assignment_start_env import AssignmentStartEnv
        from ..models.held_units import HeldUnits
        from ..models.host_limits import HostLimits
        from ..models.agent_placement import AgentPlacement
        from ..models.artifact import Artifact
        d = dict(src_dict)
        action = AssignmentStartAction(d.pop("action"))




        lease_id = UUID(d.pop("lease_id"))




        placement = AgentPlacement.from_dict(d.pop("placement"))




        _artifacts = d.pop("artifacts", UNSET)
        artifacts: list[Artifact] | Unset = UNSET
        if _artifacts is not UNSET:
            artifacts = []
            for artifacts_item_data in _artifacts:
                artifacts_item = Artifact.from_dict(artifacts_item_data)



                artifacts.append(artifacts_item)


        def _parse_checkpoint(data: object) -> CheckpointPlan | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                checkpoint_type_1 = CheckpointPlan.from_dict(data)



                return checkpoint_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CheckpointPlan | None | Unset, data)

        checkpoint = _parse_checkpoint(d.pop("checkpoint", UNSET))


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


        def _parse_image(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image = _parse_image(d.pop("image", UNSET))


        def _parse_limits(data: object) -> HostLimits | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                limits_type_1 = HostLimits.from_dict(data)



                return limits_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HostLimits | None | Unset, data)

        limits = _parse_limits(d.pop("limits", UNSET))


        network = d.pop("network", UNSET)

        def _parse_registry_auth(data: object) -> None | RegistryAuth | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                registry_auth_type_1 = RegistryAuth.from_dict(data)



                return registry_auth_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RegistryAuth | Unset, data)

        registry_auth = _parse_registry_auth(d.pop("registry_auth", UNSET))


        assignment_start = cls(
            action=action,
            lease_id=lease_id,
            placement=placement,
            artifacts=artifacts,
            checkpoint=checkpoint,
            command=command,
            end_at=end_at,
            env=env,
            held=held,
            image=image,
            limits=limits,
            network=network,
            registry_auth=registry_auth,
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

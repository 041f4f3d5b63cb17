from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.mode import Mode
from ..models.on_interrupt import OnInterrupt
from ..models.qos import Qos
from ..models.time_in_force import TimeInForce
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.order_request_env_type_0 import OrderRequestEnvType0
  from ..models.order_request_tags_type_0 import OrderRequestTagsType0
  from ..models.registry_auth import RegistryAuth
  from ..models.resources import Resources
  from ..models.checkpoint_request import CheckpointRequest
  from ..models.artifact import Artifact





T = TypeVar("T", bound="OrderRequest")



@_attrs_define
class OrderRequest:
    """ An order (ARCHITECTURE.md §4).

        Attributes:
            mode (Mode): How an order buys capacity.
            resources (Resources): What an order asks for (ARCHITECTURE.md §4).
            all_or_none (bool | None | Unset): Every unit together or none (a gang); `fok` implies it.
            artifacts (list[Artifact] | None | Unset): Files fetched into the workload's working folder before it starts,
                each checked against its SHA-256 (ARCHITECTURE.md §13); at most 16.
            checkpoint (CheckpointRequest | None | Unset):
            client_order_id (None | str | Unset): The buyer's own id for the order, unique per buyer.
            command (None | str | Unset): A shell command the agent runs on the slice.
            count (int | None | Unset): Identical units, each its own lease (default 1, at most 64;
                on-demand and pooled). They are placed together on capacity free at
                the time: at least `min_count` of them, or all with `all_or_none`.
            duration_s (int | None | Unset): Window length, 60 s to 366 days; absent on on-demand and spot means until
                released.
            env (None | OrderRequestEnvType0 | Unset):
            expires_at (datetime.datetime | None | Unset): With `gtt`: when the order stops waiting, within 7 days.
            image (None | str | Unset): The OCI image a `container` launcher runs the command in, e.g.
                `docker.io/pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime`.
            max_price (None | str | Unset):
            max_wait_s (int | None | Unset): How long to wait for capacity (default 0: refused at once; at most
                7 days). `time_in_force` says the same in traders' terms; give one.
            min_count (int | None | Unset): The fewest units worth placing (default 1), at most `count`.
            network (bool | None | Unset): Whether the workload may use the network; without it the `sandbox` and
                `container` launchers give it none (default false).
            on_interrupt (None | OnInterrupt | Unset):
            qos (None | Qos | Unset):
            region (None | str | Unset): A region name, or `any` (default): the engine picks, cheapest first.
            registry_auth (None | RegistryAuth | Unset):
            start_at (datetime.datetime | None | Unset): Reserved: the window's start, a whole hour (e.g. `14:00:00Z`) at
                least 1 h ahead; off the hour gets 422 naming `start_at`.
            tags (None | OrderRequestTagsType0 | Unset):
            time_in_force (None | TimeInForce | Unset):
            webhook_url (None | str | Unset): Receives the order's and lease's notices.
     """

    mode: Mode
    resources: Resources
    all_or_none: bool | None | Unset = UNSET
    artifacts: list[Artifact] | None | Unset = UNSET
    checkpoint: CheckpointRequest | None | Unset = UNSET
    client_order_id: None | str | Unset = UNSET
    command: None | str | Unset = UNSET
    count: int | None | Unset = UNSET
    duration_s: int | None | Unset = UNSET
    env: None | OrderRequestEnvType0 | Unset = UNSET
    expires_at: datetime.datetime | None | Unset = UNSET
    image: None | str | Unset = UNSET
    max_price: None | str | Unset = UNSET
    max_wait_s: int | None | Unset = UNSET
    min_count: int | None | Unset = UNSET
    network: bool | None | Unset = UNSET
    on_interrupt: None | OnInterrupt | Unset = UNSET
    qos: None | Qos | Unset = UNSET
    region: None | str | Unset = UNSET
    registry_auth: None | RegistryAuth | Unset = UNSET
    start_at: datetime.datetime | None | Unset = UNSET
    tags: None | OrderRequestTagsType0 | Unset = UNSET
    time_in_force: None | TimeInForce | Unset = UNSET
    webhook_url: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.order_request_env_type_0 import OrderRequestEnvType0
        from ..models.order_request_tags_type_0 import OrderRequestTagsType0
        from ..models.registry_auth import RegistryAuth
        from ..models.resources import Resources
        from ..models.checkpoint_request import CheckpointRequest
        from ..models.artifact import Artifact
        mode = self.mode.value

        resources = self.resources.to_dict()

        all_or_none: bool | None | Unset
        if isinstance(self.all_or_none, Unset):
            all_or_none = UNSET
        else:
            all_or_none = self.all_or_none

        artifacts: list[dict[str, Any]] | None | Unset
        if isinstance(self.artifacts, Unset):
            artifacts = UNSET
        elif isinstance(self.artifacts, list):
            artifacts = []
            for artifacts_type_0_item_data in self.artifacts:
                artifacts_type_0_item = artifacts_type_0_item_data.to_dict()
                artifacts.append(artifacts_type_0_item)


        else:
            artifacts = self.artifacts

        checkpoint: dict[str, Any] | None | Unset
        if isinstance(self.checkpoint, Unset):
            checkpoint = UNSET
        elif isinstance(self.checkpoint, CheckpointRequest):
            checkpoint = self.checkpoint.to_dict()
        else:
            checkpoint = self.checkpoint

        client_order_id: None | str | Unset
        if isinstance(self.client_order_id, Unset):
            client_order_id = UNSET
        else:
            client_order_id = self.client_order_id

        command: None | str | Unset
        if isinstance(self.command, Unset):
            command = UNSET
        else:
            command = self.command

        count: int | None | Unset
        if isinstance(self.count, Unset):
            count = UNSET
        else:
            count = self.count

        duration_s: int | None | Unset
        if isinstance(self.duration_s, Unset):
            duration_s = UNSET
        else:
            duration_s = self.duration_s

        env: dict[str, Any] | None | Unset
        if isinstance(self.env, Unset):
            env = UNSET
        elif isinstance(self.env, OrderRequestEnvType0):
            env = self.env.to_dict()
        else:
            env = self.env

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        image: None | str | Unset
        if isinstance(self.image, Unset):
            image = UNSET
        else:
            image = self.image

        max_price: None | str | Unset
        if isinstance(self.max_price, Unset):
            max_price = UNSET
        else:
            max_price = self.max_price

        max_wait_s: int | None | Unset
        if isinstance(self.max_wait_s, Unset):
            max_wait_s = UNSET
        else:
            max_wait_s = self.max_wait_s

        min_count: int | None | Unset
        if isinstance(self.min_count, Unset):
            min_count = UNSET
        else:
            min_count = self.min_count

        network: bool | None | Unset
        if isinstance(self.network, Unset):
            network = UNSET
        else:
            network = self.network

        on_interrupt: None | str | Unset
        if isinstance(self.on_interrupt, Unset):
            on_interrupt = UNSET
        elif isinstance(self.on_interrupt, OnInterrupt):
            on_interrupt = self.on_interrupt.value
        else:
            on_interrupt = self.on_interrupt

        qos: None | str | Unset
        if isinstance(self.qos, Unset):
            qos = UNSET
        elif isinstance(self.qos, Qos):
            qos = self.qos.value
        else:
            qos = self.qos

        region: None | str | Unset
        if isinstance(self.region, Unset):
            region = UNSET
        else:
            region = self.region

        registry_auth: dict[str, Any] | None | Unset
        if isinstance(self.registry_auth, Unset):
            registry_auth = UNSET
        elif isinstance(self.registry_auth, RegistryAuth):
            registry_auth = self.registry_auth.to_dict()
        else:
            registry_auth = self.registry_auth

        start_at: None | str | Unset
        if isinstance(self.start_at, Unset):
            start_at = UNSET
        elif isinstance(self.start_at, datetime.datetime):
            start_at = self.start_at.isoformat()
        else:
            start_at = self.start_at

        tags: dict[str, Any] | None | Unset
        if isinstance(self.tags, Unset):
            tags = UNSET
        elif isinstance(self.tags, OrderRequestTagsType0):
            tags = self.tags.to_dict()
        else:
            tags = self.tags

        time_in_force: None | str | Unset
        if isinstance(self.time_in_force, Unset):
            time_in_force = UNSET
        elif isinstance(self.time_in_force, TimeInForce):
            time_in_force = self.time_in_force.value
        else:
            time_in_force = self.time_in_force

        webhook_url: None | str | Unset
        if isinstance(self.webhook_url, Unset):
            webhook_url = UNSET
        else:
            webhook_url = self.webhook_url


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "mode": mode,
            "resources": resources,
        })
        if all_or_none is not UNSET:
            field_dict["all_or_none"] = all_or_none
        if artifacts is not UNSET:
            field_dict["artifacts"] = artifacts
        if checkpoint is not UNSET:
            field_dict["checkpoint"] = checkpoint
        if client_order_id is not UNSET:
            field_dict["client_order_id"] = client_order_id
        if command is not UNSET:
            field_dict["command"] = command
        if count is not UNSET:
            field_dict["count"] = count
        if duration_s is not UNSET:
            field_dict["duration_s"] = duration_s
        if env is not UNSET:
            field_dict["env"] = env
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if image is not UNSET:
            field_dict["image"] = image
        if max_price is not UNSET:
            field_dict["max_price"] = max_price
        if max_wait_s is not UNSET:
            field_dict["max_wait_s"] = max_wait_s
        if min_count is not UNSET:
            field_dict["min_count"] = min_count
        if network is not UNSET:
            field_dict["network"] = network
        if on_interrupt is not UNSET:
            field_dict["on_interrupt"] = on_interrupt
        if qos is not UNSET:
            field_dict["qos"] = qos
        if region is not UNSET:
            field_dict["region"] = region
        if registry_auth is not UNSET:
            field_dict["registry_auth"] = registry_auth
        if start_at is not UNSET:
            field_dict["start_at"] = start_at
        if tags is not UNSET:
            field_dict["tags"] = tags
        if time_in_force is not UNSET:
            field_dict["time_in_force"] = time_in_force
        if webhook_url is not UNSET:
            field_dict["webhook_url"] = webhook_url

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.order_request_env_type_0 import OrderRequestEnvType0
        from ..models.order_request_tags_type_0 import OrderRequestTagsType0
        from ..models.registry_auth import RegistryAuth
        from ..models.resources import Resources
        from ..models.checkpoint_request import CheckpointRequest
        from ..models.artifact import Artifact
        d = dict(src_dict)
        mode = Mode(d.pop("mode"))




        resources = Resources.from_dict(d.pop("resources"))




        def _parse_all_or_none(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        all_or_none = _parse_all_or_none(d.pop("all_or_none", UNSET))


        def _parse_artifacts(data: object) -> list[Artifact] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                artifacts_type_0 = []
                _artifacts_type_0 = data
                for artifacts_type_0_item_data in (_artifacts_type_0):
                    artifacts_type_0_item = Artifact.from_dict(artifacts_type_0_item_data)



                    artifacts_type_0.append(artifacts_type_0_item)

                return artifacts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Artifact] | None | Unset, data)

        artifacts = _parse_artifacts(d.pop("artifacts", UNSET))


        def _parse_checkpoint(data: object) -> CheckpointRequest | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                checkpoint_type_1 = CheckpointRequest.from_dict(data)



                return checkpoint_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CheckpointRequest | None | Unset, data)

        checkpoint = _parse_checkpoint(d.pop("checkpoint", UNSET))


        def _parse_client_order_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_order_id = _parse_client_order_id(d.pop("client_order_id", UNSET))


        def _parse_command(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        command = _parse_command(d.pop("command", UNSET))


        def _parse_count(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        count = _parse_count(d.pop("count", UNSET))


        def _parse_duration_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        duration_s = _parse_duration_s(d.pop("duration_s", UNSET))


        def _parse_env(data: object) -> None | OrderRequestEnvType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                env_type_0 = OrderRequestEnvType0.from_dict(data)



                return env_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OrderRequestEnvType0 | Unset, data)

        env = _parse_env(d.pop("env", UNSET))


        def _parse_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = isoparse(data)



                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))


        def _parse_image(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image = _parse_image(d.pop("image", UNSET))


        def _parse_max_price(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        max_price = _parse_max_price(d.pop("max_price", UNSET))


        def _parse_max_wait_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_wait_s = _parse_max_wait_s(d.pop("max_wait_s", UNSET))


        def _parse_min_count(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        min_count = _parse_min_count(d.pop("min_count", UNSET))


        def _parse_network(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        network = _parse_network(d.pop("network", UNSET))


        def _parse_on_interrupt(data: object) -> None | OnInterrupt | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                on_interrupt_type_1 = OnInterrupt(data)



                return on_interrupt_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OnInterrupt | Unset, data)

        on_interrupt = _parse_on_interrupt(d.pop("on_interrupt", UNSET))


        def _parse_qos(data: object) -> None | Qos | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                qos_type_1 = Qos(data)



                return qos_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Qos | Unset, data)

        qos = _parse_qos(d.pop("qos", UNSET))


        def _parse_region(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        region = _parse_region(d.pop("region", UNSET))


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


        def _parse_start_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                start_at_type_0 = isoparse(data)



                return start_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        start_at = _parse_start_at(d.pop("start_at", UNSET))


        def _parse_tags(data: object) -> None | OrderRequestTagsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                tags_type_0 = OrderRequestTagsType0.from_dict(data)



                return tags_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OrderRequestTagsType0 | Unset, data)

        tags = _parse_tags(d.pop("tags", UNSET))


        def _parse_time_in_force(data: object) -> None | TimeInForce | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                time_in_force_type_1 = TimeInForce(data)



                return time_in_force_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TimeInForce | Unset, data)

        time_in_force = _parse_time_in_force(d.pop("time_in_force", UNSET))


        def _parse_webhook_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        webhook_url = _parse_webhook_url(d.pop("webhook_url", UNSET))


        order_request = cls(
            mode=mode,
            resources=resources,
            all_or_none=all_or_none,
            artifacts=artifacts,
            checkpoint=checkpoint,
            client_order_id=client_order_id,
            command=command,
            count=count,
            duration_s=duration_s,
            env=env,
            expires_at=expires_at,
            image=image,
            max_price=max_price,
            max_wait_s=max_wait_s,
            min_count=min_count,
            network=network,
            on_interrupt=on_interrupt,
            qos=qos,
            region=region,
            registry_auth=registry_auth,
            start_at=start_at,
            tags=tags,
            time_in_force=time_in_force,
            webhook_url=webhook_url,
        )

        return order_request


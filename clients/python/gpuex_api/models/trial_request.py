from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.trial_request_env_type_0 import TrialRequestEnvType0





T = TypeVar("T", bound="TrialRequest")



@_attrs_define
class TrialRequest:
    """ A trial: what to run, and on which shapes.

        Attributes:
            command (str): The shell command the agent runs on each shape.
            gpu_model (str): The GPU model whose shapes are tried, e.g. `H100-SXM5-80GB`.
            shapes (list[str]): 1 to 8 distinct shapes: `mig-<profile>` (a MIG profile of the model,
                e.g. `mig-1g.10gb`), `shared-<thousandths>` (a soft share, e.g.
                `shared-250`) or `whole`.
            duration_s (int | None | Unset): How long each shape may run, 60 to 600 s (default 300): one that is
                still running then has failed.
            env (None | TrialRequestEnvType0 | Unset):
            image (None | str | Unset): The OCI image a `container` launcher runs the command in.
            region (None | str | Unset): A region, or `any` (default).
     """

    command: str
    gpu_model: str
    shapes: list[str]
    duration_s: int | None | Unset = UNSET
    env: None | TrialRequestEnvType0 | Unset = UNSET
    image: None | str | Unset = UNSET
    region: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.trial_request_env_type_0 import TrialRequestEnvType0
        command = self.command

        gpu_model = self.gpu_model

        shapes = self.shapes



        duration_s: int | None | Unset
        if isinstance(self.duration_s, Unset):
            duration_s = UNSET
        else:
            duration_s = self.duration_s

        env: dict[str, Any] | None | Unset
        if isinstance(self.env, Unset):
            env = UNSET
        elif isinstance(self.env, TrialRequestEnvType0):
            env = self.env.to_dict()
        else:
            env = self.env

        image: None | str | Unset
        if isinstance(self.image, Unset):
            image = UNSET
        else:
            image = self.image

        region: None | str | Unset
        if isinstance(self.region, Unset):
            region = UNSET
        else:
            region = self.region


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "command": command,
            "gpu_model": gpu_model,
            "shapes": shapes,
        })
        if duration_s is not UNSET:
            field_dict["duration_s"] = duration_s
        if env is not UNSET:
            field_dict["env"] = env
        if image is not UNSET:
            field_dict["image"] = image
        if region is not UNSET:
            field_dict["region"] = region

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.trial_request_env_type_0 import TrialRequestEnvType0
        d = dict(src_dict)
        command = d.pop("command")

        gpu_model = d.pop("gpu_model")

        shapes = cast(list[str], d.pop("shapes"))


        def _parse_duration_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        duration_s = _parse_duration_s(d.pop("duration_s", UNSET))


        def _parse_env(data: object) -> None | TrialRequestEnvType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                env_type_0 = TrialRequestEnvType0.from_dict(data)



                return env_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TrialRequestEnvType0 | Unset, data)

        env = _parse_env(d.pop("env", UNSET))


        def _parse_image(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image = _parse_image(d.pop("image", UNSET))


        def _parse_region(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        region = _parse_region(d.pop("region", UNSET))


        trial_request = cls(
            command=command,
            gpu_model=gpu_model,
            shapes=shapes,
            duration_s=duration_s,
            env=env,
            image=image,
            region=region,
        )

        return trial_request


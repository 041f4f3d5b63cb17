from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.trial_state import TrialState
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.trial_run import TrialRun
  from ..models.smallest_passed import SmallestPassed





T = TypeVar("T", bound="TrialView")



@_attrs_define
class TrialView:
    """ A trial and each shape's run.

        Attributes:
            command (str):
            created_at (datetime.datetime):
            duration_s (int):
            gpu_model (str):
            id (UUID):
            runs (list[TrialRun]):
            state (TrialState): Where a trial stands.
            image (None | str | Unset):
            smallest_passed (None | SmallestPassed | Unset):
     """

    command: str
    created_at: datetime.datetime
    duration_s: int
    gpu_model: str
    id: UUID
    runs: list[TrialRun]
    state: TrialState
    image: None | str | Unset = UNSET
    smallest_passed: None | SmallestPassed | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.trial_run import TrialRun
        from ..models.smallest_passed import SmallestPassed
        command = self.command

        created_at = self.created_at.isoformat()

        duration_s = self.duration_s

        gpu_model = self.gpu_model

        id = str(self.id)

        runs = []
        for runs_item_data in self.runs:
            runs_item = runs_item_data.to_dict()
            runs.append(runs_item)



        state = self.state.value

        image: None | str | Unset
        if isinstance(self.image, Unset):
            image = UNSET
        else:
            image = self.image

        smallest_passed: dict[str, Any] | None | Unset
        if isinstance(self.smallest_passed, Unset):
            smallest_passed = UNSET
        elif isinstance(self.smallest_passed, SmallestPassed):
            smallest_passed = self.smallest_passed.to_dict()
        else:
            smallest_passed = self.smallest_passed


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "command": command,
            "created_at": created_at,
            "duration_s": duration_s,
            "gpu_model": gpu_model,
            "id": id,
            "runs": runs,
            "state": state,
        })
        if image is not UNSET:
            field_dict["image"] = image
        if smallest_passed is not UNSET:
            field_dict["smallest_passed"] = smallest_passed

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.trial_run import TrialRun
        from ..models.smallest_passed import SmallestPassed
        d = dict(src_dict)
        command = d.pop("command")

        created_at = isoparse(d.pop("created_at"))




        duration_s = d.pop("duration_s")

        gpu_model = d.pop("gpu_model")

        id = UUID(d.pop("id"))




        runs = []
        _runs = d.pop("runs")
        for runs_item_data in (_runs):
            runs_item = TrialRun.from_dict(runs_item_data)



            runs.append(runs_item)


        state = TrialState(d.pop("state"))




        def _parse_image(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image = _parse_image(d.pop("image", UNSET))


        def _parse_smallest_passed(data: object) -> None | SmallestPassed | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                smallest_passed_type_1 = SmallestPassed.from_dict(data)



                return smallest_passed_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SmallestPassed | Unset, data)

        smallest_passed = _parse_smallest_passed(d.pop("smallest_passed", UNSET))


        trial_view = cls(
            command=command,
            created_at=created_at,
            duration_s=duration_s,
            gpu_model=gpu_model,
            id=id,
            runs=runs,
            state=state,
            image=image,
            smallest_passed=smallest_passed,
        )


        trial_view.additional_properties = d
        return trial_view

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="CheckpointRequest")



@_attrs_define
class CheckpointRequest:
    """ An order's `checkpoint`.

        Attributes:
            every_s (int): Seconds between uploads, 1 to 86 400.
            path (None | str | Unset): Where a container sees the checkpoint folder (default `/checkpoint`):
                an absolute path of letters, digits, `_ . -` parts, not `/work`,
                `/outputs` or a system folder. Other launchers tell the workload
                where it is in `$GPUEX_CHECKPOINT`.
     """

    every_s: int
    path: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        every_s = self.every_s

        path: None | str | Unset
        if isinstance(self.path, Unset):
            path = UNSET
        else:
            path = self.path


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "every_s": every_s,
        })
        if path is not UNSET:
            field_dict["path"] = path

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        every_s = d.pop("every_s")

        def _parse_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        path = _parse_path(d.pop("path", UNSET))


        checkpoint_request = cls(
            every_s=every_s,
            path=path,
        )

        return checkpoint_request


from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Artifact")



@_attrs_define
class Artifact:
    """ A file a workload needs: fetched by the agent from `url`, checked against
    `sha256`, placed at `path` under the lease's working folder (ARCHITECTURE.md §13).

        Attributes:
            path (str): Relative to the working folder: names of letters, digits, `_ . -`
                joined by `/`, none of them only dots (e.g. `train.py`, `data/x.bin`).
            sha256 (str): The SHA-256 of its content, 64 hex digits.
            url (str): Where the agent fetches it from.
     """

    path: str
    sha256: str
    url: str





    def to_dict(self) -> dict[str, Any]:
        path = self.path

        sha256 = self.sha256

        url = self.url


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "path": path,
            "sha256": sha256,
            "url": url,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        path = d.pop("path")

        sha256 = d.pop("sha256")

        url = d.pop("url")

        artifact = cls(
            path=path,
            sha256=sha256,
            url=url,
        )

        return artifact


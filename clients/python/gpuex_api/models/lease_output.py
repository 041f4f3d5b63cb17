from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="LeaseOutput")



@_attrs_define
class LeaseOutput:
    """ One file a lease's workload left in `/outputs`.

        Attributes:
            expires_at (datetime.datetime): When it is removed (`stored_at` plus the retention).
            name (str): Its path under `/outputs`, e.g. `model/weights.bin`.
            sha256 (str): Hex SHA-256 of its bytes (also sent as `X-Checksum-Sha256` on download).
            size (int): Bytes.
            stored_at (datetime.datetime): When its node last uploaded it.
     """

    expires_at: datetime.datetime
    name: str
    sha256: str
    size: int
    stored_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        expires_at = self.expires_at.isoformat()

        name = self.name

        sha256 = self.sha256

        size = self.size

        stored_at = self.stored_at.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "expires_at": expires_at,
            "name": name,
            "sha256": sha256,
            "size": size,
            "stored_at": stored_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        expires_at = isoparse(d.pop("expires_at"))




        name = d.pop("name")

        sha256 = d.pop("sha256")

        size = d.pop("size")

        stored_at = isoparse(d.pop("stored_at"))




        lease_output = cls(
            expires_at=expires_at,
            name=name,
            sha256=sha256,
            size=size,
            stored_at=stored_at,
        )


        lease_output.additional_properties = d
        return lease_output

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

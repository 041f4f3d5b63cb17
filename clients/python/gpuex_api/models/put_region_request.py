from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="PutRegionRequest")



@_attrs_define
class PutRegionRequest:
    """ 
        Attributes:
            timezone (str): IANA time zone, e.g. `America/New_York`.
     """

    timezone: str





    def to_dict(self) -> dict[str, Any]:
        timezone = self.timezone


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "timezone": timezone,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        timezone = d.pop("timezone")

        put_region_request = cls(
            timezone=timezone,
        )

        return put_region_request


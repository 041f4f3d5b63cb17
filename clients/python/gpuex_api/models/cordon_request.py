from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="CordonRequest")



@_attrs_define
class CordonRequest:
    """ 
        Attributes:
            cordoned (bool): `true` stops new placements; `false` resumes them (and lifts a quarantine).
     """

    cordoned: bool





    def to_dict(self) -> dict[str, Any]:
        cordoned = self.cordoned


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "cordoned": cordoned,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cordoned = d.pop("cordoned")

        cordon_request = cls(
            cordoned=cordoned,
        )

        return cordon_request


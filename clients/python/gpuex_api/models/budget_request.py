from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="BudgetRequest")



@_attrs_define
class BudgetRequest:
    """ A monthly limit on what leases tagged `tag_key=tag_value` may cost.

        Attributes:
            monthly_limit (str): Money: a decimal string (no JSON number, no exponent), 0 or more and below 1000000000, with
                at most 6 decimals. Kept and answered at 6 decimals at most.
            tag_key (str):
            tag_value (str):
     """

    monthly_limit: str
    tag_key: str
    tag_value: str





    def to_dict(self) -> dict[str, Any]:
        monthly_limit = self.monthly_limit

        tag_key = self.tag_key

        tag_value = self.tag_value


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "monthly_limit": monthly_limit,
            "tag_key": tag_key,
            "tag_value": tag_value,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        monthly_limit = d.pop("monthly_limit")

        tag_key = d.pop("tag_key")

        tag_value = d.pop("tag_value")

        budget_request = cls(
            monthly_limit=monthly_limit,
            tag_key=tag_key,
            tag_value=tag_value,
        )

        return budget_request


from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.account_role import AccountRole






T = TypeVar("T", bound="SetRoleRequest")



@_attrs_define
class SetRoleRequest:
    """ 
        Attributes:
            role (AccountRole): The roles an account can be given; the body takes the name as text.
     """

    role: AccountRole





    def to_dict(self) -> dict[str, Any]:
        role = self.role.value


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "role": role,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        role = AccountRole(d.pop("role"))




        set_role_request = cls(
            role=role,
        )

        return set_role_request


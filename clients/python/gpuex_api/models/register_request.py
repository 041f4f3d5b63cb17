from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.registered_role import RegisteredRole






T = TypeVar("T", bound="RegisterRequest")



@_attrs_define
class RegisterRequest:
    """ 
        Attributes:
            email (str): Login name; stored lower-case.
            name (str):
            password (str): At least 12 characters.
            role (RegisteredRole): The roles anyone may register as; the body takes the name as text.
     """

    email: str
    name: str
    password: str
    role: RegisteredRole





    def to_dict(self) -> dict[str, Any]:
        email = self.email

        name = self.name

        password = self.password

        role = self.role.value


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "email": email,
            "name": name,
            "password": password,
            "role": role,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        email = d.pop("email")

        name = d.pop("name")

        password = d.pop("password")

        role = RegisteredRole(d.pop("role"))




        register_request = cls(
            email=email,
            name=name,
            password=password,
            role=role,
        )

        return register_request


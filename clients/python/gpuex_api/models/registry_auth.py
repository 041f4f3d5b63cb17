from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="RegistryAuth")



@_attrs_define
class RegistryAuth:
    """ A buyer's credentials for a private registry. Its `Debug` hides the
    password, so no log line or error message carries it.

        Attributes:
            password (str): The password or access token; never shown again by the API.
            username (str): The registry's user name (for a token, the name the registry asks
                for, e.g. `oauth2accesstoken`); no `:` and no control characters.
     """

    password: str
    username: str





    def to_dict(self) -> dict[str, Any]:
        password = self.password

        username = self.username


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "password": password,
            "username": username,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        password = d.pop("password")

        username = d.pop("username")

        registry_auth = cls(
            password=password,
            username=username,
        )

        return registry_auth


from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="TokenResponse")



@_attrs_define
class TokenResponse:
    """ A token pair: what login and refresh answer.

        Attributes:
            access_token (str):
            expires_at (datetime.datetime):
            expires_in (int): Seconds until the access token expires.
            refresh_expires_at (datetime.datetime): When the refresh token stops working if it is not used.
            refresh_token (str): Swaps for a new pair at `POST /v1/auth/refresh`, once; stored hashed.
            token_type (str): Always `Bearer`.
     """

    access_token: str
    expires_at: datetime.datetime
    expires_in: int
    refresh_expires_at: datetime.datetime
    refresh_token: str
    token_type: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        access_token = self.access_token

        expires_at = self.expires_at.isoformat()

        expires_in = self.expires_in

        refresh_expires_at = self.refresh_expires_at.isoformat()

        refresh_token = self.refresh_token

        token_type = self.token_type


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "access_token": access_token,
            "expires_at": expires_at,
            "expires_in": expires_in,
            "refresh_expires_at": refresh_expires_at,
            "refresh_token": refresh_token,
            "token_type": token_type,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access_token = d.pop("access_token")

        expires_at = isoparse(d.pop("expires_at"))




        expires_in = d.pop("expires_in")

        refresh_expires_at = isoparse(d.pop("refresh_expires_at"))




        refresh_token = d.pop("refresh_token")

        token_type = d.pop("token_type")

        token_response = cls(
            access_token=access_token,
            expires_at=expires_at,
            expires_in=expires_in,
            refresh_expires_at=refresh_expires_at,
            refresh_token=refresh_token,
            token_type=token_type,
        )


        token_response.additional_properties = d
        return token_response

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

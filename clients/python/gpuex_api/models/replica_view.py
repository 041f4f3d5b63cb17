from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="ReplicaView")



@_attrs_define
class ReplicaView:
    """ One replica as it last said it stood.

        Attributes:
            answering (bool): The replica that answered this request.
            applied_seq (int): The last journal row its engine includes.
            epoch (int): The leader's term it last saw in the journal.
            id (UUID):
            lag_ms (int): How long it had been behind rows the leader announced, in milliseconds.
            role (str): `leader`, `follower` or `detached`.
            seen_at (datetime.datetime): When it last wrote its row.
            silent (bool): Not heard from for more than 10 s: stopped, or cut off from the database.
            started_at (datetime.datetime):
            url (str): Where the other replicas reach it (`--advertise-url`).
     """

    answering: bool
    applied_seq: int
    epoch: int
    id: UUID
    lag_ms: int
    role: str
    seen_at: datetime.datetime
    silent: bool
    started_at: datetime.datetime
    url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        answering = self.answering

        applied_seq = self.applied_seq

        epoch = self.epoch

        id = str(self.id)

        lag_ms = self.lag_ms

        role = self.role

        seen_at = self.seen_at.isoformat()

        silent = self.silent

        started_at = self.started_at.isoformat()

        url = self.url


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "answering": answering,
            "applied_seq": applied_seq,
            "epoch": epoch,
            "id": id,
            "lag_ms": lag_ms,
            "role": role,
            "seen_at": seen_at,
            "silent": silent,
            "started_at": started_at,
            "url": url,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        answering = d.pop("answering")

        applied_seq = d.pop("applied_seq")

        epoch = d.pop("epoch")

        id = UUID(d.pop("id"))




        lag_ms = d.pop("lag_ms")

        role = d.pop("role")

        seen_at = isoparse(d.pop("seen_at"))




        silent = d.pop("silent")

        started_at = isoparse(d.pop("started_at"))




        url = d.pop("url")

        replica_view = cls(
            answering=answering,
            applied_seq=applied_seq,
            epoch=epoch,
            id=id,
            lag_ms=lag_ms,
            role=role,
            seen_at=seen_at,
            silent=silent,
            started_at=started_at,
            url=url,
        )


        replica_view.additional_properties = d
        return replica_view

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Readiness")



@_attrs_define
class Readiness:
    """ A ready replica, and its part in the market (ARCHITECTURE.md §12).

        Attributes:
            applied_seq (int): The last journal row this replica's engine includes (ARCHITECTURE.md §20).
            epoch (int): The leader's term this replica last saw in the journal (0 on SQLite,
                where one process always leads).
            lag_ms (int): How long this replica has been behind rows the leader announced, in
                milliseconds; 0 when caught up. Past [`LAG_LIMIT_MS`] it is not ready.
            role (str): `leader` (runs the engine), `follower` (hands engine commands to the
                leader) or `detached` (no leader is known to it yet: engine commands
                answer 503 with `Retry-After` until one is).
            status (str): `ok`
     """

    applied_seq: int
    epoch: int
    lag_ms: int
    role: str
    status: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        applied_seq = self.applied_seq

        epoch = self.epoch

        lag_ms = self.lag_ms

        role = self.role

        status = self.status


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "applied_seq": applied_seq,
            "epoch": epoch,
            "lag_ms": lag_ms,
            "role": role,
            "status": status,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        applied_seq = d.pop("applied_seq")

        epoch = d.pop("epoch")

        lag_ms = d.pop("lag_ms")

        role = d.pop("role")

        status = d.pop("status")

        readiness = cls(
            applied_seq=applied_seq,
            epoch=epoch,
            lag_ms=lag_ms,
            role=role,
            status=status,
        )


        readiness.additional_properties = d
        return readiness

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

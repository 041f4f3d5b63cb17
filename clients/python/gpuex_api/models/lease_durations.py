from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="LeaseDurations")



@_attrs_define
class LeaseDurations:
    """ How long leases ran in the window, in seconds (nearest-rank percentiles).
    A lease cut by the window's edges counts the part inside it.

        Attributes:
            leases (int):
            max_s (int | None | Unset):
            mean_s (None | str | Unset): To 3 decimals; absent with no lease. Example: 5400.
            p50_s (int | None | Unset):
            p90_s (int | None | Unset):
            p99_s (int | None | Unset):
     """

    leases: int
    max_s: int | None | Unset = UNSET
    mean_s: None | str | Unset = UNSET
    p50_s: int | None | Unset = UNSET
    p90_s: int | None | Unset = UNSET
    p99_s: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        leases = self.leases

        max_s: int | None | Unset
        if isinstance(self.max_s, Unset):
            max_s = UNSET
        else:
            max_s = self.max_s

        mean_s: None | str | Unset
        if isinstance(self.mean_s, Unset):
            mean_s = UNSET
        else:
            mean_s = self.mean_s

        p50_s: int | None | Unset
        if isinstance(self.p50_s, Unset):
            p50_s = UNSET
        else:
            p50_s = self.p50_s

        p90_s: int | None | Unset
        if isinstance(self.p90_s, Unset):
            p90_s = UNSET
        else:
            p90_s = self.p90_s

        p99_s: int | None | Unset
        if isinstance(self.p99_s, Unset):
            p99_s = UNSET
        else:
            p99_s = self.p99_s


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "leases": leases,
        })
        if max_s is not UNSET:
            field_dict["max_s"] = max_s
        if mean_s is not UNSET:
            field_dict["mean_s"] = mean_s
        if p50_s is not UNSET:
            field_dict["p50_s"] = p50_s
        if p90_s is not UNSET:
            field_dict["p90_s"] = p90_s
        if p99_s is not UNSET:
            field_dict["p99_s"] = p99_s

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        leases = d.pop("leases")

        def _parse_max_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_s = _parse_max_s(d.pop("max_s", UNSET))


        def _parse_mean_s(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mean_s = _parse_mean_s(d.pop("mean_s", UNSET))


        def _parse_p50_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        p50_s = _parse_p50_s(d.pop("p50_s", UNSET))


        def _parse_p90_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        p90_s = _parse_p90_s(d.pop("p90_s", UNSET))


        def _parse_p99_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        p99_s = _parse_p99_s(d.pop("p99_s", UNSET))


        lease_durations = cls(
            leases=leases,
            max_s=max_s,
            mean_s=mean_s,
            p50_s=p50_s,
            p90_s=p90_s,
            p99_s=p99_s,
        )


        lease_durations.additional_properties = d
        return lease_durations

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

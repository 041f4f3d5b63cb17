from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.lease_run_state import LeaseRunState
from ..types import UNSET, Unset
from typing import cast
from uuid import UUID






T = TypeVar("T", bound="LeaseReport")



@_attrs_define
class LeaseReport:
    """ A lease as the agent sees it.

        Attributes:
            lease_id (UUID):
            state (LeaseRunState): Where a lease's workload stands on the node.
            device (None | str | Unset): The `CUDA_VISIBLE_DEVICES` value, once provisioned.
     """

    lease_id: UUID
    state: LeaseRunState
    device: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        lease_id = str(self.lease_id)

        state = self.state.value

        device: None | str | Unset
        if isinstance(self.device, Unset):
            device = UNSET
        else:
            device = self.device


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "lease_id": lease_id,
            "state": state,
        })
        if device is not UNSET:
            field_dict["device"] = device

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        lease_id = UUID(d.pop("lease_id"))




        state = LeaseRunState(d.pop("state"))




        def _parse_device(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        device = _parse_device(d.pop("device", UNSET))


        lease_report = cls(
            lease_id=lease_id,
            state=state,
            device=device,
        )


        lease_report.additional_properties = d
        return lease_report

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

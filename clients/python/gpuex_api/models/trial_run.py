from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.run_state import RunState
from ..types import UNSET, Unset
from typing import cast
from uuid import UUID






T = TypeVar("T", bound="TrialRun")



@_attrs_define
class TrialRun:
    """ One shape of a trial.

        Attributes:
            shape (str): As asked: `mig-1g.10gb`, `shared-250`, `whole`.
            state (RunState): Where one shape's run stands.
            exit_code (int | None | Unset):
            gpu_util_p50 (None | str | Unset): The median of the slice's utilization over the run's usage records, 0–1.
            lease_id (None | Unset | UUID):
            order_id (None | Unset | UUID): The order placed for it (absent when refused).
            peak_vram_mb (int | None | Unset): The most GPU memory the workload held, in MB, as the agent measured
                it (on the simulated backend: its host memory, which stands in).
            placed (None | str | Unset): The slice it got, as the lease holds it (`mig 1g.10gb`, `shared 250`,
                `whole`): the market gives the cheapest adequate slice, which is the
                shape asked unless none of it was free.
            price_per_hour (None | str | Unset): The lease's on-demand price.
            reason (None | str | Unset): Why it failed or was refused (a reason code, or the lease's end reason).
     """

    shape: str
    state: RunState
    exit_code: int | None | Unset = UNSET
    gpu_util_p50: None | str | Unset = UNSET
    lease_id: None | Unset | UUID = UNSET
    order_id: None | Unset | UUID = UNSET
    peak_vram_mb: int | None | Unset = UNSET
    placed: None | str | Unset = UNSET
    price_per_hour: None | str | Unset = UNSET
    reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        shape = self.shape

        state = self.state.value

        exit_code: int | None | Unset
        if isinstance(self.exit_code, Unset):
            exit_code = UNSET
        else:
            exit_code = self.exit_code

        gpu_util_p50: None | str | Unset
        if isinstance(self.gpu_util_p50, Unset):
            gpu_util_p50 = UNSET
        else:
            gpu_util_p50 = self.gpu_util_p50

        lease_id: None | str | Unset
        if isinstance(self.lease_id, Unset):
            lease_id = UNSET
        elif isinstance(self.lease_id, UUID):
            lease_id = str(self.lease_id)
        else:
            lease_id = self.lease_id

        order_id: None | str | Unset
        if isinstance(self.order_id, Unset):
            order_id = UNSET
        elif isinstance(self.order_id, UUID):
            order_id = str(self.order_id)
        else:
            order_id = self.order_id

        peak_vram_mb: int | None | Unset
        if isinstance(self.peak_vram_mb, Unset):
            peak_vram_mb = UNSET
        else:
            peak_vram_mb = self.peak_vram_mb

        placed: None | str | Unset
        if isinstance(self.placed, Unset):
            placed = UNSET
        else:
            placed = self.placed

        price_per_hour: None | str | Unset
        if isinstance(self.price_per_hour, Unset):
            price_per_hour = UNSET
        else:
            price_per_hour = self.price_per_hour

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "shape": shape,
            "state": state,
        })
        if exit_code is not UNSET:
            field_dict["exit_code"] = exit_code
        if gpu_util_p50 is not UNSET:
            field_dict["gpu_util_p50"] = gpu_util_p50
        if lease_id is not UNSET:
            field_dict["lease_id"] = lease_id
        if order_id is not UNSET:
            field_dict["order_id"] = order_id
        if peak_vram_mb is not UNSET:
            field_dict["peak_vram_mb"] = peak_vram_mb
        if placed is not UNSET:
            field_dict["placed"] = placed
        if price_per_hour is not UNSET:
            field_dict["price_per_hour"] = price_per_hour
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        shape = d.pop("shape")

        state = RunState(d.pop("state"))




        def _parse_exit_code(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        exit_code = _parse_exit_code(d.pop("exit_code", UNSET))


        def _parse_gpu_util_p50(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        gpu_util_p50 = _parse_gpu_util_p50(d.pop("gpu_util_p50", UNSET))


        def _parse_lease_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                lease_id_type_0 = UUID(data)



                return lease_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        lease_id = _parse_lease_id(d.pop("lease_id", UNSET))


        def _parse_order_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                order_id_type_0 = UUID(data)



                return order_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        order_id = _parse_order_id(d.pop("order_id", UNSET))


        def _parse_peak_vram_mb(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        peak_vram_mb = _parse_peak_vram_mb(d.pop("peak_vram_mb", UNSET))


        def _parse_placed(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        placed = _parse_placed(d.pop("placed", UNSET))


        def _parse_price_per_hour(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        price_per_hour = _parse_price_per_hour(d.pop("price_per_hour", UNSET))


        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))


        trial_run = cls(
            shape=shape,
            state=state,
            exit_code=exit_code,
            gpu_util_p50=gpu_util_p50,
            lease_id=lease_id,
            order_id=order_id,
            peak_vram_mb=peak_vram_mb,
            placed=placed,
            price_per_hour=price_per_hour,
            reason=reason,
        )


        trial_run.additional_properties = d
        return trial_run

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

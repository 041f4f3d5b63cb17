from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
from uuid import UUID






T = TypeVar("T", bound="EarningsGroup")



@_attrs_define
class EarningsGroup:
    """ Earnings of one (node, GPU model, mode, period).

        Attributes:
            gross (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            lines (int):
            net (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed; the
                ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            period (str): `YYYY-MM` or `YYYY-MM-DD`.
            platform_fee (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or
                billed; the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            gpu_model (None | str | Unset):
            mode (None | str | Unset):
            node_id (None | Unset | UUID):
     """

    gross: str
    lines: int
    net: str
    period: str
    platform_fee: str
    gpu_model: None | str | Unset = UNSET
    mode: None | str | Unset = UNSET
    node_id: None | Unset | UUID = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        gross = self.gross

        lines = self.lines

        net = self.net

        period = self.period

        platform_fee = self.platform_fee

        gpu_model: None | str | Unset
        if isinstance(self.gpu_model, Unset):
            gpu_model = UNSET
        else:
            gpu_model = self.gpu_model

        mode: None | str | Unset
        if isinstance(self.mode, Unset):
            mode = UNSET
        else:
            mode = self.mode

        node_id: None | str | Unset
        if isinstance(self.node_id, Unset):
            node_id = UNSET
        elif isinstance(self.node_id, UUID):
            node_id = str(self.node_id)
        else:
            node_id = self.node_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "gross": gross,
            "lines": lines,
            "net": net,
            "period": period,
            "platform_fee": platform_fee,
        })
        if gpu_model is not UNSET:
            field_dict["gpu_model"] = gpu_model
        if mode is not UNSET:
            field_dict["mode"] = mode
        if node_id is not UNSET:
            field_dict["node_id"] = node_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        gross = d.pop("gross")

        lines = d.pop("lines")

        net = d.pop("net")

        period = d.pop("period")

        platform_fee = d.pop("platform_fee")

        def _parse_gpu_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        gpu_model = _parse_gpu_model(d.pop("gpu_model", UNSET))


        def _parse_mode(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mode = _parse_mode(d.pop("mode", UNSET))


        def _parse_node_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                node_id_type_0 = UUID(data)



                return node_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        node_id = _parse_node_id(d.pop("node_id", UNSET))


        earnings_group = cls(
            gross=gross,
            lines=lines,
            net=net,
            period=period,
            platform_fee=platform_fee,
            gpu_model=gpu_model,
            mode=mode,
            node_id=node_id,
        )


        earnings_group.additional_properties = d
        return earnings_group

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

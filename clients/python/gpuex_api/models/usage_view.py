from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="UsageView")



@_attrs_define
class UsageView:
    """ What a lease has used and been charged so far.

        Attributes:
            charged (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
            tflops_s (str): Metered by the agent (standard TFLOPS × seconds, GB × seconds).
            vram_gb_s (str):
            billed_until (datetime.datetime | None | Unset): Charged up to here.
     """

    charged: str
    tflops_s: str
    vram_gb_s: str
    billed_until: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        charged = self.charged

        tflops_s = self.tflops_s

        vram_gb_s = self.vram_gb_s

        billed_until: None | str | Unset
        if isinstance(self.billed_until, Unset):
            billed_until = UNSET
        elif isinstance(self.billed_until, datetime.datetime):
            billed_until = self.billed_until.isoformat()
        else:
            billed_until = self.billed_until


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "charged": charged,
            "tflops_s": tflops_s,
            "vram_gb_s": vram_gb_s,
        })
        if billed_until is not UNSET:
            field_dict["billed_until"] = billed_until

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        charged = d.pop("charged")

        tflops_s = d.pop("tflops_s")

        vram_gb_s = d.pop("vram_gb_s")

        def _parse_billed_until(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                billed_until_type_0 = isoparse(data)



                return billed_until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        billed_until = _parse_billed_until(d.pop("billed_until", UNSET))


        usage_view = cls(
            charged=charged,
            tflops_s=tflops_s,
            vram_gb_s=vram_gb_s,
            billed_until=billed_until,
        )


        usage_view.additional_properties = d
        return usage_view

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

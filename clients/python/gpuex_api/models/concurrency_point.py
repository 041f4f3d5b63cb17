from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="ConcurrencyPoint")



@_attrs_define
class ConcurrencyPoint:
    """ How many GPUs were held at once in one stretch of an import's window.

        Attributes:
            from_ (datetime.datetime):
            mean_gpus (str): GPUs held on average over the stretch, to 3 decimals. Example: 12.5.
            peak_gpus (str): The most GPUs held at any second of it. Example: 16.
            to (datetime.datetime):
     """

    from_: datetime.datetime
    mean_gpus: str
    peak_gpus: str
    to: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from_ = self.from_.isoformat()

        mean_gpus = self.mean_gpus

        peak_gpus = self.peak_gpus

        to = self.to.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "from": from_,
            "mean_gpus": mean_gpus,
            "peak_gpus": peak_gpus,
            "to": to,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        from_ = isoparse(d.pop("from"))




        mean_gpus = d.pop("mean_gpus")

        peak_gpus = d.pop("peak_gpus")

        to = isoparse(d.pop("to"))




        concurrency_point = cls(
            from_=from_,
            mean_gpus=mean_gpus,
            peak_gpus=peak_gpus,
            to=to,
        )


        concurrency_point.additional_properties = d
        return concurrency_point

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

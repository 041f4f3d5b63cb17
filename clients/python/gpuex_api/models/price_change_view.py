from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.unit import Unit
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="PriceChangeView")



@_attrs_define
class PriceChangeView:
    """ 
        Attributes:
            changed_at (datetime.datetime):
            currency (str):
            gpu_model (str):
            id (int):
            list_price (str):
            region (str):
            unit (Unit): A unit gpuex sells, priced per hour and metered per second.
            previous_price (None | str | Unset):
     """

    changed_at: datetime.datetime
    currency: str
    gpu_model: str
    id: int
    list_price: str
    region: str
    unit: Unit
    previous_price: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        changed_at = self.changed_at.isoformat()

        currency = self.currency

        gpu_model = self.gpu_model

        id = self.id

        list_price = self.list_price

        region = self.region

        unit = self.unit.value

        previous_price: None | str | Unset
        if isinstance(self.previous_price, Unset):
            previous_price = UNSET
        else:
            previous_price = self.previous_price


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "changed_at": changed_at,
            "currency": currency,
            "gpu_model": gpu_model,
            "id": id,
            "list_price": list_price,
            "region": region,
            "unit": unit,
        })
        if previous_price is not UNSET:
            field_dict["previous_price"] = previous_price

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        changed_at = isoparse(d.pop("changed_at"))




        currency = d.pop("currency")

        gpu_model = d.pop("gpu_model")

        id = d.pop("id")

        list_price = d.pop("list_price")

        region = d.pop("region")

        unit = Unit(d.pop("unit"))




        def _parse_previous_price(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        previous_price = _parse_previous_price(d.pop("previous_price", UNSET))


        price_change_view = cls(
            changed_at=changed_at,
            currency=currency,
            gpu_model=gpu_model,
            id=id,
            list_price=list_price,
            region=region,
            unit=unit,
            previous_price=previous_price,
        )


        price_change_view.additional_properties = d
        return price_change_view

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

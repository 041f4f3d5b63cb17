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

if TYPE_CHECKING:
  from ..models.resale_offer_slots_item import ResaleOfferSlotsItem





T = TypeVar("T", bound="ResaleOffer")



@_attrs_define
class ResaleOffer:
    """ An open listing as the market shows it: the slice, never the seller.

        Attributes:
            ask_per_hour (str):
            from_ (datetime.datetime):
            gpu_model (str):
            gpus (int):
            id (UUID):
            region (str):
            reserved_price_per_hour (str): What the seller pays per hour for the slice: the ask saves at least 10 % on it.
            slots (list[ResaleOfferSlotsItem]): What each GPU holds: `{"kind": "whole"}`, a MIG instance or a share.
            tflops_h (str):
            until (datetime.datetime):
            vram_h (str):
     """

    ask_per_hour: str
    from_: datetime.datetime
    gpu_model: str
    gpus: int
    id: UUID
    region: str
    reserved_price_per_hour: str
    slots: list[ResaleOfferSlotsItem]
    tflops_h: str
    until: datetime.datetime
    vram_h: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.resale_offer_slots_item import ResaleOfferSlotsItem
        ask_per_hour = self.ask_per_hour

        from_ = self.from_.isoformat()

        gpu_model = self.gpu_model

        gpus = self.gpus

        id = str(self.id)

        region = self.region

        reserved_price_per_hour = self.reserved_price_per_hour

        slots = []
        for slots_item_data in self.slots:
            slots_item = slots_item_data.to_dict()
            slots.append(slots_item)



        tflops_h = self.tflops_h

        until = self.until.isoformat()

        vram_h = self.vram_h


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "ask_per_hour": ask_per_hour,
            "from": from_,
            "gpu_model": gpu_model,
            "gpus": gpus,
            "id": id,
            "region": region,
            "reserved_price_per_hour": reserved_price_per_hour,
            "slots": slots,
            "tflops_h": tflops_h,
            "until": until,
            "vram_h": vram_h,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.resale_offer_slots_item import ResaleOfferSlotsItem
        d = dict(src_dict)
        ask_per_hour = d.pop("ask_per_hour")

        from_ = isoparse(d.pop("from"))




        gpu_model = d.pop("gpu_model")

        gpus = d.pop("gpus")

        id = UUID(d.pop("id"))




        region = d.pop("region")

        reserved_price_per_hour = d.pop("reserved_price_per_hour")

        slots = []
        _slots = d.pop("slots")
        for slots_item_data in (_slots):
            slots_item = ResaleOfferSlotsItem.from_dict(slots_item_data)



            slots.append(slots_item)


        tflops_h = d.pop("tflops_h")

        until = isoparse(d.pop("until"))




        vram_h = d.pop("vram_h")

        resale_offer = cls(
            ask_per_hour=ask_per_hour,
            from_=from_,
            gpu_model=gpu_model,
            gpus=gpus,
            id=id,
            region=region,
            reserved_price_per_hour=reserved_price_per_hour,
            slots=slots,
            tflops_h=tflops_h,
            until=until,
            vram_h=vram_h,
        )


        resale_offer.additional_properties = d
        return resale_offer

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

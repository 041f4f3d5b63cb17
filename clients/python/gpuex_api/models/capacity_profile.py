from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from dateutil.parser import isoparse
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.group_profile import GroupProfile





T = TypeVar("T", bound="CapacityProfile")



@_attrs_define
class CapacityProfile:
    """ 
        Attributes:
            by_gpu_model (list[GroupProfile]):
            by_mode (list[GroupProfile]):
            by_tag (list[GroupProfile]): One group per tag key and value; a lease with two tags is in two groups.
            elapsed_s (int): The part of the window already passed, over which means are taken.
            from_ (datetime.datetime):
            spot_share (str): Share of the TFLOPS-hours held that ran as spot, to 6 decimals. Example: 0.25.
            to (datetime.datetime):
            total (GroupProfile): The profile of one group (or of everything, in `total`).
     """

    by_gpu_model: list[GroupProfile]
    by_mode: list[GroupProfile]
    by_tag: list[GroupProfile]
    elapsed_s: int
    from_: datetime.datetime
    spot_share: str
    to: datetime.datetime
    total: GroupProfile
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.group_profile import GroupProfile
        by_gpu_model = []
        for by_gpu_model_item_data in self.by_gpu_model:
            by_gpu_model_item = by_gpu_model_item_data.to_dict()
            by_gpu_model.append(by_gpu_model_item)



        by_mode = []
        for by_mode_item_data in self.by_mode:
            by_mode_item = by_mode_item_data.to_dict()
            by_mode.append(by_mode_item)



        by_tag = []
        for by_tag_item_data in self.by_tag:
            by_tag_item = by_tag_item_data.to_dict()
            by_tag.append(by_tag_item)



        elapsed_s = self.elapsed_s

        from_ = self.from_.isoformat()

        spot_share = self.spot_share

        to = self.to.isoformat()

        total = self.total.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "by_gpu_model": by_gpu_model,
            "by_mode": by_mode,
            "by_tag": by_tag,
            "elapsed_s": elapsed_s,
            "from": from_,
            "spot_share": spot_share,
            "to": to,
            "total": total,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.group_profile import GroupProfile
        d = dict(src_dict)
        by_gpu_model = []
        _by_gpu_model = d.pop("by_gpu_model")
        for by_gpu_model_item_data in (_by_gpu_model):
            by_gpu_model_item = GroupProfile.from_dict(by_gpu_model_item_data)



            by_gpu_model.append(by_gpu_model_item)


        by_mode = []
        _by_mode = d.pop("by_mode")
        for by_mode_item_data in (_by_mode):
            by_mode_item = GroupProfile.from_dict(by_mode_item_data)



            by_mode.append(by_mode_item)


        by_tag = []
        _by_tag = d.pop("by_tag")
        for by_tag_item_data in (_by_tag):
            by_tag_item = GroupProfile.from_dict(by_tag_item_data)



            by_tag.append(by_tag_item)


        elapsed_s = d.pop("elapsed_s")

        from_ = isoparse(d.pop("from"))




        spot_share = d.pop("spot_share")

        to = isoparse(d.pop("to"))




        total = GroupProfile.from_dict(d.pop("total"))




        capacity_profile = cls(
            by_gpu_model=by_gpu_model,
            by_mode=by_mode,
            by_tag=by_tag,
            elapsed_s=elapsed_s,
            from_=from_,
            spot_share=spot_share,
            to=to,
            total=total,
        )


        capacity_profile.additional_properties = d
        return capacity_profile

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

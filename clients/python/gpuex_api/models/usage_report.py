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
  from ..models.usage_group import UsageGroup





T = TypeVar("T", bound="UsageReport")



@_attrs_define
class UsageReport:
    """ 
        Attributes:
            currency (str):
            from_ (datetime.datetime):
            group_by (str):
            groups (list[UsageGroup]):
            to (datetime.datetime):
            total (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
     """

    currency: str
    from_: datetime.datetime
    group_by: str
    groups: list[UsageGroup]
    to: datetime.datetime
    total: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.usage_group import UsageGroup
        currency = self.currency

        from_ = self.from_.isoformat()

        group_by = self.group_by

        groups = []
        for groups_item_data in self.groups:
            groups_item = groups_item_data.to_dict()
            groups.append(groups_item)



        to = self.to.isoformat()

        total = self.total


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "currency": currency,
            "from": from_,
            "group_by": group_by,
            "groups": groups,
            "to": to,
            "total": total,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.usage_group import UsageGroup
        d = dict(src_dict)
        currency = d.pop("currency")

        from_ = isoparse(d.pop("from"))




        group_by = d.pop("group_by")

        groups = []
        _groups = d.pop("groups")
        for groups_item_data in (_groups):
            groups_item = UsageGroup.from_dict(groups_item_data)



            groups.append(groups_item)


        to = isoparse(d.pop("to"))




        total = d.pop("total")

        usage_report = cls(
            currency=currency,
            from_=from_,
            group_by=group_by,
            groups=groups,
            to=to,
            total=total,
        )


        usage_report.additional_properties = d
        return usage_report

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

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
  from ..models.conversion_view import ConversionView
  from ..models.order_type import OrderType
  from ..models.fill_view_report import FillViewReport





T = TypeVar("T", bound="FillView")



@_attrs_define
class FillView:
    """ One fill of an order: the lease, its price and why.

        Attributes:
            conversions (list[ConversionView]): The lease's mode conversions since the fill, oldest first.
            created_at (datetime.datetime):
            lease_id (UUID):
            order_type (OrderType): An order's type as its fills report it (ARCHITECTURE.md §22).
            report (FillViewReport): Sources considered, the price rule, clearing index, units and why this slice.
     """

    conversions: list[ConversionView]
    created_at: datetime.datetime
    lease_id: UUID
    order_type: OrderType
    report: FillViewReport
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.conversion_view import ConversionView
        from ..models.order_type import OrderType
        from ..models.fill_view_report import FillViewReport
        conversions = []
        for conversions_item_data in self.conversions:
            conversions_item = conversions_item_data.to_dict()
            conversions.append(conversions_item)



        created_at = self.created_at.isoformat()

        lease_id = str(self.lease_id)

        order_type = self.order_type.to_dict()

        report = self.report.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "conversions": conversions,
            "created_at": created_at,
            "lease_id": lease_id,
            "order_type": order_type,
            "report": report,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.conversion_view import ConversionView
        from ..models.order_type import OrderType
        from ..models.fill_view_report import FillViewReport
        d = dict(src_dict)
        conversions = []
        _conversions = d.pop("conversions")
        for conversions_item_data in (_conversions):
            conversions_item = ConversionView.from_dict(conversions_item_data)



            conversions.append(conversions_item)


        created_at = isoparse(d.pop("created_at"))




        lease_id = UUID(d.pop("lease_id"))




        order_type = OrderType.from_dict(d.pop("order_type"))




        report = FillViewReport.from_dict(d.pop("report"))




        fill_view = cls(
            conversions=conversions,
            created_at=created_at,
            lease_id=lease_id,
            order_type=order_type,
            report=report,
        )


        fill_view.additional_properties = d
        return fill_view

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

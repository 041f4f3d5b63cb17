from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
from uuid import UUID

if TYPE_CHECKING:
  from ..models.lease_output import LeaseOutput





T = TypeVar("T", bound="LeaseOutputs")



@_attrs_define
class LeaseOutputs:
    """ A lease's outputs and the terms they are kept on.

        Attributes:
            lease_id (UUID):
            max_bytes (int): The most a lease's outputs may weigh in all, in bytes.
            outputs (list[LeaseOutput]):
            retention_days (int): Days each output is kept after it was stored.
            storage_price_per_gb_month (str): What keeping them costs per GB-month (money string); `0`: included
                in the lease's price. Example: 0.
            total_bytes (int): Bytes in all.
     """

    lease_id: UUID
    max_bytes: int
    outputs: list[LeaseOutput]
    retention_days: int
    storage_price_per_gb_month: str
    total_bytes: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.lease_output import LeaseOutput
        lease_id = str(self.lease_id)

        max_bytes = self.max_bytes

        outputs = []
        for outputs_item_data in self.outputs:
            outputs_item = outputs_item_data.to_dict()
            outputs.append(outputs_item)



        retention_days = self.retention_days

        storage_price_per_gb_month = self.storage_price_per_gb_month

        total_bytes = self.total_bytes


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "lease_id": lease_id,
            "max_bytes": max_bytes,
            "outputs": outputs,
            "retention_days": retention_days,
            "storage_price_per_gb_month": storage_price_per_gb_month,
            "total_bytes": total_bytes,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.lease_output import LeaseOutput
        d = dict(src_dict)
        lease_id = UUID(d.pop("lease_id"))




        max_bytes = d.pop("max_bytes")

        outputs = []
        _outputs = d.pop("outputs")
        for outputs_item_data in (_outputs):
            outputs_item = LeaseOutput.from_dict(outputs_item_data)



            outputs.append(outputs_item)


        retention_days = d.pop("retention_days")

        storage_price_per_gb_month = d.pop("storage_price_per_gb_month")

        total_bytes = d.pop("total_bytes")

        lease_outputs = cls(
            lease_id=lease_id,
            max_bytes=max_bytes,
            outputs=outputs,
            retention_days=retention_days,
            storage_price_per_gb_month=storage_price_per_gb_month,
            total_bytes=total_bytes,
        )


        lease_outputs.additional_properties = d
        return lease_outputs

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.status_report_provisioned_status import StatusReportProvisionedStatus
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime






T = TypeVar("T", bound="StatusReportProvisioned")



@_attrs_define
class StatusReportProvisioned:
    """ The slice exists and the workload (if any) started: the lease is `running`.

        Attributes:
            at (datetime.datetime): When it happened on the agent's clock; billing starts at `provisioned`'s `at`.
            device (str): What the workload sees as `CUDA_VISIBLE_DEVICES`: a `MIG-…` UUID, or
                `GPU-…` UUIDs joined with commas.
            status (StatusReportProvisionedStatus):
            image_id (None | str | Unset): A container's image by the ID it resolved to (`sha256:` and 64
                hex digits); absent for a command without an image.
     """

    at: datetime.datetime
    device: str
    status: StatusReportProvisionedStatus
    image_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        device = self.device

        status = self.status.value

        image_id: None | str | Unset
        if isinstance(self.image_id, Unset):
            image_id = UNSET
        else:
            image_id = self.image_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "device": device,
            "status": status,
        })
        if image_id is not UNSET:
            field_dict["image_id"] = image_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = isoparse(d.pop("at"))




        device = d.pop("device")

        status = StatusReportProvisionedStatus(d.pop("status"))




        def _parse_image_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image_id = _parse_image_id(d.pop("image_id", UNSET))


        status_report_provisioned = cls(
            at=at,
            device=device,
            status=status,
            image_id=image_id,
        )


        status_report_provisioned.additional_properties = d
        return status_report_provisioned

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

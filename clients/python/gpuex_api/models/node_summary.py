from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.node_status import NodeStatus
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="NodeSummary")



@_attrs_define
class NodeSummary:
    """ A node as listed.

        Attributes:
            cordoned (bool): No new placements while cordoned.
            created_at (datetime.datetime):
            gpu_count (int): GPUs gpuex sells on this node.
            id (UUID):
            name (str):
            provider_id (UUID):
            quarantined (bool): The GPUs changed under live leases; cleared by uncordoning.
            region (str):
            simulated (bool): An admin allowed this node the `simulated` agent backend.
            status (NodeStatus): Where a node stands; rows keep the name as text (the market's restore
                skips `lost` and `deleted`).
            under_review (bool): For a person to look at: a re-inventory changed its models or GPU
                count (cordoned until an admin accepts with `PUT /v1/admin/nodes/{id}`),
                or its agent reported usage beyond what a lease holds times the
                interval (ARCHITECTURE.md §19; those records were refused).
            hostname (None | str | Unset): The host name the agent registered with.
            last_heartbeat_at (datetime.datetime | None | Unset):
            registered_at (datetime.datetime | None | Unset):
            review_reason (None | str | Unset): What put the node under review first.
            zone (None | str | Unset): Its failure domain within the region, if the provider named one.
     """

    cordoned: bool
    created_at: datetime.datetime
    gpu_count: int
    id: UUID
    name: str
    provider_id: UUID
    quarantined: bool
    region: str
    simulated: bool
    status: NodeStatus
    under_review: bool
    hostname: None | str | Unset = UNSET
    last_heartbeat_at: datetime.datetime | None | Unset = UNSET
    registered_at: datetime.datetime | None | Unset = UNSET
    review_reason: None | str | Unset = UNSET
    zone: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        cordoned = self.cordoned

        created_at = self.created_at.isoformat()

        gpu_count = self.gpu_count

        id = str(self.id)

        name = self.name

        provider_id = str(self.provider_id)

        quarantined = self.quarantined

        region = self.region

        simulated = self.simulated

        status = self.status.value

        under_review = self.under_review

        hostname: None | str | Unset
        if isinstance(self.hostname, Unset):
            hostname = UNSET
        else:
            hostname = self.hostname

        last_heartbeat_at: None | str | Unset
        if isinstance(self.last_heartbeat_at, Unset):
            last_heartbeat_at = UNSET
        elif isinstance(self.last_heartbeat_at, datetime.datetime):
            last_heartbeat_at = self.last_heartbeat_at.isoformat()
        else:
            last_heartbeat_at = self.last_heartbeat_at

        registered_at: None | str | Unset
        if isinstance(self.registered_at, Unset):
            registered_at = UNSET
        elif isinstance(self.registered_at, datetime.datetime):
            registered_at = self.registered_at.isoformat()
        else:
            registered_at = self.registered_at

        review_reason: None | str | Unset
        if isinstance(self.review_reason, Unset):
            review_reason = UNSET
        else:
            review_reason = self.review_reason

        zone: None | str | Unset
        if isinstance(self.zone, Unset):
            zone = UNSET
        else:
            zone = self.zone


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "cordoned": cordoned,
            "created_at": created_at,
            "gpu_count": gpu_count,
            "id": id,
            "name": name,
            "provider_id": provider_id,
            "quarantined": quarantined,
            "region": region,
            "simulated": simulated,
            "status": status,
            "under_review": under_review,
        })
        if hostname is not UNSET:
            field_dict["hostname"] = hostname
        if last_heartbeat_at is not UNSET:
            field_dict["last_heartbeat_at"] = last_heartbeat_at
        if registered_at is not UNSET:
            field_dict["registered_at"] = registered_at
        if review_reason is not UNSET:
            field_dict["review_reason"] = review_reason
        if zone is not UNSET:
            field_dict["zone"] = zone

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cordoned = d.pop("cordoned")

        created_at = isoparse(d.pop("created_at"))




        gpu_count = d.pop("gpu_count")

        id = UUID(d.pop("id"))




        name = d.pop("name")

        provider_id = UUID(d.pop("provider_id"))




        quarantined = d.pop("quarantined")

        region = d.pop("region")

        simulated = d.pop("simulated")

        status = NodeStatus(d.pop("status"))




        under_review = d.pop("under_review")

        def _parse_hostname(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        hostname = _parse_hostname(d.pop("hostname", UNSET))


        def _parse_last_heartbeat_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_heartbeat_at_type_0 = isoparse(data)



                return last_heartbeat_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_heartbeat_at = _parse_last_heartbeat_at(d.pop("last_heartbeat_at", UNSET))


        def _parse_registered_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                registered_at_type_0 = isoparse(data)



                return registered_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        registered_at = _parse_registered_at(d.pop("registered_at", UNSET))


        def _parse_review_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        review_reason = _parse_review_reason(d.pop("review_reason", UNSET))


        def _parse_zone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        zone = _parse_zone(d.pop("zone", UNSET))


        node_summary = cls(
            cordoned=cordoned,
            created_at=created_at,
            gpu_count=gpu_count,
            id=id,
            name=name,
            provider_id=provider_id,
            quarantined=quarantined,
            region=region,
            simulated=simulated,
            status=status,
            under_review=under_review,
            hostname=hostname,
            last_heartbeat_at=last_heartbeat_at,
            registered_at=registered_at,
            review_reason=review_reason,
            zone=zone,
        )


        node_summary.additional_properties = d
        return node_summary

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

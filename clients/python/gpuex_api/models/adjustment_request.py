from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.adjustment_request_tags_type_0 import AdjustmentRequestTagsType0





T = TypeVar("T", bound="AdjustmentRequest")



@_attrs_define
class AdjustmentRequest:
    """ 
        Attributes:
            amount (str): Money: a decimal string (no JSON number, no exponent), above 0 and below 1000000000, with at most
                6 decimals. Kept and answered at 6 decimals at most.
            reason (str): Why; shown on the invoice and in the export.
            user_id (UUID):
            lease_id (None | Unset | UUID): The lease it concerns, if any.
            period_end (datetime.datetime | None | Unset):
            period_start (datetime.datetime | None | Unset): The period it concerns (default: now).
            tags (AdjustmentRequestTagsType0 | None | Unset): Tags the credit belongs to, so cost by tag nets it.
     """

    amount: str
    reason: str
    user_id: UUID
    lease_id: None | Unset | UUID = UNSET
    period_end: datetime.datetime | None | Unset = UNSET
    period_start: datetime.datetime | None | Unset = UNSET
    tags: AdjustmentRequestTagsType0 | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.adjustment_request_tags_type_0 import AdjustmentRequestTagsType0
        amount = self.amount

        reason = self.reason

        user_id = str(self.user_id)

        lease_id: None | str | Unset
        if isinstance(self.lease_id, Unset):
            lease_id = UNSET
        elif isinstance(self.lease_id, UUID):
            lease_id = str(self.lease_id)
        else:
            lease_id = self.lease_id

        period_end: None | str | Unset
        if isinstance(self.period_end, Unset):
            period_end = UNSET
        elif isinstance(self.period_end, datetime.datetime):
            period_end = self.period_end.isoformat()
        else:
            period_end = self.period_end

        period_start: None | str | Unset
        if isinstance(self.period_start, Unset):
            period_start = UNSET
        elif isinstance(self.period_start, datetime.datetime):
            period_start = self.period_start.isoformat()
        else:
            period_start = self.period_start

        tags: dict[str, Any] | None | Unset
        if isinstance(self.tags, Unset):
            tags = UNSET
        elif isinstance(self.tags, AdjustmentRequestTagsType0):
            tags = self.tags.to_dict()
        else:
            tags = self.tags


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "amount": amount,
            "reason": reason,
            "user_id": user_id,
        })
        if lease_id is not UNSET:
            field_dict["lease_id"] = lease_id
        if period_end is not UNSET:
            field_dict["period_end"] = period_end
        if period_start is not UNSET:
            field_dict["period_start"] = period_start
        if tags is not UNSET:
            field_dict["tags"] = tags

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.adjustment_request_tags_type_0 import AdjustmentRequestTagsType0
        d = dict(src_dict)
        amount = d.pop("amount")

        reason = d.pop("reason")

        user_id = UUID(d.pop("user_id"))




        def _parse_lease_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                lease_id_type_0 = UUID(data)



                return lease_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        lease_id = _parse_lease_id(d.pop("lease_id", UNSET))


        def _parse_period_end(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                period_end_type_0 = isoparse(data)



                return period_end_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        period_end = _parse_period_end(d.pop("period_end", UNSET))


        def _parse_period_start(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                period_start_type_0 = isoparse(data)



                return period_start_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        period_start = _parse_period_start(d.pop("period_start", UNSET))


        def _parse_tags(data: object) -> AdjustmentRequestTagsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                tags_type_0 = AdjustmentRequestTagsType0.from_dict(data)



                return tags_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AdjustmentRequestTagsType0 | None | Unset, data)

        tags = _parse_tags(d.pop("tags", UNSET))


        adjustment_request = cls(
            amount=amount,
            reason=reason,
            user_id=user_id,
            lease_id=lease_id,
            period_end=period_end,
            period_start=period_start,
            tags=tags,
        )

        return adjustment_request


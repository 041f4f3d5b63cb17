from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.mode import Mode
from ..models.qos import Qos
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.resources import Resources





T = TypeVar("T", bound="QuoteRequest")



@_attrs_define
class QuoteRequest:
    """ 
        Attributes:
            mode (Mode): How an order buys capacity.
            resources (Resources): What an order asks for (ARCHITECTURE.md §4).
            count (int | None | Unset): As on the order: identical units (1–64, on-demand or pooled); the
                quote's `units` says how many would be placed now.
            duration_s (int | None | Unset): Length of the window in seconds (default 3600; required for reserved).
            max_price (None | str | Unset):
            qos (None | Qos | Unset):
            region (None | str | Unset): A region name, or `any` (default) to compare every region.
            start_at (datetime.datetime | None | Unset): Start of a reserved window: a whole hour (e.g. `14:00:00Z`), at
                least 1 h ahead.
     """

    mode: Mode
    resources: Resources
    count: int | None | Unset = UNSET
    duration_s: int | None | Unset = UNSET
    max_price: None | str | Unset = UNSET
    qos: None | Qos | Unset = UNSET
    region: None | str | Unset = UNSET
    start_at: datetime.datetime | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.resources import Resources
        mode = self.mode.value

        resources = self.resources.to_dict()

        count: int | None | Unset
        if isinstance(self.count, Unset):
            count = UNSET
        else:
            count = self.count

        duration_s: int | None | Unset
        if isinstance(self.duration_s, Unset):
            duration_s = UNSET
        else:
            duration_s = self.duration_s

        max_price: None | str | Unset
        if isinstance(self.max_price, Unset):
            max_price = UNSET
        else:
            max_price = self.max_price

        qos: None | str | Unset
        if isinstance(self.qos, Unset):
            qos = UNSET
        elif isinstance(self.qos, Qos):
            qos = self.qos.value
        else:
            qos = self.qos

        region: None | str | Unset
        if isinstance(self.region, Unset):
            region = UNSET
        else:
            region = self.region

        start_at: None | str | Unset
        if isinstance(self.start_at, Unset):
            start_at = UNSET
        elif isinstance(self.start_at, datetime.datetime):
            start_at = self.start_at.isoformat()
        else:
            start_at = self.start_at


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "mode": mode,
            "resources": resources,
        })
        if count is not UNSET:
            field_dict["count"] = count
        if duration_s is not UNSET:
            field_dict["duration_s"] = duration_s
        if max_price is not UNSET:
            field_dict["max_price"] = max_price
        if qos is not UNSET:
            field_dict["qos"] = qos
        if region is not UNSET:
            field_dict["region"] = region
        if start_at is not UNSET:
            field_dict["start_at"] = start_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.resources import Resources
        d = dict(src_dict)
        mode = Mode(d.pop("mode"))




        resources = Resources.from_dict(d.pop("resources"))




        def _parse_count(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        count = _parse_count(d.pop("count", UNSET))


        def _parse_duration_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        duration_s = _parse_duration_s(d.pop("duration_s", UNSET))


        def _parse_max_price(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        max_price = _parse_max_price(d.pop("max_price", UNSET))


        def _parse_qos(data: object) -> None | Qos | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                qos_type_1 = Qos(data)



                return qos_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Qos | Unset, data)

        qos = _parse_qos(d.pop("qos", UNSET))


        def _parse_region(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        region = _parse_region(d.pop("region", UNSET))


        def _parse_start_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                start_at_type_0 = isoparse(data)



                return start_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        start_at = _parse_start_at(d.pop("start_at", UNSET))


        quote_request = cls(
            mode=mode,
            resources=resources,
            count=count,
            duration_s=duration_s,
            max_price=max_price,
            qos=qos,
            region=region,
            start_at=start_at,
        )

        return quote_request


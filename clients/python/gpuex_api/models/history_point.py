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
  from ..models.history_volume import HistoryVolume
  from ..models.history_prices import HistoryPrices





T = TypeVar("T", bound="HistoryPoint")



@_attrs_define
class HistoryPoint:
    """ One interval of one market: the clearing index (× list) and prices.

        Attributes:
            close (str):
            high (str):
            low (str):
            open_ (str):
            prices (HistoryPrices): Open, high, low and close of the unit prices a winner at the clearing
                index paid, per unit-hour.
            start (datetime.datetime): The interval's start (UTC, on a whole minute, hour or day).
            volume (HistoryVolume): Units won at the interval's clearings.
     """

    close: str
    high: str
    low: str
    open_: str
    prices: HistoryPrices
    start: datetime.datetime
    volume: HistoryVolume
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.history_volume import HistoryVolume
        from ..models.history_prices import HistoryPrices
        close = self.close

        high = self.high

        low = self.low

        open_ = self.open_

        prices = self.prices.to_dict()

        start = self.start.isoformat()

        volume = self.volume.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "close": close,
            "high": high,
            "low": low,
            "open": open_,
            "prices": prices,
            "start": start,
            "volume": volume,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.history_volume import HistoryVolume
        from ..models.history_prices import HistoryPrices
        d = dict(src_dict)
        close = d.pop("close")

        high = d.pop("high")

        low = d.pop("low")

        open_ = d.pop("open")

        prices = HistoryPrices.from_dict(d.pop("prices"))




        start = isoparse(d.pop("start"))




        volume = HistoryVolume.from_dict(d.pop("volume"))




        history_point = cls(
            close=close,
            high=high,
            low=low,
            open_=open_,
            prices=prices,
            start=start,
            volume=volume,
        )


        history_point.additional_properties = d
        return history_point

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

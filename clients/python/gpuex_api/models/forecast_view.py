from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.market_forecast_view import MarketForecastView





T = TypeVar("T", bound="ForecastView")



@_attrs_define
class ForecastView:
    """ 
        Attributes:
            horizon_minutes (int): Minutes ahead each market is forecast.
            level (float): The prediction intervals' confidence.
            markets (list[MarketForecastView]): Markets with on-demand or reserved orders in the fitted history.
            generated_at (datetime.datetime | None | Unset): When the forecast was last refitted; absent before the first
                refresh.
     """

    horizon_minutes: int
    level: float
    markets: list[MarketForecastView]
    generated_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.market_forecast_view import MarketForecastView
        horizon_minutes = self.horizon_minutes

        level = self.level

        markets = []
        for markets_item_data in self.markets:
            markets_item = markets_item_data.to_dict()
            markets.append(markets_item)



        generated_at: None | str | Unset
        if isinstance(self.generated_at, Unset):
            generated_at = UNSET
        elif isinstance(self.generated_at, datetime.datetime):
            generated_at = self.generated_at.isoformat()
        else:
            generated_at = self.generated_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "horizon_minutes": horizon_minutes,
            "level": level,
            "markets": markets,
        })
        if generated_at is not UNSET:
            field_dict["generated_at"] = generated_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.market_forecast_view import MarketForecastView
        d = dict(src_dict)
        horizon_minutes = d.pop("horizon_minutes")

        level = d.pop("level")

        markets = []
        _markets = d.pop("markets")
        for markets_item_data in (_markets):
            markets_item = MarketForecastView.from_dict(markets_item_data)



            markets.append(markets_item)


        def _parse_generated_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                generated_at_type_0 = isoparse(data)



                return generated_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        generated_at = _parse_generated_at(d.pop("generated_at", UNSET))


        forecast_view = cls(
            horizon_minutes=horizon_minutes,
            level=level,
            markets=markets,
            generated_at=generated_at,
        )


        forecast_view.additional_properties = d
        return forecast_view

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.method import Method
from typing import cast

if TYPE_CHECKING:
  from ..models.profile_instances import ProfileInstances
  from ..models.forecast_point import ForecastPoint





T = TypeVar("T", bound="MarketForecastView")



@_attrs_define
class MarketForecastView:
    """ One market's forecast.

        Attributes:
            gpu_model (str):
            history_minutes (int): Minutes of order history it was fitted on.
            method (Method): Which model produced a forecast.
            mig_instances (list[ProfileInstances]): The MIG instances among that demand, by profile (each profile's share
                of the history's orders): MIG placement keeps room for them.
            points (list[ForecastPoint]):
            region (str):
            spot_holdback_tflops (str): Standard TFLOPS of idle capacity the spot auction leaves for primary
                orders: the forecast over the preemption notice period.
     """

    gpu_model: str
    history_minutes: int
    method: Method
    mig_instances: list[ProfileInstances]
    points: list[ForecastPoint]
    region: str
    spot_holdback_tflops: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.profile_instances import ProfileInstances
        from ..models.forecast_point import ForecastPoint
        gpu_model = self.gpu_model

        history_minutes = self.history_minutes

        method = self.method.value

        mig_instances = []
        for mig_instances_item_data in self.mig_instances:
            mig_instances_item = mig_instances_item_data.to_dict()
            mig_instances.append(mig_instances_item)



        points = []
        for points_item_data in self.points:
            points_item = points_item_data.to_dict()
            points.append(points_item)



        region = self.region

        spot_holdback_tflops = self.spot_holdback_tflops


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "gpu_model": gpu_model,
            "history_minutes": history_minutes,
            "method": method,
            "mig_instances": mig_instances,
            "points": points,
            "region": region,
            "spot_holdback_tflops": spot_holdback_tflops,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.profile_instances import ProfileInstances
        from ..models.forecast_point import ForecastPoint
        d = dict(src_dict)
        gpu_model = d.pop("gpu_model")

        history_minutes = d.pop("history_minutes")

        method = Method(d.pop("method"))




        mig_instances = []
        _mig_instances = d.pop("mig_instances")
        for mig_instances_item_data in (_mig_instances):
            mig_instances_item = ProfileInstances.from_dict(mig_instances_item_data)



            mig_instances.append(mig_instances_item)


        points = []
        _points = d.pop("points")
        for points_item_data in (_points):
            points_item = ForecastPoint.from_dict(points_item_data)



            points.append(points_item)


        region = d.pop("region")

        spot_holdback_tflops = d.pop("spot_holdback_tflops")

        market_forecast_view = cls(
            gpu_model=gpu_model,
            history_minutes=history_minutes,
            method=method,
            mig_instances=mig_instances,
            points=points,
            region=region,
            spot_holdback_tflops=spot_holdback_tflops,
        )


        market_forecast_view.additional_properties = d
        return market_forecast_view

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

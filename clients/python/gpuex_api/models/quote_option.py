from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.quote_line import QuoteLine





T = TypeVar("T", bound="QuoteOption")



@_attrs_define
class QuoteOption:
    """ What the request would cost on one model in one region.

        Attributes:
            breakdown (list[QuoteLine]):
            gpu_model (str):
            price_per_hour (str):
            region (str):
            standard_tflops (str): Standard (dense FP16) TFLOPS the request costs on this model.
            total (str): Money: a decimal string with at most 6 decimals, rounded once, half-even, when posted or billed;
                the ledger's `platform:rounding` account takes any residue, so the books balance exactly.
     """

    breakdown: list[QuoteLine]
    gpu_model: str
    price_per_hour: str
    region: str
    standard_tflops: str
    total: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.quote_line import QuoteLine
        breakdown = []
        for breakdown_item_data in self.breakdown:
            breakdown_item = breakdown_item_data.to_dict()
            breakdown.append(breakdown_item)



        gpu_model = self.gpu_model

        price_per_hour = self.price_per_hour

        region = self.region

        standard_tflops = self.standard_tflops

        total = self.total


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "breakdown": breakdown,
            "gpu_model": gpu_model,
            "price_per_hour": price_per_hour,
            "region": region,
            "standard_tflops": standard_tflops,
            "total": total,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.quote_line import QuoteLine
        d = dict(src_dict)
        breakdown = []
        _breakdown = d.pop("breakdown")
        for breakdown_item_data in (_breakdown):
            breakdown_item = QuoteLine.from_dict(breakdown_item_data)



            breakdown.append(breakdown_item)


        gpu_model = d.pop("gpu_model")

        price_per_hour = d.pop("price_per_hour")

        region = d.pop("region")

        standard_tflops = d.pop("standard_tflops")

        total = d.pop("total")

        quote_option = cls(
            breakdown=breakdown,
            gpu_model=gpu_model,
            price_per_hour=price_per_hour,
            region=region,
            standard_tflops=standard_tflops,
            total=total,
        )


        quote_option.additional_properties = d
        return quote_option

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

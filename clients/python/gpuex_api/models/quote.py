from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.mode import Mode
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.quote_option import QuoteOption
  from ..models.units_quote import UnitsQuote
  from ..models.slice_quote import SliceQuote





T = TypeVar("T", bound="Quote")



@_attrs_define
class Quote:
    """ 
        Attributes:
            currency (str):
            duration_s (int):
            mode (Mode): How an order buys capacity.
            options (list[QuoteOption]): Every adequate (model, region), cheapest first, priced on the units
                asked: an estimate for comparing models. A MIG profile or whole GPU
                holds more than asked, and is charged for it: `slice` prices that.
            rule (str): How the price was derived.
            start_at (datetime.datetime):
            slice_ (None | SliceQuote | Unset):
            slice_unavailable (None | str | Unset): Why no slice is free now (a reject reason code), when `slice` is absent.
            units (None | UnitsQuote | Unset):
     """

    currency: str
    duration_s: int
    mode: Mode
    options: list[QuoteOption]
    rule: str
    start_at: datetime.datetime
    slice_: None | SliceQuote | Unset = UNSET
    slice_unavailable: None | str | Unset = UNSET
    units: None | UnitsQuote | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.quote_option import QuoteOption
        from ..models.units_quote import UnitsQuote
        from ..models.slice_quote import SliceQuote
        currency = self.currency

        duration_s = self.duration_s

        mode = self.mode.value

        options = []
        for options_item_data in self.options:
            options_item = options_item_data.to_dict()
            options.append(options_item)



        rule = self.rule

        start_at = self.start_at.isoformat()

        slice_: dict[str, Any] | None | Unset
        if isinstance(self.slice_, Unset):
            slice_ = UNSET
        elif isinstance(self.slice_, SliceQuote):
            slice_ = self.slice_.to_dict()
        else:
            slice_ = self.slice_

        slice_unavailable: None | str | Unset
        if isinstance(self.slice_unavailable, Unset):
            slice_unavailable = UNSET
        else:
            slice_unavailable = self.slice_unavailable

        units: dict[str, Any] | None | Unset
        if isinstance(self.units, Unset):
            units = UNSET
        elif isinstance(self.units, UnitsQuote):
            units = self.units.to_dict()
        else:
            units = self.units


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "currency": currency,
            "duration_s": duration_s,
            "mode": mode,
            "options": options,
            "rule": rule,
            "start_at": start_at,
        })
        if slice_ is not UNSET:
            field_dict["slice"] = slice_
        if slice_unavailable is not UNSET:
            field_dict["slice_unavailable"] = slice_unavailable
        if units is not UNSET:
            field_dict["units"] = units

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.quote_option import QuoteOption
        from ..models.units_quote import UnitsQuote
        from ..models.slice_quote import SliceQuote
        d = dict(src_dict)
        currency = d.pop("currency")

        duration_s = d.pop("duration_s")

        mode = Mode(d.pop("mode"))




        options = []
        _options = d.pop("options")
        for options_item_data in (_options):
            options_item = QuoteOption.from_dict(options_item_data)



            options.append(options_item)


        rule = d.pop("rule")

        start_at = isoparse(d.pop("start_at"))




        def _parse_slice_(data: object) -> None | SliceQuote | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                slice_type_1 = SliceQuote.from_dict(data)



                return slice_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SliceQuote | Unset, data)

        slice_ = _parse_slice_(d.pop("slice", UNSET))


        def _parse_slice_unavailable(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        slice_unavailable = _parse_slice_unavailable(d.pop("slice_unavailable", UNSET))


        def _parse_units(data: object) -> None | UnitsQuote | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                units_type_1 = UnitsQuote.from_dict(data)



                return units_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UnitsQuote | Unset, data)

        units = _parse_units(d.pop("units", UNSET))


        quote = cls(
            currency=currency,
            duration_s=duration_s,
            mode=mode,
            options=options,
            rule=rule,
            start_at=start_at,
            slice_=slice_,
            slice_unavailable=slice_unavailable,
            units=units,
        )


        quote.additional_properties = d
        return quote

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

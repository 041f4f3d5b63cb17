from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
from uuid import UUID

if TYPE_CHECKING:
  from ..models.load_profile_input import LoadProfileInput





T = TypeVar("T", bound="TcoRequest")



@_attrs_define
class TcoRequest:
    """ 
        Attributes:
            node_price_per_hour (str): Money: a decimal string (no JSON number, no exponent), above 0 and below 1000000,
                with at most 6 decimals. Kept and answered at 6 decimals at most.
            gpu_model (None | str | Unset): The GPU model of the node and of the units (default: the model the
                history used most, else H100-SXM5-80GB).
            import_id (None | Unset | UUID): Price one of the caller's job-history imports (`POST
                /v1/profile/imports`) instead; not with `profile`.
            months (int | None | Unset): How long to compare, 1 to 120 months (default 36).
            profile (LoadProfileInput | None | Unset):
            region (None | str | Unset): Whose list prices (default: of the regions where a node supplies the
                model, the one where one GPU of it lists cheapest; any priced region
                only when none supplies it).
            utilization (float | None | str | Unset):
     """

    node_price_per_hour: str
    gpu_model: None | str | Unset = UNSET
    import_id: None | Unset | UUID = UNSET
    months: int | None | Unset = UNSET
    profile: LoadProfileInput | None | Unset = UNSET
    region: None | str | Unset = UNSET
    utilization: float | None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.load_profile_input import LoadProfileInput
        node_price_per_hour = self.node_price_per_hour

        gpu_model: None | str | Unset
        if isinstance(self.gpu_model, Unset):
            gpu_model = UNSET
        else:
            gpu_model = self.gpu_model

        import_id: None | str | Unset
        if isinstance(self.import_id, Unset):
            import_id = UNSET
        elif isinstance(self.import_id, UUID):
            import_id = str(self.import_id)
        else:
            import_id = self.import_id

        months: int | None | Unset
        if isinstance(self.months, Unset):
            months = UNSET
        else:
            months = self.months

        profile: dict[str, Any] | None | Unset
        if isinstance(self.profile, Unset):
            profile = UNSET
        elif isinstance(self.profile, LoadProfileInput):
            profile = self.profile.to_dict()
        else:
            profile = self.profile

        region: None | str | Unset
        if isinstance(self.region, Unset):
            region = UNSET
        else:
            region = self.region

        utilization: float | None | str | Unset
        if isinstance(self.utilization, Unset):
            utilization = UNSET
        else:
            utilization = self.utilization


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "node_price_per_hour": node_price_per_hour,
        })
        if gpu_model is not UNSET:
            field_dict["gpu_model"] = gpu_model
        if import_id is not UNSET:
            field_dict["import_id"] = import_id
        if months is not UNSET:
            field_dict["months"] = months
        if profile is not UNSET:
            field_dict["profile"] = profile
        if region is not UNSET:
            field_dict["region"] = region
        if utilization is not UNSET:
            field_dict["utilization"] = utilization

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.load_profile_input import LoadProfileInput
        d = dict(src_dict)
        node_price_per_hour = d.pop("node_price_per_hour")

        def _parse_gpu_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        gpu_model = _parse_gpu_model(d.pop("gpu_model", UNSET))


        def _parse_import_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                import_id_type_0 = UUID(data)



                return import_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        import_id = _parse_import_id(d.pop("import_id", UNSET))


        def _parse_months(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        months = _parse_months(d.pop("months", UNSET))


        def _parse_profile(data: object) -> LoadProfileInput | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                profile_type_1 = LoadProfileInput.from_dict(data)



                return profile_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LoadProfileInput | None | Unset, data)

        profile = _parse_profile(d.pop("profile", UNSET))


        def _parse_region(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        region = _parse_region(d.pop("region", UNSET))


        def _parse_utilization(data: object) -> float | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | str | Unset, data)

        utilization = _parse_utilization(d.pop("utilization", UNSET))


        tco_request = cls(
            node_price_per_hour=node_price_per_hour,
            gpu_model=gpu_model,
            import_id=import_id,
            months=months,
            profile=profile,
            region=region,
            utilization=utilization,
        )

        return tco_request


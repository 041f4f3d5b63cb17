from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.import_format import ImportFormat
from ..types import UNSET, Unset
from dateutil.parser import isoparse
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.rejected_row import RejectedRow
  from ..models.concurrency_point import ConcurrencyPoint
  from ..models.capacity_profile import CapacityProfile





T = TypeVar("T", bound="ProfileImportDetail")



@_attrs_define
class ProfileImportDetail:
    """ An import with the profile its jobs make and their concurrency over time.

        Attributes:
            bytes_ (int): The file's size.
            created_at (datetime.datetime):
            default_gpu_model (str):
            defaulted_model_rows (int): Rows whose GPU model was missing or not in the catalog, priced as
                `default_gpu_model`.
            format_ (ImportFormat): The formats an import reads.
            id (UUID):
            rejected (list[RejectedRow]):
            rejected_count (int): How many rows were refused (`rejected` lists the first 100).
            rows (int): Jobs taken into the profile.
            skipped (int): Rows that held no GPU: job steps, jobs that never started, CPU-only jobs.
            concurrency (list[ConcurrencyPoint]): At most 240 equal stretches of the import's window.
            from_ (datetime.datetime | None | Unset): The first job's start and the last job's end (absent with no rows).
            to (datetime.datetime | None | Unset):
            profile (CapacityProfile | None | Unset):
     """

    bytes_: int
    created_at: datetime.datetime
    default_gpu_model: str
    defaulted_model_rows: int
    format_: ImportFormat
    id: UUID
    rejected: list[RejectedRow]
    rejected_count: int
    rows: int
    skipped: int
    concurrency: list[ConcurrencyPoint]
    from_: datetime.datetime | None | Unset = UNSET
    to: datetime.datetime | None | Unset = UNSET
    profile: CapacityProfile | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.rejected_row import RejectedRow
        from ..models.concurrency_point import ConcurrencyPoint
        from ..models.capacity_profile import CapacityProfile
        bytes_ = self.bytes_

        created_at = self.created_at.isoformat()

        default_gpu_model = self.default_gpu_model

        defaulted_model_rows = self.defaulted_model_rows

        format_ = self.format_.value

        id = str(self.id)

        rejected = []
        for rejected_item_data in self.rejected:
            rejected_item = rejected_item_data.to_dict()
            rejected.append(rejected_item)



        rejected_count = self.rejected_count

        rows = self.rows

        skipped = self.skipped

        concurrency = []
        for concurrency_item_data in self.concurrency:
            concurrency_item = concurrency_item_data.to_dict()
            concurrency.append(concurrency_item)



        from_: None | str | Unset
        if isinstance(self.from_, Unset):
            from_ = UNSET
        elif isinstance(self.from_, datetime.datetime):
            from_ = self.from_.isoformat()
        else:
            from_ = self.from_

        to: None | str | Unset
        if isinstance(self.to, Unset):
            to = UNSET
        elif isinstance(self.to, datetime.datetime):
            to = self.to.isoformat()
        else:
            to = self.to

        profile: dict[str, Any] | None | Unset
        if isinstance(self.profile, Unset):
            profile = UNSET
        elif isinstance(self.profile, CapacityProfile):
            profile = self.profile.to_dict()
        else:
            profile = self.profile


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "bytes": bytes_,
            "created_at": created_at,
            "default_gpu_model": default_gpu_model,
            "defaulted_model_rows": defaulted_model_rows,
            "format": format_,
            "id": id,
            "rejected": rejected,
            "rejected_count": rejected_count,
            "rows": rows,
            "skipped": skipped,
            "concurrency": concurrency,
        })
        if from_ is not UNSET:
            field_dict["from"] = from_
        if to is not UNSET:
            field_dict["to"] = to
        if profile is not UNSET:
            field_dict["profile"] = profile

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.rejected_row import RejectedRow
        from ..models.concurrency_point import ConcurrencyPoint
        from ..models.capacity_profile import CapacityProfile
        d = dict(src_dict)
        bytes_ = d.pop("bytes")

        created_at = isoparse(d.pop("created_at"))




        default_gpu_model = d.pop("default_gpu_model")

        defaulted_model_rows = d.pop("defaulted_model_rows")

        format_ = ImportFormat(d.pop("format"))




        id = UUID(d.pop("id"))




        rejected = []
        _rejected = d.pop("rejected")
        for rejected_item_data in (_rejected):
            rejected_item = RejectedRow.from_dict(rejected_item_data)



            rejected.append(rejected_item)


        rejected_count = d.pop("rejected_count")

        rows = d.pop("rows")

        skipped = d.pop("skipped")

        concurrency = []
        _concurrency = d.pop("concurrency")
        for concurrency_item_data in (_concurrency):
            concurrency_item = ConcurrencyPoint.from_dict(concurrency_item_data)



            concurrency.append(concurrency_item)


        def _parse_from_(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                from_type_0 = isoparse(data)



                return from_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        from_ = _parse_from_(d.pop("from", UNSET))


        def _parse_to(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                to_type_0 = isoparse(data)



                return to_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        to = _parse_to(d.pop("to", UNSET))


        def _parse_profile(data: object) -> CapacityProfile | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                profile_type_1 = CapacityProfile.from_dict(data)



                return profile_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CapacityProfile | None | Unset, data)

        profile = _parse_profile(d.pop("profile", UNSET))


        profile_import_detail = cls(
            bytes_=bytes_,
            created_at=created_at,
            default_gpu_model=default_gpu_model,
            defaulted_model_rows=defaulted_model_rows,
            format_=format_,
            id=id,
            rejected=rejected,
            rejected_count=rejected_count,
            rows=rows,
            skipped=skipped,
            concurrency=concurrency,
            from_=from_,
            to=to,
            profile=profile,
        )


        profile_import_detail.additional_properties = d
        return profile_import_detail

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

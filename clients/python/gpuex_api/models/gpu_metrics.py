from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.scrub_report import ScrubReport
  from ..models.mig_instance_metrics import MigInstanceMetrics
  from ..models.process_metrics import ProcessMetrics
  from ..models.gpu_fields import GpuFields





T = TypeVar("T", bound="GpuMetrics")



@_attrs_define
class GpuMetrics:
    """ One GPU's sample.

        Attributes:
            fields (GpuFields): Device-level metrics, each under its DCGM field name in JSON. Every field
                is optional: absent means "not supported here", never zero.
            index (int):
            uuid (str):
            mig_instances (list[MigInstanceMetrics] | Unset): Per MIG instance, when MIG is enabled.
            processes (list[ProcessMetrics] | Unset): Per compute process, where the driver lists them.
            scrub (None | ScrubReport | Unset):
     """

    fields: GpuFields
    index: int
    uuid: str
    mig_instances: list[MigInstanceMetrics] | Unset = UNSET
    processes: list[ProcessMetrics] | Unset = UNSET
    scrub: None | ScrubReport | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.scrub_report import ScrubReport
        from ..models.mig_instance_metrics import MigInstanceMetrics
        from ..models.process_metrics import ProcessMetrics
        from ..models.gpu_fields import GpuFields
        fields = self.fields.to_dict()

        index = self.index

        uuid = self.uuid

        mig_instances: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.mig_instances, Unset):
            mig_instances = []
            for mig_instances_item_data in self.mig_instances:
                mig_instances_item = mig_instances_item_data.to_dict()
                mig_instances.append(mig_instances_item)



        processes: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.processes, Unset):
            processes = []
            for processes_item_data in self.processes:
                processes_item = processes_item_data.to_dict()
                processes.append(processes_item)



        scrub: dict[str, Any] | None | Unset
        if isinstance(self.scrub, Unset):
            scrub = UNSET
        elif isinstance(self.scrub, ScrubReport):
            scrub = self.scrub.to_dict()
        else:
            scrub = self.scrub


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "fields": fields,
            "index": index,
            "uuid": uuid,
        })
        if mig_instances is not UNSET:
            field_dict["mig_instances"] = mig_instances
        if processes is not UNSET:
            field_dict["processes"] = processes
        if scrub is not UNSET:
            field_dict["scrub"] = scrub

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.scrub_report import ScrubReport
        from ..models.mig_instance_metrics import MigInstanceMetrics
        from ..models.process_metrics import ProcessMetrics
        from ..models.gpu_fields import GpuFields
        d = dict(src_dict)
        fields = GpuFields.from_dict(d.pop("fields"))




        index = d.pop("index")

        uuid = d.pop("uuid")

        _mig_instances = d.pop("mig_instances", UNSET)
        mig_instances: list[MigInstanceMetrics] | Unset = UNSET
        if _mig_instances is not UNSET:
            mig_instances = []
            for mig_instances_item_data in _mig_instances:
                mig_instances_item = MigInstanceMetrics.from_dict(mig_instances_item_data)



                mig_instances.append(mig_instances_item)


        _processes = d.pop("processes", UNSET)
        processes: list[ProcessMetrics] | Unset = UNSET
        if _processes is not UNSET:
            processes = []
            for processes_item_data in _processes:
                processes_item = ProcessMetrics.from_dict(processes_item_data)



                processes.append(processes_item)


        def _parse_scrub(data: object) -> None | ScrubReport | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                scrub_type_1 = ScrubReport.from_dict(data)



                return scrub_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ScrubReport | Unset, data)

        scrub = _parse_scrub(d.pop("scrub", UNSET))


        gpu_metrics = cls(
            fields=fields,
            index=index,
            uuid=uuid,
            mig_instances=mig_instances,
            processes=processes,
            scrub=scrub,
        )


        gpu_metrics.additional_properties = d
        return gpu_metrics

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

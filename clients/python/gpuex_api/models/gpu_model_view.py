from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.mig_profile_view import MigProfileView
  from ..models.gpu_model_view_peak_tflops import GpuModelViewPeakTflops





T = TypeVar("T", bound="GpuModelView")



@_attrs_define
class GpuModelView:
    """ A catalog GPU model.

        Attributes:
            architecture (str):
            memory_gb (int):
            mig_capable (bool):
            mig_profiles (list[MigProfileView]):
            name (str):
            peak_tflops (GpuModelViewPeakTflops): Dense peak TFLOPS per precision; absent where the model cannot run it.
            tflops_units (str): Standard TFLOPS the whole GPU sells (its dense FP16 peak).
            vram_units (str): `vram_h` units of the whole GPU (memory / 4 GB, rounded down).
     """

    architecture: str
    memory_gb: int
    mig_capable: bool
    mig_profiles: list[MigProfileView]
    name: str
    peak_tflops: GpuModelViewPeakTflops
    tflops_units: str
    vram_units: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.mig_profile_view import MigProfileView
        from ..models.gpu_model_view_peak_tflops import GpuModelViewPeakTflops
        architecture = self.architecture

        memory_gb = self.memory_gb

        mig_capable = self.mig_capable

        mig_profiles = []
        for mig_profiles_item_data in self.mig_profiles:
            mig_profiles_item = mig_profiles_item_data.to_dict()
            mig_profiles.append(mig_profiles_item)



        name = self.name

        peak_tflops = self.peak_tflops.to_dict()

        tflops_units = self.tflops_units

        vram_units = self.vram_units


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "architecture": architecture,
            "memory_gb": memory_gb,
            "mig_capable": mig_capable,
            "mig_profiles": mig_profiles,
            "name": name,
            "peak_tflops": peak_tflops,
            "tflops_units": tflops_units,
            "vram_units": vram_units,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.mig_profile_view import MigProfileView
        from ..models.gpu_model_view_peak_tflops import GpuModelViewPeakTflops
        d = dict(src_dict)
        architecture = d.pop("architecture")

        memory_gb = d.pop("memory_gb")

        mig_capable = d.pop("mig_capable")

        mig_profiles = []
        _mig_profiles = d.pop("mig_profiles")
        for mig_profiles_item_data in (_mig_profiles):
            mig_profiles_item = MigProfileView.from_dict(mig_profiles_item_data)



            mig_profiles.append(mig_profiles_item)


        name = d.pop("name")

        peak_tflops = GpuModelViewPeakTflops.from_dict(d.pop("peak_tflops"))




        tflops_units = d.pop("tflops_units")

        vram_units = d.pop("vram_units")

        gpu_model_view = cls(
            architecture=architecture,
            memory_gb=memory_gb,
            mig_capable=mig_capable,
            mig_profiles=mig_profiles,
            name=name,
            peak_tflops=peak_tflops,
            tflops_units=tflops_units,
            vram_units=vram_units,
        )


        gpu_model_view.additional_properties = d
        return gpu_model_view

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

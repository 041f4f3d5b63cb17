from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.mig_mode import MigMode
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.mig_instance_inventory import MigInstanceInventory





T = TypeVar("T", bound="GpuInventory")



@_attrs_define
class GpuInventory:
    """ One physical GPU.

        Attributes:
            cuda_version (str): Highest CUDA version the driver supports, e.g. `12.4`.
            driver_version (str): Kernel driver version, e.g. `550.54.15`.
            index (int): NVML / `nvidia-smi` index on this node; placements name GPUs by it.
            memory_mib (int): Memory the driver reports, in MiB, at most 2⁴⁰.
            mig_capable (bool): Whether the GPU can be partitioned with MIG.
            product_name (str): The name the driver reports, e.g. `NVIDIA H100 80GB HBM3`.
            uuid (str): `GPU-…` UUID, stable across reboots.
            calibration_ratio (float | None | str | Unset):
            mig_instances (list[MigInstanceInventory] | Unset): MIG GPU instances that exist now (after an agent restart,
                some may belong
                to live leases).
            mig_mode (MigMode | None | Unset):
            mig_mode_pending (MigMode | None | Unset):
            model (None | str | Unset): The catalog name (`H100-SXM5-80GB`), or `None` when the product is not in
                the catalog: such a GPU is reported but must not be sold.
            nvlink_peers (list[int] | Unset): Indices of the GPUs on this node joined to this one by an active NVLink.
            pci_bus_id (None | str | Unset): PCI bus id, e.g. `00000000:19:00.0`.
     """

    cuda_version: str
    driver_version: str
    index: int
    memory_mib: int
    mig_capable: bool
    product_name: str
    uuid: str
    calibration_ratio: float | None | str | Unset = UNSET
    mig_instances: list[MigInstanceInventory] | Unset = UNSET
    mig_mode: MigMode | None | Unset = UNSET
    mig_mode_pending: MigMode | None | Unset = UNSET
    model: None | str | Unset = UNSET
    nvlink_peers: list[int] | Unset = UNSET
    pci_bus_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.mig_instance_inventory import MigInstanceInventory
        cuda_version = self.cuda_version

        driver_version = self.driver_version

        index = self.index

        memory_mib = self.memory_mib

        mig_capable = self.mig_capable

        product_name = self.product_name

        uuid = self.uuid

        calibration_ratio: float | None | str | Unset
        if isinstance(self.calibration_ratio, Unset):
            calibration_ratio = UNSET
        else:
            calibration_ratio = self.calibration_ratio

        mig_instances: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.mig_instances, Unset):
            mig_instances = []
            for mig_instances_item_data in self.mig_instances:
                mig_instances_item = mig_instances_item_data.to_dict()
                mig_instances.append(mig_instances_item)



        mig_mode: None | str | Unset
        if isinstance(self.mig_mode, Unset):
            mig_mode = UNSET
        elif isinstance(self.mig_mode, MigMode):
            mig_mode = self.mig_mode.value
        else:
            mig_mode = self.mig_mode

        mig_mode_pending: None | str | Unset
        if isinstance(self.mig_mode_pending, Unset):
            mig_mode_pending = UNSET
        elif isinstance(self.mig_mode_pending, MigMode):
            mig_mode_pending = self.mig_mode_pending.value
        else:
            mig_mode_pending = self.mig_mode_pending

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        nvlink_peers: list[int] | Unset = UNSET
        if not isinstance(self.nvlink_peers, Unset):
            nvlink_peers = self.nvlink_peers



        pci_bus_id: None | str | Unset
        if isinstance(self.pci_bus_id, Unset):
            pci_bus_id = UNSET
        else:
            pci_bus_id = self.pci_bus_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "cuda_version": cuda_version,
            "driver_version": driver_version,
            "index": index,
            "memory_mib": memory_mib,
            "mig_capable": mig_capable,
            "product_name": product_name,
            "uuid": uuid,
        })
        if calibration_ratio is not UNSET:
            field_dict["calibration_ratio"] = calibration_ratio
        if mig_instances is not UNSET:
            field_dict["mig_instances"] = mig_instances
        if mig_mode is not UNSET:
            field_dict["mig_mode"] = mig_mode
        if mig_mode_pending is not UNSET:
            field_dict["mig_mode_pending"] = mig_mode_pending
        if model is not UNSET:
            field_dict["model"] = model
        if nvlink_peers is not UNSET:
            field_dict["nvlink_peers"] = nvlink_peers
        if pci_bus_id is not UNSET:
            field_dict["pci_bus_id"] = pci_bus_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.mig_instance_inventory import MigInstanceInventory
        d = dict(src_dict)
        cuda_version = d.pop("cuda_version")

        driver_version = d.pop("driver_version")

        index = d.pop("index")

        memory_mib = d.pop("memory_mib")

        mig_capable = d.pop("mig_capable")

        product_name = d.pop("product_name")

        uuid = d.pop("uuid")

        def _parse_calibration_ratio(data: object) -> float | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | str | Unset, data)

        calibration_ratio = _parse_calibration_ratio(d.pop("calibration_ratio", UNSET))


        _mig_instances = d.pop("mig_instances", UNSET)
        mig_instances: list[MigInstanceInventory] | Unset = UNSET
        if _mig_instances is not UNSET:
            mig_instances = []
            for mig_instances_item_data in _mig_instances:
                mig_instances_item = MigInstanceInventory.from_dict(mig_instances_item_data)



                mig_instances.append(mig_instances_item)


        def _parse_mig_mode(data: object) -> MigMode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                mig_mode_type_1 = MigMode(data)



                return mig_mode_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MigMode | None | Unset, data)

        mig_mode = _parse_mig_mode(d.pop("mig_mode", UNSET))


        def _parse_mig_mode_pending(data: object) -> MigMode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                mig_mode_pending_type_1 = MigMode(data)



                return mig_mode_pending_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MigMode | None | Unset, data)

        mig_mode_pending = _parse_mig_mode_pending(d.pop("mig_mode_pending", UNSET))


        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))


        nvlink_peers = cast(list[int], d.pop("nvlink_peers", UNSET))


        def _parse_pci_bus_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        pci_bus_id = _parse_pci_bus_id(d.pop("pci_bus_id", UNSET))


        gpu_inventory = cls(
            cuda_version=cuda_version,
            driver_version=driver_version,
            index=index,
            memory_mib=memory_mib,
            mig_capable=mig_capable,
            product_name=product_name,
            uuid=uuid,
            calibration_ratio=calibration_ratio,
            mig_instances=mig_instances,
            mig_mode=mig_mode,
            mig_mode_pending=mig_mode_pending,
            model=model,
            nvlink_peers=nvlink_peers,
            pci_bus_id=pci_bus_id,
        )


        gpu_inventory.additional_properties = d
        return gpu_inventory

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

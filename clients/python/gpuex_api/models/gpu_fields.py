from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="GpuFields")



@_attrs_define
class GpuFields:
    """ Device-level metrics, each under its DCGM field name in JSON. Every field
    is optional: absent means "not supported here", never zero.

        Attributes:
            dcgm_fi_dev_clock_throttle_reasons (float | None | Unset):
            dcgm_fi_dev_compute_pids (float | None | Unset):
            dcgm_fi_dev_correctable_remapped_rows (float | None | Unset):
            dcgm_fi_dev_dec_util (float | None | Unset):
            dcgm_fi_dev_ecc_dbe_agg_total (float | None | Unset):
            dcgm_fi_dev_ecc_dbe_vol_total (float | None | Unset):
            dcgm_fi_dev_ecc_sbe_agg_total (float | None | Unset):
            dcgm_fi_dev_ecc_sbe_vol_total (float | None | Unset):
            dcgm_fi_dev_enc_util (float | None | Unset):
            dcgm_fi_dev_fan_speed (float | None | Unset):
            dcgm_fi_dev_fb_free (float | None | Unset):
            dcgm_fi_dev_fb_reserved (float | None | Unset):
            dcgm_fi_dev_fb_total (float | None | Unset):
            dcgm_fi_dev_fb_used (float | None | Unset):
            dcgm_fi_dev_gpu_temp (float | None | Unset):
            dcgm_fi_dev_gpu_util (float | None | Unset):
            dcgm_fi_dev_memory_temp (float | None | Unset):
            dcgm_fi_dev_mem_clock (float | None | Unset):
            dcgm_fi_dev_mem_copy_util (float | None | Unset):
            dcgm_fi_dev_nvlink_bandwidth_total (float | None | Unset):
            dcgm_fi_dev_nvlink_rx_bandwidth_total (float | None | Unset):
            dcgm_fi_dev_nvlink_tx_bandwidth_total (float | None | Unset):
            dcgm_fi_dev_pcie_replay_counter (float | None | Unset):
            dcgm_fi_dev_pcie_rx_throughput (float | None | Unset):
            dcgm_fi_dev_pcie_tx_throughput (float | None | Unset):
            dcgm_fi_dev_power_mgmt_limit (float | None | Unset):
            dcgm_fi_dev_power_usage (float | None | Unset):
            dcgm_fi_dev_pstate (float | None | Unset):
            dcgm_fi_dev_sm_clock (float | None | Unset):
            dcgm_fi_dev_total_energy_consumption (float | None | Unset):
            dcgm_fi_dev_uncorrectable_remapped_rows (float | None | Unset):
     """

    dcgm_fi_dev_clock_throttle_reasons: float | None | Unset = UNSET
    dcgm_fi_dev_compute_pids: float | None | Unset = UNSET
    dcgm_fi_dev_correctable_remapped_rows: float | None | Unset = UNSET
    dcgm_fi_dev_dec_util: float | None | Unset = UNSET
    dcgm_fi_dev_ecc_dbe_agg_total: float | None | Unset = UNSET
    dcgm_fi_dev_ecc_dbe_vol_total: float | None | Unset = UNSET
    dcgm_fi_dev_ecc_sbe_agg_total: float | None | Unset = UNSET
    dcgm_fi_dev_ecc_sbe_vol_total: float | None | Unset = UNSET
    dcgm_fi_dev_enc_util: float | None | Unset = UNSET
    dcgm_fi_dev_fan_speed: float | None | Unset = UNSET
    dcgm_fi_dev_fb_free: float | None | Unset = UNSET
    dcgm_fi_dev_fb_reserved: float | None | Unset = UNSET
    dcgm_fi_dev_fb_total: float | None | Unset = UNSET
    dcgm_fi_dev_fb_used: float | None | Unset = UNSET
    dcgm_fi_dev_gpu_temp: float | None | Unset = UNSET
    dcgm_fi_dev_gpu_util: float | None | Unset = UNSET
    dcgm_fi_dev_memory_temp: float | None | Unset = UNSET
    dcgm_fi_dev_mem_clock: float | None | Unset = UNSET
    dcgm_fi_dev_mem_copy_util: float | None | Unset = UNSET
    dcgm_fi_dev_nvlink_bandwidth_total: float | None | Unset = UNSET
    dcgm_fi_dev_nvlink_rx_bandwidth_total: float | None | Unset = UNSET
    dcgm_fi_dev_nvlink_tx_bandwidth_total: float | None | Unset = UNSET
    dcgm_fi_dev_pcie_replay_counter: float | None | Unset = UNSET
    dcgm_fi_dev_pcie_rx_throughput: float | None | Unset = UNSET
    dcgm_fi_dev_pcie_tx_throughput: float | None | Unset = UNSET
    dcgm_fi_dev_power_mgmt_limit: float | None | Unset = UNSET
    dcgm_fi_dev_power_usage: float | None | Unset = UNSET
    dcgm_fi_dev_pstate: float | None | Unset = UNSET
    dcgm_fi_dev_sm_clock: float | None | Unset = UNSET
    dcgm_fi_dev_total_energy_consumption: float | None | Unset = UNSET
    dcgm_fi_dev_uncorrectable_remapped_rows: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        dcgm_fi_dev_clock_throttle_reasons: float | None | Unset
        if isinstance(self.dcgm_fi_dev_clock_throttle_reasons, Unset):
            dcgm_fi_dev_clock_throttle_reasons = UNSET
        else:
            dcgm_fi_dev_clock_throttle_reasons = self.dcgm_fi_dev_clock_throttle_reasons

        dcgm_fi_dev_compute_pids: float | None | Unset
        if isinstance(self.dcgm_fi_dev_compute_pids, Unset):
            dcgm_fi_dev_compute_pids = UNSET
        else:
            dcgm_fi_dev_compute_pids = self.dcgm_fi_dev_compute_pids

        dcgm_fi_dev_correctable_remapped_rows: float | None | Unset
        if isinstance(self.dcgm_fi_dev_correctable_remapped_rows, Unset):
            dcgm_fi_dev_correctable_remapped_rows = UNSET
        else:
            dcgm_fi_dev_correctable_remapped_rows = self.dcgm_fi_dev_correctable_remapped_rows

        dcgm_fi_dev_dec_util: float | None | Unset
        if isinstance(self.dcgm_fi_dev_dec_util, Unset):
            dcgm_fi_dev_dec_util = UNSET
        else:
            dcgm_fi_dev_dec_util = self.dcgm_fi_dev_dec_util

        dcgm_fi_dev_ecc_dbe_agg_total: float | None | Unset
        if isinstance(self.dcgm_fi_dev_ecc_dbe_agg_total, Unset):
            dcgm_fi_dev_ecc_dbe_agg_total = UNSET
        else:
            dcgm_fi_dev_ecc_dbe_agg_total = self.dcgm_fi_dev_ecc_dbe_agg_total

        dcgm_fi_dev_ecc_dbe_vol_total: float | None | Unset
        if isinstance(self.dcgm_fi_dev_ecc_dbe_vol_total, Unset):
            dcgm_fi_dev_ecc_dbe_vol_total = UNSET
        else:
            dcgm_fi_dev_ecc_dbe_vol_total = self.dcgm_fi_dev_ecc_dbe_vol_total

        dcgm_fi_dev_ecc_sbe_agg_total: float | None | Unset
        if isinstance(self.dcgm_fi_dev_ecc_sbe_agg_total, Unset):
            dcgm_fi_dev_ecc_sbe_agg_total = UNSET
        else:
            dcgm_fi_dev_ecc_sbe_agg_total = self.dcgm_fi_dev_ecc_sbe_agg_total

        dcgm_fi_dev_ecc_sbe_vol_total: float | None | Unset
        if isinstance(self.dcgm_fi_dev_ecc_sbe_vol_total, Unset):
            dcgm_fi_dev_ecc_sbe_vol_total = UNSET
        else:
            dcgm_fi_dev_ecc_sbe_vol_total = self.dcgm_fi_dev_ecc_sbe_vol_total

        dcgm_fi_dev_enc_util: float | None | Unset
        if isinstance(self.dcgm_fi_dev_enc_util, Unset):
            dcgm_fi_dev_enc_util = UNSET
        else:
            dcgm_fi_dev_enc_util = self.dcgm_fi_dev_enc_util

        dcgm_fi_dev_fan_speed: float | None | Unset
        if isinstance(self.dcgm_fi_dev_fan_speed, Unset):
            dcgm_fi_dev_fan_speed = UNSET
        else:
            dcgm_fi_dev_fan_speed = self.dcgm_fi_dev_fan_speed

        dcgm_fi_dev_fb_free: float | None | Unset
        if isinstance(self.dcgm_fi_dev_fb_free, Unset):
            dcgm_fi_dev_fb_free = UNSET
        else:
            dcgm_fi_dev_fb_free = self.dcgm_fi_dev_fb_free

        dcgm_fi_dev_fb_reserved: float | None | Unset
        if isinstance(self.dcgm_fi_dev_fb_reserved, Unset):
            dcgm_fi_dev_fb_reserved = UNSET
        else:
            dcgm_fi_dev_fb_reserved = self.dcgm_fi_dev_fb_reserved

        dcgm_fi_dev_fb_total: float | None | Unset
        if isinstance(self.dcgm_fi_dev_fb_total, Unset):
            dcgm_fi_dev_fb_total = UNSET
        else:
            dcgm_fi_dev_fb_total = self.dcgm_fi_dev_fb_total

        dcgm_fi_dev_fb_used: float | None | Unset
        if isinstance(self.dcgm_fi_dev_fb_used, Unset):
            dcgm_fi_dev_fb_used = UNSET
        else:
            dcgm_fi_dev_fb_used = self.dcgm_fi_dev_fb_used

        dcgm_fi_dev_gpu_temp: float | None | Unset
        if isinstance(self.dcgm_fi_dev_gpu_temp, Unset):
            dcgm_fi_dev_gpu_temp = UNSET
        else:
            dcgm_fi_dev_gpu_temp = self.dcgm_fi_dev_gpu_temp

        dcgm_fi_dev_gpu_util: float | None | Unset
        if isinstance(self.dcgm_fi_dev_gpu_util, Unset):
            dcgm_fi_dev_gpu_util = UNSET
        else:
            dcgm_fi_dev_gpu_util = self.dcgm_fi_dev_gpu_util

        dcgm_fi_dev_memory_temp: float | None | Unset
        if isinstance(self.dcgm_fi_dev_memory_temp, Unset):
            dcgm_fi_dev_memory_temp = UNSET
        else:
            dcgm_fi_dev_memory_temp = self.dcgm_fi_dev_memory_temp

        dcgm_fi_dev_mem_clock: float | None | Unset
        if isinstance(self.dcgm_fi_dev_mem_clock, Unset):
            dcgm_fi_dev_mem_clock = UNSET
        else:
            dcgm_fi_dev_mem_clock = self.dcgm_fi_dev_mem_clock

        dcgm_fi_dev_mem_copy_util: float | None | Unset
        if isinstance(self.dcgm_fi_dev_mem_copy_util, Unset):
            dcgm_fi_dev_mem_copy_util = UNSET
        else:
            dcgm_fi_dev_mem_copy_util = self.dcgm_fi_dev_mem_copy_util

        dcgm_fi_dev_nvlink_bandwidth_total: float | None | Unset
        if isinstance(self.dcgm_fi_dev_nvlink_bandwidth_total, Unset):
            dcgm_fi_dev_nvlink_bandwidth_total = UNSET
        else:
            dcgm_fi_dev_nvlink_bandwidth_total = self.dcgm_fi_dev_nvlink_bandwidth_total

        dcgm_fi_dev_nvlink_rx_bandwidth_total: float | None | Unset
        if isinstance(self.dcgm_fi_dev_nvlink_rx_bandwidth_total, Unset):
            dcgm_fi_dev_nvlink_rx_bandwidth_total = UNSET
        else:
            dcgm_fi_dev_nvlink_rx_bandwidth_total = self.dcgm_fi_dev_nvlink_rx_bandwidth_total

        dcgm_fi_dev_nvlink_tx_bandwidth_total: float | None | Unset
        if isinstance(self.dcgm_fi_dev_nvlink_tx_bandwidth_total, Unset):
            dcgm_fi_dev_nvlink_tx_bandwidth_total = UNSET
        else:
            dcgm_fi_dev_nvlink_tx_bandwidth_total = self.dcgm_fi_dev_nvlink_tx_bandwidth_total

        dcgm_fi_dev_pcie_replay_counter: float | None | Unset
        if isinstance(self.dcgm_fi_dev_pcie_replay_counter, Unset):
            dcgm_fi_dev_pcie_replay_counter = UNSET
        else:
            dcgm_fi_dev_pcie_replay_counter = self.dcgm_fi_dev_pcie_replay_counter

        dcgm_fi_dev_pcie_rx_throughput: float | None | Unset
        if isinstance(self.dcgm_fi_dev_pcie_rx_throughput, Unset):
            dcgm_fi_dev_pcie_rx_throughput = UNSET
        else:
            dcgm_fi_dev_pcie_rx_throughput = self.dcgm_fi_dev_pcie_rx_throughput

        dcgm_fi_dev_pcie_tx_throughput: float | None | Unset
        if isinstance(self.dcgm_fi_dev_pcie_tx_throughput, Unset):
            dcgm_fi_dev_pcie_tx_throughput = UNSET
        else:
            dcgm_fi_dev_pcie_tx_throughput = self.dcgm_fi_dev_pcie_tx_throughput

        dcgm_fi_dev_power_mgmt_limit: float | None | Unset
        if isinstance(self.dcgm_fi_dev_power_mgmt_limit, Unset):
            dcgm_fi_dev_power_mgmt_limit = UNSET
        else:
            dcgm_fi_dev_power_mgmt_limit = self.dcgm_fi_dev_power_mgmt_limit

        dcgm_fi_dev_power_usage: float | None | Unset
        if isinstance(self.dcgm_fi_dev_power_usage, Unset):
            dcgm_fi_dev_power_usage = UNSET
        else:
            dcgm_fi_dev_power_usage = self.dcgm_fi_dev_power_usage

        dcgm_fi_dev_pstate: float | None | Unset
        if isinstance(self.dcgm_fi_dev_pstate, Unset):
            dcgm_fi_dev_pstate = UNSET
        else:
            dcgm_fi_dev_pstate = self.dcgm_fi_dev_pstate

        dcgm_fi_dev_sm_clock: float | None | Unset
        if isinstance(self.dcgm_fi_dev_sm_clock, Unset):
            dcgm_fi_dev_sm_clock = UNSET
        else:
            dcgm_fi_dev_sm_clock = self.dcgm_fi_dev_sm_clock

        dcgm_fi_dev_total_energy_consumption: float | None | Unset
        if isinstance(self.dcgm_fi_dev_total_energy_consumption, Unset):
            dcgm_fi_dev_total_energy_consumption = UNSET
        else:
            dcgm_fi_dev_total_energy_consumption = self.dcgm_fi_dev_total_energy_consumption

        dcgm_fi_dev_uncorrectable_remapped_rows: float | None | Unset
        if isinstance(self.dcgm_fi_dev_uncorrectable_remapped_rows, Unset):
            dcgm_fi_dev_uncorrectable_remapped_rows = UNSET
        else:
            dcgm_fi_dev_uncorrectable_remapped_rows = self.dcgm_fi_dev_uncorrectable_remapped_rows


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if dcgm_fi_dev_clock_throttle_reasons is not UNSET:
            field_dict["DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"] = dcgm_fi_dev_clock_throttle_reasons
        if dcgm_fi_dev_compute_pids is not UNSET:
            field_dict["DCGM_FI_DEV_COMPUTE_PIDS"] = dcgm_fi_dev_compute_pids
        if dcgm_fi_dev_correctable_remapped_rows is not UNSET:
            field_dict["DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"] = dcgm_fi_dev_correctable_remapped_rows
        if dcgm_fi_dev_dec_util is not UNSET:
            field_dict["DCGM_FI_DEV_DEC_UTIL"] = dcgm_fi_dev_dec_util
        if dcgm_fi_dev_ecc_dbe_agg_total is not UNSET:
            field_dict["DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"] = dcgm_fi_dev_ecc_dbe_agg_total
        if dcgm_fi_dev_ecc_dbe_vol_total is not UNSET:
            field_dict["DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"] = dcgm_fi_dev_ecc_dbe_vol_total
        if dcgm_fi_dev_ecc_sbe_agg_total is not UNSET:
            field_dict["DCGM_FI_DEV_ECC_SBE_AGG_TOTAL"] = dcgm_fi_dev_ecc_sbe_agg_total
        if dcgm_fi_dev_ecc_sbe_vol_total is not UNSET:
            field_dict["DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"] = dcgm_fi_dev_ecc_sbe_vol_total
        if dcgm_fi_dev_enc_util is not UNSET:
            field_dict["DCGM_FI_DEV_ENC_UTIL"] = dcgm_fi_dev_enc_util
        if dcgm_fi_dev_fan_speed is not UNSET:
            field_dict["DCGM_FI_DEV_FAN_SPEED"] = dcgm_fi_dev_fan_speed
        if dcgm_fi_dev_fb_free is not UNSET:
            field_dict["DCGM_FI_DEV_FB_FREE"] = dcgm_fi_dev_fb_free
        if dcgm_fi_dev_fb_reserved is not UNSET:
            field_dict["DCGM_FI_DEV_FB_RESERVED"] = dcgm_fi_dev_fb_reserved
        if dcgm_fi_dev_fb_total is not UNSET:
            field_dict["DCGM_FI_DEV_FB_TOTAL"] = dcgm_fi_dev_fb_total
        if dcgm_fi_dev_fb_used is not UNSET:
            field_dict["DCGM_FI_DEV_FB_USED"] = dcgm_fi_dev_fb_used
        if dcgm_fi_dev_gpu_temp is not UNSET:
            field_dict["DCGM_FI_DEV_GPU_TEMP"] = dcgm_fi_dev_gpu_temp
        if dcgm_fi_dev_gpu_util is not UNSET:
            field_dict["DCGM_FI_DEV_GPU_UTIL"] = dcgm_fi_dev_gpu_util
        if dcgm_fi_dev_memory_temp is not UNSET:
            field_dict["DCGM_FI_DEV_MEMORY_TEMP"] = dcgm_fi_dev_memory_temp
        if dcgm_fi_dev_mem_clock is not UNSET:
            field_dict["DCGM_FI_DEV_MEM_CLOCK"] = dcgm_fi_dev_mem_clock
        if dcgm_fi_dev_mem_copy_util is not UNSET:
            field_dict["DCGM_FI_DEV_MEM_COPY_UTIL"] = dcgm_fi_dev_mem_copy_util
        if dcgm_fi_dev_nvlink_bandwidth_total is not UNSET:
            field_dict["DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"] = dcgm_fi_dev_nvlink_bandwidth_total
        if dcgm_fi_dev_nvlink_rx_bandwidth_total is not UNSET:
            field_dict["DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_TOTAL"] = dcgm_fi_dev_nvlink_rx_bandwidth_total
        if dcgm_fi_dev_nvlink_tx_bandwidth_total is not UNSET:
            field_dict["DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_TOTAL"] = dcgm_fi_dev_nvlink_tx_bandwidth_total
        if dcgm_fi_dev_pcie_replay_counter is not UNSET:
            field_dict["DCGM_FI_DEV_PCIE_REPLAY_COUNTER"] = dcgm_fi_dev_pcie_replay_counter
        if dcgm_fi_dev_pcie_rx_throughput is not UNSET:
            field_dict["DCGM_FI_DEV_PCIE_RX_THROUGHPUT"] = dcgm_fi_dev_pcie_rx_throughput
        if dcgm_fi_dev_pcie_tx_throughput is not UNSET:
            field_dict["DCGM_FI_DEV_PCIE_TX_THROUGHPUT"] = dcgm_fi_dev_pcie_tx_throughput
        if dcgm_fi_dev_power_mgmt_limit is not UNSET:
            field_dict["DCGM_FI_DEV_POWER_MGMT_LIMIT"] = dcgm_fi_dev_power_mgmt_limit
        if dcgm_fi_dev_power_usage is not UNSET:
            field_dict["DCGM_FI_DEV_POWER_USAGE"] = dcgm_fi_dev_power_usage
        if dcgm_fi_dev_pstate is not UNSET:
            field_dict["DCGM_FI_DEV_PSTATE"] = dcgm_fi_dev_pstate
        if dcgm_fi_dev_sm_clock is not UNSET:
            field_dict["DCGM_FI_DEV_SM_CLOCK"] = dcgm_fi_dev_sm_clock
        if dcgm_fi_dev_total_energy_consumption is not UNSET:
            field_dict["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] = dcgm_fi_dev_total_energy_consumption
        if dcgm_fi_dev_uncorrectable_remapped_rows is not UNSET:
            field_dict["DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"] = dcgm_fi_dev_uncorrectable_remapped_rows

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_dcgm_fi_dev_clock_throttle_reasons(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_clock_throttle_reasons = _parse_dcgm_fi_dev_clock_throttle_reasons(d.pop("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", UNSET))


        def _parse_dcgm_fi_dev_compute_pids(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_compute_pids = _parse_dcgm_fi_dev_compute_pids(d.pop("DCGM_FI_DEV_COMPUTE_PIDS", UNSET))


        def _parse_dcgm_fi_dev_correctable_remapped_rows(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_correctable_remapped_rows = _parse_dcgm_fi_dev_correctable_remapped_rows(d.pop("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", UNSET))


        def _parse_dcgm_fi_dev_dec_util(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_dec_util = _parse_dcgm_fi_dev_dec_util(d.pop("DCGM_FI_DEV_DEC_UTIL", UNSET))


        def _parse_dcgm_fi_dev_ecc_dbe_agg_total(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_ecc_dbe_agg_total = _parse_dcgm_fi_dev_ecc_dbe_agg_total(d.pop("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", UNSET))


        def _parse_dcgm_fi_dev_ecc_dbe_vol_total(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_ecc_dbe_vol_total = _parse_dcgm_fi_dev_ecc_dbe_vol_total(d.pop("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", UNSET))


        def _parse_dcgm_fi_dev_ecc_sbe_agg_total(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_ecc_sbe_agg_total = _parse_dcgm_fi_dev_ecc_sbe_agg_total(d.pop("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", UNSET))


        def _parse_dcgm_fi_dev_ecc_sbe_vol_total(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_ecc_sbe_vol_total = _parse_dcgm_fi_dev_ecc_sbe_vol_total(d.pop("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", UNSET))


        def _parse_dcgm_fi_dev_enc_util(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_enc_util = _parse_dcgm_fi_dev_enc_util(d.pop("DCGM_FI_DEV_ENC_UTIL", UNSET))


        def _parse_dcgm_fi_dev_fan_speed(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_fan_speed = _parse_dcgm_fi_dev_fan_speed(d.pop("DCGM_FI_DEV_FAN_SPEED", UNSET))


        def _parse_dcgm_fi_dev_fb_free(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_fb_free = _parse_dcgm_fi_dev_fb_free(d.pop("DCGM_FI_DEV_FB_FREE", UNSET))


        def _parse_dcgm_fi_dev_fb_reserved(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_fb_reserved = _parse_dcgm_fi_dev_fb_reserved(d.pop("DCGM_FI_DEV_FB_RESERVED", UNSET))


        def _parse_dcgm_fi_dev_fb_total(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_fb_total = _parse_dcgm_fi_dev_fb_total(d.pop("DCGM_FI_DEV_FB_TOTAL", UNSET))


        def _parse_dcgm_fi_dev_fb_used(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_fb_used = _parse_dcgm_fi_dev_fb_used(d.pop("DCGM_FI_DEV_FB_USED", UNSET))


        def _parse_dcgm_fi_dev_gpu_temp(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_gpu_temp = _parse_dcgm_fi_dev_gpu_temp(d.pop("DCGM_FI_DEV_GPU_TEMP", UNSET))


        def _parse_dcgm_fi_dev_gpu_util(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_gpu_util = _parse_dcgm_fi_dev_gpu_util(d.pop("DCGM_FI_DEV_GPU_UTIL", UNSET))


        def _parse_dcgm_fi_dev_memory_temp(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_memory_temp = _parse_dcgm_fi_dev_memory_temp(d.pop("DCGM_FI_DEV_MEMORY_TEMP", UNSET))


        def _parse_dcgm_fi_dev_mem_clock(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_mem_clock = _parse_dcgm_fi_dev_mem_clock(d.pop("DCGM_FI_DEV_MEM_CLOCK", UNSET))


        def _parse_dcgm_fi_dev_mem_copy_util(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_mem_copy_util = _parse_dcgm_fi_dev_mem_copy_util(d.pop("DCGM_FI_DEV_MEM_COPY_UTIL", UNSET))


        def _parse_dcgm_fi_dev_nvlink_bandwidth_total(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_nvlink_bandwidth_total = _parse_dcgm_fi_dev_nvlink_bandwidth_total(d.pop("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", UNSET))


        def _parse_dcgm_fi_dev_nvlink_rx_bandwidth_total(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_nvlink_rx_bandwidth_total = _parse_dcgm_fi_dev_nvlink_rx_bandwidth_total(d.pop("DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_TOTAL", UNSET))


        def _parse_dcgm_fi_dev_nvlink_tx_bandwidth_total(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_nvlink_tx_bandwidth_total = _parse_dcgm_fi_dev_nvlink_tx_bandwidth_total(d.pop("DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_TOTAL", UNSET))


        def _parse_dcgm_fi_dev_pcie_replay_counter(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_pcie_replay_counter = _parse_dcgm_fi_dev_pcie_replay_counter(d.pop("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", UNSET))


        def _parse_dcgm_fi_dev_pcie_rx_throughput(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_pcie_rx_throughput = _parse_dcgm_fi_dev_pcie_rx_throughput(d.pop("DCGM_FI_DEV_PCIE_RX_THROUGHPUT", UNSET))


        def _parse_dcgm_fi_dev_pcie_tx_throughput(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_pcie_tx_throughput = _parse_dcgm_fi_dev_pcie_tx_throughput(d.pop("DCGM_FI_DEV_PCIE_TX_THROUGHPUT", UNSET))


        def _parse_dcgm_fi_dev_power_mgmt_limit(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_power_mgmt_limit = _parse_dcgm_fi_dev_power_mgmt_limit(d.pop("DCGM_FI_DEV_POWER_MGMT_LIMIT", UNSET))


        def _parse_dcgm_fi_dev_power_usage(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_power_usage = _parse_dcgm_fi_dev_power_usage(d.pop("DCGM_FI_DEV_POWER_USAGE", UNSET))


        def _parse_dcgm_fi_dev_pstate(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_pstate = _parse_dcgm_fi_dev_pstate(d.pop("DCGM_FI_DEV_PSTATE", UNSET))


        def _parse_dcgm_fi_dev_sm_clock(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_sm_clock = _parse_dcgm_fi_dev_sm_clock(d.pop("DCGM_FI_DEV_SM_CLOCK", UNSET))


        def _parse_dcgm_fi_dev_total_energy_consumption(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_total_energy_consumption = _parse_dcgm_fi_dev_total_energy_consumption(d.pop("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", UNSET))


        def _parse_dcgm_fi_dev_uncorrectable_remapped_rows(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        dcgm_fi_dev_uncorrectable_remapped_rows = _parse_dcgm_fi_dev_uncorrectable_remapped_rows(d.pop("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", UNSET))


        gpu_fields = cls(
            dcgm_fi_dev_clock_throttle_reasons=dcgm_fi_dev_clock_throttle_reasons,
            dcgm_fi_dev_compute_pids=dcgm_fi_dev_compute_pids,
            dcgm_fi_dev_correctable_remapped_rows=dcgm_fi_dev_correctable_remapped_rows,
            dcgm_fi_dev_dec_util=dcgm_fi_dev_dec_util,
            dcgm_fi_dev_ecc_dbe_agg_total=dcgm_fi_dev_ecc_dbe_agg_total,
            dcgm_fi_dev_ecc_dbe_vol_total=dcgm_fi_dev_ecc_dbe_vol_total,
            dcgm_fi_dev_ecc_sbe_agg_total=dcgm_fi_dev_ecc_sbe_agg_total,
            dcgm_fi_dev_ecc_sbe_vol_total=dcgm_fi_dev_ecc_sbe_vol_total,
            dcgm_fi_dev_enc_util=dcgm_fi_dev_enc_util,
            dcgm_fi_dev_fan_speed=dcgm_fi_dev_fan_speed,
            dcgm_fi_dev_fb_free=dcgm_fi_dev_fb_free,
            dcgm_fi_dev_fb_reserved=dcgm_fi_dev_fb_reserved,
            dcgm_fi_dev_fb_total=dcgm_fi_dev_fb_total,
            dcgm_fi_dev_fb_used=dcgm_fi_dev_fb_used,
            dcgm_fi_dev_gpu_temp=dcgm_fi_dev_gpu_temp,
            dcgm_fi_dev_gpu_util=dcgm_fi_dev_gpu_util,
            dcgm_fi_dev_memory_temp=dcgm_fi_dev_memory_temp,
            dcgm_fi_dev_mem_clock=dcgm_fi_dev_mem_clock,
            dcgm_fi_dev_mem_copy_util=dcgm_fi_dev_mem_copy_util,
            dcgm_fi_dev_nvlink_bandwidth_total=dcgm_fi_dev_nvlink_bandwidth_total,
            dcgm_fi_dev_nvlink_rx_bandwidth_total=dcgm_fi_dev_nvlink_rx_bandwidth_total,
            dcgm_fi_dev_nvlink_tx_bandwidth_total=dcgm_fi_dev_nvlink_tx_bandwidth_total,
            dcgm_fi_dev_pcie_replay_counter=dcgm_fi_dev_pcie_replay_counter,
            dcgm_fi_dev_pcie_rx_throughput=dcgm_fi_dev_pcie_rx_throughput,
            dcgm_fi_dev_pcie_tx_throughput=dcgm_fi_dev_pcie_tx_throughput,
            dcgm_fi_dev_power_mgmt_limit=dcgm_fi_dev_power_mgmt_limit,
            dcgm_fi_dev_power_usage=dcgm_fi_dev_power_usage,
            dcgm_fi_dev_pstate=dcgm_fi_dev_pstate,
            dcgm_fi_dev_sm_clock=dcgm_fi_dev_sm_clock,
            dcgm_fi_dev_total_energy_consumption=dcgm_fi_dev_total_energy_consumption,
            dcgm_fi_dev_uncorrectable_remapped_rows=dcgm_fi_dev_uncorrectable_remapped_rows,
        )


        gpu_fields.additional_properties = d
        return gpu_fields

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

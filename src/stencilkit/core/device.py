"""Devices, numbered as DLPack numbers them."""

from __future__ import annotations

import enum

from .records import record


class DeviceType(enum.IntEnum):
    """DLPack device type codes."""

    CPU = 1
    CUDA = 2
    CPU_PINNED = 3
    OPENCL = 4
    VULKAN = 7
    METAL = 8
    VPI = 9
    ROCM = 10
    ROCM_PINNED = 11
    CUDA_MANAGED = 13
    ONE_API = 14


@record
class Device:
    """A device: its DLPack type and ordinal, e.g. ``Device(DeviceType.CUDA, 0)``."""

    device_type: DeviceType
    device_id: int = 0

    def __str__(self) -> str:
        return f"{self.device_type.name}:{self.device_id}"

    @property
    def is_gpu(self) -> bool:
        """Whether this is a GPU (CUDA or ROCm) device."""
        return self.device_type in (DeviceType.CUDA, DeviceType.CUDA_MANAGED, DeviceType.ROCM)


CPU_DEVICE = Device(DeviceType.CPU, 0)

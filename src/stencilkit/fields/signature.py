"""``FieldSignature``: everything about a field that compiled code is specialized on.

Two fields with equal signatures can share one compiled plan: the plan's argument block holds
their strides and origins, and only the data address changes from call to call. The signature
is computed once per field (``Field.signature``) and interned into a small integer (``Field.signature_key``),
which is what the per-call path hashes.
"""

from __future__ import annotations

import numpy as np

from ..core.device import DeviceType
from ..core.records import record


@record
class FieldSignature:
    """A field's layout and placement, in the order of its own dimensions.

    >>> f = gtx.zeros({I: 4, K: 3}, gtx.float64)
    >>> f.signature
    FieldSignature(dims=('I', 'K'), dtype='float64', shape=(4, 3), strides=(3, 1), origin=(0, 0), device_type=<DeviceType.CPU: 1>, device_id=0)
    """

    dims: tuple[str, ...]  # dimension names, in buffer axis order
    dtype: str  # NumPy dtype name
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements, not bytes
    origin: tuple[
        int, ...
    ]  # buffer position of domain index 0 along each axis (minus the range start)
    device_type: DeviceType
    device_id: int

    @property
    def on_gpu(self) -> bool:
        return self.device_type == DeviceType.CUDA

    @property
    def device(self) -> tuple[DeviceType, int]:
        return self.device_type, self.device_id

    def axis(self, dim: str) -> int:
        """The buffer axis of the dimension named ``dim``."""
        return self.dims.index(dim)

    def stride_of(self, dim: str) -> int:
        return self.strides[self.dims.index(dim)]

    def span(self) -> tuple[int, int]:
        """The bytes the buffer covers, relative to its data pointer: ``[lo, hi)``."""
        if any(n == 0 for n in self.shape):
            return 0, 0
        itemsize = np.dtype(self.dtype).itemsize
        lo = sum(min(0, (n - 1) * st) for n, st in zip(self.shape, self.strides))
        hi = sum(max(0, (n - 1) * st) for n, st in zip(self.shape, self.strides)) + 1
        return lo * itemsize, hi * itemsize

    def as_text(self) -> str:
        axes = ", ".join(
            f"{d}: {n} (stride {s}, origin {o})"
            for d, n, s, o in zip(self.dims, self.shape, self.strides, self.origin)
        )
        return f"{self.dtype}[{axes}] on {self.device_type.name}:{self.device_id}"

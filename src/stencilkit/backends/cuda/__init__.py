"""Generated CUDA backend."""

from .backend import CudaTarget

__all__ = ["CudaTarget"]

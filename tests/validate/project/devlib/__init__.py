"""A tiny library with CUDA-only habits, used by the patches.validate end-to-end tests."""
from devlib.ops import pick_device, scale

__all__ = ["pick_device", "scale"]

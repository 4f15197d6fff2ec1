"""minitrain: tiny training helpers (CUDA-only on purpose)."""
from .runtime import pick_device, visible_devices
from .timing import time_cuda

__all__ = ["pick_device", "visible_devices", "time_cuda"]

"""minitrain: tiny training helpers (CUDA-only on purpose)."""
from .runtime import pick_device, visible_devices
from .timing import time_call

__all__ = ["pick_device", "visible_devices", "time_call"]

"""Memory API of torch.trn. Statistics come from the native c10::DeviceAllocator, so these agree
with torch.accelerator.memory_* by construction."""

from __future__ import annotations

import torch

from . import _core
from .runtime import _index


def memory_stats(device=None):
    return torch.accelerator.memory_stats(_index(device))


def memory_allocated(device=None) -> int:
    return torch.accelerator.memory_allocated(_index(device))


def max_memory_allocated(device=None) -> int:
    return torch.accelerator.max_memory_allocated(_index(device))


def memory_reserved(device=None) -> int:
    return torch.accelerator.memory_reserved(_index(device))


def max_memory_reserved(device=None) -> int:
    return torch.accelerator.max_memory_reserved(_index(device))


def reset_peak_memory_stats(device=None) -> None:
    torch.accelerator.reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device=None) -> None:
    torch.accelerator.reset_accumulated_memory_stats(_index(device))


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of the device, total being its capacity."""
    return torch.accelerator.get_memory_info(_index(device))


def empty_cache() -> None:
    """Nothing is cached: freed device memory goes back to the host immediately."""


def set_capacity(device, nbytes: int) -> None:
    """Capacity hook: allocations beyond `nbytes` on this device raise torch.OutOfMemoryError."""
    _core.native().set_capacity(_index(device), int(nbytes))


def capacity(device=None) -> int:
    return _core.native().capacity(_index(device))


from .memory_snapshot import _dump_snapshot, _record_memory_history, _snapshot  # noqa: E402, F401

"""Device memory statistics on the current accelerator.

Delegates to `torch.accelerator.<name>` (torch >= 2.9), else to `torch.<type>.<name>`. Without an
accelerator, counters are 0 and `memory_stats()` is `{}`: nothing lives in device memory, the
same answer torch.cuda gives before CUDA is initialised. `get_memory_info()` on CPU reports host
RAM. A backend that keeps no allocator statistics raises `Unsupported` instead of answering 0.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from . import runtime as _dev
from .errors import Unsupported

_COUNTERS = ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved")


def _call(name: str, dev, cpu_answer: Any):
    if not _dev.is_available():
        return cpu_answer
    idx = _dev._index_of(dev)
    acc = getattr(torch, "accelerator", None)
    fn = getattr(acc, name, None)
    if fn is not None:
        try:
            return fn(idx)
        except RuntimeError as err:
            # e.g. a backend without a c10::DeviceAllocator; try its own module before giving up.
            first = err
    else:
        first = None
    mod_fn = getattr(_dev.device_module(), name, None)
    if mod_fn is not None:
        return mod_fn(idx)
    raise Unsupported(
        name, _dev.device_type(), f"the backend exposes no allocator statistics ({first})"
    )


def memory_allocated(dev=None) -> int:
    """Bytes currently held by tensors on `dev`."""
    return _call("memory_allocated", dev, 0)


def max_memory_allocated(dev=None) -> int:
    """Peak of `memory_allocated` since start or the last `reset_peak_memory_stats`."""
    return _call("max_memory_allocated", dev, 0)


def memory_reserved(dev=None) -> int:
    """Bytes held by the caching allocator on `dev`."""
    return _call("memory_reserved", dev, 0)


def max_memory_reserved(dev=None) -> int:
    """Peak of `memory_reserved`."""
    return _call("max_memory_reserved", dev, 0)


def memory_stats(dev=None) -> dict[str, Any]:
    """The backend's allocator statistics dict ({} on CPU)."""
    return dict(_call("memory_stats", dev, {}))


def reset_peak_memory_stats(dev=None) -> None:
    """Reset the peak counters."""
    _call("reset_peak_memory_stats", dev, None)


def reset_accumulated_memory_stats(dev=None) -> None:
    """Reset the accumulated (count) statistics."""
    _call("reset_accumulated_memory_stats", dev, None)


def empty_cache() -> None:
    """Release cached, unused blocks to the device (a no-op on CPU, where torch.accelerator raises)."""
    if not _dev.is_available():
        return
    acc = getattr(torch, "accelerator", None)
    fn = getattr(acc, "empty_cache", None) or getattr(_dev.device_module(), "empty_cache", None)
    if fn is None:
        raise Unsupported(
            "empty_cache", _dev.device_type(), "the backend has no caching allocator hook"
        )
    fn()


def get_memory_info(dev=None) -> tuple[int, int]:
    """(free, total) bytes of `dev`; host RAM on CPU (gap filled from sysconf)."""
    if not _dev.is_available():
        page = os.sysconf("SC_PAGE_SIZE")
        return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page
    if hasattr(getattr(torch, "accelerator", None), "get_memory_info"):
        try:
            return tuple(_call("get_memory_info", dev, None))
        except Unsupported:
            pass
    fn = getattr(_dev.device_module(), "mem_get_info", None)
    if fn is None:
        raise Unsupported(
            "get_memory_info", _dev.device_type(), "the backend reports no memory info"
        )
    return tuple(fn(_dev._index_of(dev)))

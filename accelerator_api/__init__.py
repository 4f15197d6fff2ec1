"""hwneutral's device-neutral API: code written against it runs on whatever accelerator is current
(cuda, xpu, mps, any PrivateUse1 plugin) and on CPU. See docs/accelerator_api.md.

Setting HN_AUTOPORT=1 makes this import also install the one-line CUDA port
(`accelerator_api.autoport`); nothing is patched otherwise.
"""

from __future__ import annotations

import os

from .amp import GradScaler, autocast, autocast_dtypes, preferred_dtype
from .distributed import distributed_backend
from .errors import Unsupported
from .graphs import capture, graph
from .memory import (
    empty_cache,
    get_memory_info,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)
from .pinning import can_pin_memory, loader_kwargs, pin_memory
from .properties import (
    DeviceProperties,
    device_properties,
    is_bf16_supported,
    supported_dtypes,
    supports_dtype,
)
from .rng import fork_rng, get_rng_state, manual_seed, manual_seed_all, set_rng_state
from .runtime import (
    accelerator,
    current_device_index,
    device,
    device_count,
    device_module,
    device_type,
    is_available,
    set_device_index,
    synchronize,
)
from .streams import Event, Stream, current_stream, stream

__all__ = [
    "GradScaler",
    "autocast",
    "autocast_dtypes",
    "preferred_dtype",
    "accelerator",
    "current_device_index",
    "device",
    "device_count",
    "device_module",
    "device_type",
    "is_available",
    "set_device_index",
    "synchronize",
    "distributed_backend",
    "Unsupported",
    "capture",
    "graph",
    "empty_cache",
    "get_memory_info",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "can_pin_memory",
    "loader_kwargs",
    "pin_memory",
    "DeviceProperties",
    "device_properties",
    "is_bf16_supported",
    "supported_dtypes",
    "supports_dtype",
    "fork_rng",
    "get_rng_state",
    "manual_seed",
    "manual_seed_all",
    "set_rng_state",
    "Event",
    "Stream",
    "current_stream",
    "stream",
]

if os.environ.get("HN_AUTOPORT", "").strip().lower() in ("1", "true", "yes", "on"):
    from ._port import install as _install

    _install()

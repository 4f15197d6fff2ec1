"""The module registered as torch.<backend name> (torch.trn): one namespace over runtime, memory,
RNG, properties and dtype policy, the surface torch expects of an accelerator device module."""

from __future__ import annotations

from . import memory  # noqa: F401  (torch.trn.memory._record_memory_history / _snapshot)
from .dtypes import get_amp_supported_dtype, is_bf16_supported  # noqa: F401
from .memory import (  # noqa: F401
    capacity,
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
    set_capacity,
)
from .properties import DeviceProperties  # noqa: F401
from .properties import get_device_properties as _props
from .random import (  # noqa: F401
    default_generator,
    get_offset,
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_offset,
    set_rng_state,
    set_rng_state_all,
)
from .runtime import (  # noqa: F401
    Event,
    Stream,
    _index,
    _is_in_bad_fork,
    _lazy_init,
    current_device,
    current_stream,
    device,
    device_count,
    init,
    is_available,
    is_initialized,
    set_device,
    set_stream,
    stream,
    synchronize,
)


def get_device_properties(device=None) -> DeviceProperties:
    return _props(_index(device))


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple[int, int]:
    p = get_device_properties(device)
    return (p.major, p.minor)

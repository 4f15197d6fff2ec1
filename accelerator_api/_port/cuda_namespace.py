"""`torch.cuda.*` for user code, on the port target.

Every public callable of `torch.cuda` is replaced by a caller-scoped stand-in: torch's own code
still sees the real `torch.cuda` (so torch never takes a CUDA code path it cannot run), while the
app's calls go to the neutral layer and are recorded. A CUDA API with no equivalent raises
`Unsupported` naming the call and the reason, instead of silently doing something else.
"""

from __future__ import annotations

import contextlib
import functools
import random
import sys
import types

import torch

from .. import amp as _amp
from .. import graphs as _graphs
from .. import memory, properties, rng, runtime, streams
from ..errors import Unsupported
from .dtypes import LEGACY_TYPES, check_dtype, port_autocast_args
from .patcher import Patcher
from .sites import RECORDER, from_torch, is_internal
from .target import Target, port_index

# Names in torch.cuda that are not APIs (imports, typing, exceptions users catch): left alone.
_LEAVE = {
    "Any",
    "Callable",
    "Optional",
    "NewType",
    "TYPE_CHECKING",
    "cast",
    "classproperty",
    "importlib",
    "lru_cache",
    "os",
    "platform",
    "threading",
    "torch",
    "traceback",
    "warnings",
    "Device",
    "PYTORCH_RELEASES_CODE_CC",
    "DEVICE_REQUIREMENT",
    "AcceleratorError",
    "CudaError",
    "DeferredCudaCallError",
    "OutOfMemoryError",
    "cudaStatus",
    "has_half",
    "has_magma",
}

# Reasons for the CUDA APIs that autoport deliberately does not map.
_REASONS = {
    "get_device_capability": "a CUDA compute capability (major, minor) has no meaning elsewhere; "
    "use accelerator_api.supports_dtype / device_properties",
    "make_graphed_callables": "torch has no device-neutral make_graphed_callables",
    "set_per_process_memory_fraction": "a memory-fraction cap is a CUDA caching-allocator feature",
    "get_per_process_memory_fraction": "a memory-fraction cap is a CUDA caching-allocator feature",
    "cudart": "the CUDA runtime library is CUDA itself",
    "get_arch_list": "the list names CUDA architectures",
    "get_gencode_flags": "the flags are nvcc's",
}


def _idx(device):
    return port_index(device)


def _seed() -> int:
    s = random.getrandbits(63)
    rng.manual_seed(s)
    return s


def _seed_all() -> int:
    s = random.getrandbits(63)
    rng.manual_seed_all(s)
    return s


def _initial_seed() -> int:
    if Target.is_cpu:
        return torch.initial_seed()
    return runtime.device_module().initial_seed()


def _rng_state_all():
    return (
        [rng.get_rng_state(i) for i in range(max(runtime.device_count(), 1))]
        if not Target.is_cpu
        else [rng.get_rng_state()]
    )


def _set_rng_state_all(states):
    for i, s in enumerate(states):
        rng.set_rng_state(s, None if Target.is_cpu else i)


def _set_device(device):
    if Target.is_cpu:
        return  # the CPU is one device: every CUDA index lands on it
    runtime.set_device_index(_idx(device))


@contextlib.contextmanager
def _device_ctx(device):
    idx = _idx(device) if not isinstance(device, torch.Tensor) else device.get_device()
    if Target.is_cpu or idx is None or idx < 0:
        yield
        return
    with torch.accelerator.device_index(idx):
        yield


def _stream_ctor(device=None, priority=0, **kwargs):
    if kwargs:
        raise Unsupported(
            "torch.cuda.Stream(" + ", ".join(kwargs) + "=...)",
            Target.type,
            "external CUDA stream handles have no equivalent",
        )
    return streams.Stream(Target.device(_idx(device)), priority=priority)


def _event_ctor(enable_timing=False, blocking=False, interprocess=False, external=False):
    if external:
        raise Unsupported(
            "torch.cuda.Event(external=True)",
            Target.type,
            "external CUDA events have no equivalent",
        )
    return streams.Event(enable_timing, blocking, interprocess)


def _current_stream(device=None):
    return streams.current_stream(_idx(device))


def _default_stream(device=None):
    if Target.is_cpu:
        return streams.HostStream("cpu")
    fn = getattr(runtime.device_module(), "default_stream", None)
    if fn is None:
        raise Unsupported(
            "torch.cuda.default_stream", Target.type, "the device module has no default_stream"
        )
    return fn(_idx(device))


def _pool_api(name: str):
    """``torch.cuda.<name>`` (MemPool, use_mem_pool) -> the target device module's own, which
    owns its caching allocator's pools; Unsupported where that module has
    none (the CPU's, a device without a caching allocator)."""

    def call(*args, **kwargs):
        fn = None if Target.is_cpu else getattr(runtime.device_module(), name, None)
        if fn is None:
            raise Unsupported(f"torch.cuda.{name}", Target.type, f"the device module has no {name}")
        return fn(*args, **kwargs)

    return call


def _set_stream(s):
    if s is None or Target.is_cpu:
        return
    torch.accelerator.set_stream(s)


class _Props:
    """torch.cuda.get_device_properties() look-alike: neutral fields, CUDA-only ones raise."""

    def __init__(self, p: properties.DeviceProperties):
        self.name, self.total_memory, self.type, self.index = (
            p.name,
            p.total_memory,
            p.type,
            p.index,
        )
        self._raw = p.raw

    def __getattr__(self, name):
        raw = self.__dict__.get("_raw")
        if raw is not None and hasattr(raw, name):
            return getattr(raw, name)
        raise Unsupported(
            f"torch.cuda.get_device_properties().{name}",
            Target.type,
            "a CUDA-specific property; neutral fields are name, total_memory, type, index",
        )

    def __repr__(self):
        return f"_Props(name={self.name!r}, total_memory={self.total_memory}, type={self.type!r})"


def _graphs_supported() -> bool:
    return _graphs._new_graph() is not None


def _cuda_graph(keep_graph=False):
    if not _graphs_supported():
        raise Unsupported(
            "torch.cuda.CUDAGraph",
            Target.type,
            "graph capture is not supported there; "
            "running the block eagerly would make replay() silently do nothing",
        )
    return torch.accelerator.Graph(keep_graph)


@contextlib.contextmanager
def _graph_ctx(cuda_graph, pool=None, stream=None, capture_error_mode="global", **_ignored):
    if not isinstance(cuda_graph, getattr(torch.accelerator, "Graph", ())):
        raise Unsupported("torch.cuda.graph", Target.type, "graph capture is not supported there")
    with stream if stream is not None else contextlib.nullcontext():
        cuda_graph.capture_begin()
        try:
            yield cuda_graph
        finally:
            cuda_graph.capture_end()


def _legacy_ctor(name: str, dtype: torch.dtype):
    def make(*args, **kwargs):
        check_dtype(f"torch.cuda.{name}", dtype)
        return getattr(torch, name)(*args, **kwargs).to(Target.device())

    return make


def _memory_summary(device=None, abbreviated=False):
    stats = memory.memory_stats(_idx(device))
    lines = [
        f"memory summary ({Target.type}): allocated {memory.memory_allocated(_idx(device))} bytes, "
        f"reserved {memory.memory_reserved(_idx(device))} bytes"
    ]
    lines += [f"  {k}: {v}" for k, v in sorted(stats.items())] if not abbreviated else []
    return "\n".join(lines)


def _mapping() -> dict[str, tuple[object, str]]:
    """name -> (replacement, what it maps to). Built at install time, once the target is known."""
    t = Target.type
    return {
        "is_available": (lambda: True, f"True ({t} stands in for CUDA)"),
        "is_initialized": (lambda: True, "True"),
        "init": (lambda: None, "no-op"),
        "device_count": (lambda: max(runtime.device_count(), 1), "accelerator_api.device_count"),
        "current_device": (runtime.current_device_index, "accelerator_api.current_device_index"),
        "set_device": (_set_device, "accelerator_api.set_device_index"),
        "synchronize": (
            lambda device=None: runtime.synchronize(_idx(device)),
            "accelerator_api.synchronize",
        ),
        "get_device_name": (
            lambda device=None: properties.device_properties(_idx(device)).name,
            "accelerator_api.device_properties().name",
        ),
        "get_device_properties": (
            lambda device=None: _Props(properties.device_properties(_idx(device))),
            "accelerator_api.device_properties",
        ),
        "is_bf16_supported": (
            lambda including_emulation=True: properties.is_bf16_supported(),
            "accelerator_api.is_bf16_supported",
        ),
        "is_tf32_supported": (lambda: False, "False (TF32 is NVIDIA-only)"),
        "memory_allocated": (
            lambda device=None: memory.memory_allocated(_idx(device)),
            "accelerator_api.memory_allocated",
        ),
        "max_memory_allocated": (
            lambda device=None: memory.max_memory_allocated(_idx(device)),
            "accelerator_api.max_memory_allocated",
        ),
        "memory_reserved": (
            lambda device=None: memory.memory_reserved(_idx(device)),
            "accelerator_api.memory_reserved",
        ),
        "max_memory_reserved": (
            lambda device=None: memory.max_memory_reserved(_idx(device)),
            "accelerator_api.max_memory_reserved",
        ),
        "memory_cached": (
            lambda device=None: memory.memory_reserved(_idx(device)),
            "accelerator_api.memory_reserved",
        ),
        "max_memory_cached": (
            lambda device=None: memory.max_memory_reserved(_idx(device)),
            "accelerator_api.max_memory_reserved",
        ),
        "memory_stats": (
            lambda device=None: memory.memory_stats(_idx(device)),
            "accelerator_api.memory_stats",
        ),
        "memory_summary": (_memory_summary, "summary of accelerator_api.memory_stats"),
        "reset_peak_memory_stats": (
            lambda device=None: memory.reset_peak_memory_stats(_idx(device)),
            "accelerator_api.reset_peak_memory_stats",
        ),
        "reset_max_memory_allocated": (
            lambda device=None: memory.reset_peak_memory_stats(_idx(device)),
            "accelerator_api.reset_peak_memory_stats",
        ),
        "reset_accumulated_memory_stats": (
            lambda device=None: memory.reset_accumulated_memory_stats(_idx(device)),
            "accelerator_api.reset_accumulated_memory_stats",
        ),
        "empty_cache": (memory.empty_cache, "accelerator_api.empty_cache"),
        "mem_get_info": (
            lambda device=None: memory.get_memory_info(_idx(device)),
            "accelerator_api.get_memory_info",
        ),
        "manual_seed": (lambda seed: rng.manual_seed(seed), "accelerator_api.manual_seed"),
        "manual_seed_all": (
            lambda seed: rng.manual_seed_all(seed),
            "accelerator_api.manual_seed_all",
        ),
        "seed": (_seed, "accelerator_api.manual_seed(random)"),
        "seed_all": (_seed_all, "accelerator_api.manual_seed_all(random)"),
        "initial_seed": (_initial_seed, "initial_seed of the target"),
        "get_rng_state": (
            lambda device="cuda": rng.get_rng_state(_idx(device)),
            "accelerator_api.get_rng_state",
        ),
        "set_rng_state": (
            lambda new_state, device="cuda": rng.set_rng_state(new_state, _idx(device)),
            "accelerator_api.set_rng_state",
        ),
        "get_rng_state_all": (_rng_state_all, "accelerator_api.get_rng_state per device"),
        "set_rng_state_all": (_set_rng_state_all, "accelerator_api.set_rng_state per device"),
        "Stream": (_stream_ctor, "torch.Stream"),
        "Event": (
            _event_ctor,
            "accelerator_api.Event" if not Target.is_cpu else "host-timer Event",
        ),
        "current_stream": (_current_stream, "accelerator_api.current_stream"),
        "default_stream": (_default_stream, "device module default_stream"),
        "MemPool": (_pool_api("MemPool"), "device module MemPool"),
        "use_mem_pool": (_pool_api("use_mem_pool"), "device module use_mem_pool"),
        "stream": (streams.stream, "with stream"),
        "set_stream": (_set_stream, "torch.accelerator.set_stream"),
        "StreamContext": (streams.stream, "with stream"),
        "device": (_device_ctx, "torch.accelerator.device_index"),
        "device_of": (_device_ctx, "torch.accelerator.device_index"),
        "CUDAGraph": (_cuda_graph, "torch.accelerator.Graph"),
        "graph": (_graph_ctx, "torch.accelerator.Graph capture"),
        "is_current_stream_capturing": (lambda: False, "False"),
        **{
            name: (_legacy_ctor(name, dt), f"torch.{name}(...).to({t!r})")
            for name, dt in LEGACY_TYPES.items()
        },
    }


def _unsupported(name: str):
    reason = _REASONS.get(name, "no device-neutral equivalent; autoport does not map it")

    def raise_it(*args, **kwargs):
        raise Unsupported(f"torch.cuda.{name}", Target.type, reason)

    return raise_it, "raises Unsupported"


def _scoped_function(real, ported, api: str, action: str):
    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        if is_internal(sys._getframe(1).f_code.co_filename):
            return real(*args, **kwargs)
        RECORDER.hit(api, action)
        return ported(*args, **kwargs)

    return wrapper


class _ScopedMeta(type):
    """A torch.cuda class stand-in: torch's code constructs the real class, apps the ported one;
    isinstance checks accept both."""

    def __call__(cls, *args, **kwargs):
        if from_torch(2):
            return cls.__real__(*args, **kwargs)
        RECORDER.hit(cls.__api__, cls.__action__)
        return cls.__ported__(*args, **kwargs)

    def __instancecheck__(cls, obj):
        if isinstance(obj, cls.__real__):
            return True
        legacy = cls.__dict__.get("__legacy_dtype__")
        if legacy is not None:
            return (
                isinstance(obj, torch.Tensor)
                and obj.dtype == legacy
                and obj.device.type == Target.type
            )
        also = cls.__dict__.get("__also__")
        return also is not None and isinstance(obj, also)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.__real__)


def _scoped_class(name: str, real: type, ported, api: str, action: str):
    ns = {
        "__real__": real,
        "__ported__": staticmethod(ported),
        "__api__": api,
        "__action__": action,
        "__doc__": real.__doc__,
        "__module__": "torch.cuda",
    }
    if name in LEGACY_TYPES:
        ns["__legacy_dtype__"] = LEGACY_TYPES[name]
        ns["__legacy_cuda_type__"] = f"torch.cuda.{name}"
    elif name == "Stream":
        ns["__also__"] = torch.Stream
    elif name == "Event":
        ns["__also__"] = (torch.Event, streams.HostEvent)
    elif name == "CUDAGraph" and hasattr(torch.accelerator, "Graph"):
        ns["__also__"] = torch.accelerator.Graph
    return _ScopedMeta(name, (), ns)


def install(p: Patcher) -> None:
    cuda = torch.cuda
    mapping = _mapping()
    for name in dir(cuda):
        if name.startswith("_") or name in _LEAVE:
            continue
        real = getattr(cuda, name)
        if isinstance(real, types.ModuleType) or not callable(real) or name.endswith("Storage"):
            continue
        ported, action = mapping.get(name) or _unsupported(name)
        api = f"torch.cuda.{name}"
        if isinstance(real, type):
            p.set(cuda, name, _scoped_class(name, real, ported, api, action))
        else:
            p.set(cuda, name, _scoped_function(real, ported, api, action))
    gens = (
        getattr(runtime.device_module(), "default_generators", None) if not Target.is_cpu else None
    )
    p.set(cuda, "default_generators", tuple(gens) if gens else (torch.default_generator,))
    _install_amp(p)
    _install_nvtx(p)


def _install_amp(p: Patcher) -> None:
    camp = torch.cuda.amp
    real_autocast = camp.autocast

    def ported_autocast(enabled=True, dtype=None, cache_enabled=True):
        # dtype=None: the app did not choose fp16 (CUDA's default), so the target's default applies.
        dt, dtype = port_autocast_args("torch.cuda.amp.autocast", "cuda", dtype)
        return torch.amp.autocast_mode.autocast(
            dt, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled
        )

    class AutocastMeta(_ScopedMeta):
        def __call__(cls, *args, **kwargs):
            if from_torch(2):
                return real_autocast(*args, **kwargs)
            return ported_autocast(*args, **kwargs)

    p.set(
        camp,
        "autocast",
        AutocastMeta(
            "autocast",
            (),
            {
                "__real__": real_autocast,
                "__also__": torch.amp.autocast_mode.autocast,
                "__doc__": real_autocast.__doc__,
                "__module__": "torch.cuda.amp",
            },
        ),
    )

    real_scaler = camp.GradScaler

    def ported_scaler(*args, **kwargs):
        return _amp.NeutralGradScaler(Target.type, *args, **kwargs)

    p.set(
        camp,
        "GradScaler",
        _scoped_class(
            "GradScaler",
            real_scaler,
            ported_scaler,
            "torch.cuda.amp.GradScaler",
            f"torch.amp.GradScaler({Target.type!r})",
        ),
    )
    for name in ("custom_fwd", "custom_bwd"):
        real = getattr(camp, name)
        neutral = getattr(torch.amp, name)
        ported = functools.partial(_custom, neutral)
        p.set(
            camp,
            name,
            _scoped_function(
                real,
                ported,
                f"torch.cuda.amp.{name}",
                f"torch.amp.{name}(device_type={Target.type!r})",
            ),
        )


def _custom(neutral, fwd=None, **kwargs):
    return neutral(fwd, device_type=Target.type, **kwargs)


def _install_nvtx(p: Patcher) -> None:
    nvtx = torch.cuda.nvtx
    stack: list = []

    def push(msg, *a, **k):
        rf = torch.profiler.record_function(str(msg))
        rf.__enter__()
        stack.append(rf)
        return len(stack) - 1

    def pop():
        if stack:
            stack.pop().__exit__(None, None, None)
        return len(stack)

    ported = {
        "range_push": (push, "torch.profiler.record_function (annotation only)"),
        "range_pop": (pop, "end of record_function"),
        "range": (
            lambda msg, *a, **k: torch.profiler.record_function(str(msg)),
            "torch.profiler.record_function",
        ),
        "mark": (lambda msg: None, "dropped (annotation only)"),
    }
    for name, (fn, action) in ported.items():
        if hasattr(nvtx, name):
            p.set(
                nvtx,
                name,
                _scoped_function(getattr(nvtx, name), fn, f"torch.cuda.nvtx.{name}", action),
            )

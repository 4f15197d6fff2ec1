"""Redirect CUDA device values wherever torch takes a device: factories, Tensor/Module methods,
torch.load, Generator, autocast, GradScaler, c10d backends, cuDNN flags.

Each wrapper's fast path is a type check on the device argument; only a CUDA value takes the
slow path (translate, record the call site).
"""

from __future__ import annotations

import functools
import sys

import torch

from ..pinning import NO_PINNING
from .dtypes import check_dtype, legacy_dtype, port_autocast_args
from .patcher import Patcher
from .sites import RECORDER, is_internal
from .target import Target, needs_port, port, port_index, show

FACTORIES = (
    "tensor",
    "as_tensor",
    "asarray",
    "zeros",
    "ones",
    "empty",
    "full",
    "rand",
    "randn",
    "randint",
    "randperm",
    "arange",
    "range",
    "linspace",
    "logspace",
    "eye",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "empty_strided",
    "empty_permuted",
    "tril_indices",
    "triu_indices",
    "sparse_coo_tensor",
    "sparse_csr_tensor",
    "sparse_csc_tensor",
    "sparse_bsr_tensor",
    "sparse_bsc_tensor",
    "sparse_compressed_tensor",
    "scalar_tensor",
    "from_file",
    "hann_window",
    "hamming_window",
    "bartlett_window",
    "blackman_window",
    "kaiser_window",
)
TENSOR_NEW = ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new_empty_strided")


def _kw_device(fn, api: str):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            d = kwargs.get("device")
            if d is not None and needs_port(d, ints=True):
                kwargs["device"] = new = port(d)
                RECORDER.hit(f"{api}(device={show(d)})", f"device={show(new)}")
        return fn(*args, **kwargs)

    return wrapper


def _to_like(fn, api: str):
    """Tensor.to / Module.to: the device can be the first positional argument or `device=`."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        if args and needs_port(args[0], ints=True):
            d = args[0]
            args = (port(d),) + args[1:]
            RECORDER.hit(f"{api}({show(d)})", f"{api}({show(args[0])})")
        if kwargs:
            d = kwargs.get("device")
            if d is not None and needs_port(d, ints=True):
                kwargs["device"] = new = port(d)
                RECORDER.hit(f"{api}(device={show(d)})", f"device={show(new)}")
        return fn(self, *args, **kwargs)

    return wrapper


def install(p: Patcher) -> None:
    for name in FACTORIES:
        if hasattr(torch, name):
            p.set(torch, name, _kw_device(getattr(torch, name), f"torch.{name}"))
    p.set(
        torch,
        "set_default_device",
        _port_positional(torch.set_default_device, "torch.set_default_device"),
    )
    T = torch.Tensor
    for name in TENSOR_NEW:
        p.set(T, name, _kw_device(getattr(T, name), f"Tensor.{name}"))
    real_to = T.to
    p.set(T, "to", _to_like(real_to, "Tensor.to"))

    def tensor_cuda(self, device=None, non_blocking=False, memory_format=torch.preserve_format):
        if is_internal(sys._getframe(1).f_code.co_filename):
            return _REAL["Tensor.cuda"](self, device, non_blocking, memory_format)
        dest = port(device) if needs_port(device) else Target.device(port_index(device))
        RECORDER.hit(
            "Tensor.cuda()" if device is None else f"Tensor.cuda({show(device)})",
            f"Tensor.to({show(dest)})",
        )
        return real_to(self, dest, non_blocking=non_blocking, memory_format=memory_format)

    _REAL["Tensor.cuda"] = T.cuda
    p.set(T, "cuda", functools.wraps(T.cuda)(tensor_cuda))

    real_is_cuda = torch._C.TensorBase.is_cuda

    def is_cuda(self):
        if is_internal(sys._getframe(1).f_code.co_filename):
            return real_is_cuda.__get__(self)
        RECORDER.hit("Tensor.is_cuda", f"device.type == {Target.type!r}")
        return self.device.type == Target.type

    p.set(T, "is_cuda", property(is_cuda, doc=real_is_cuda.__doc__))

    real_type = T.type

    @functools.wraps(real_type)
    def tensor_type(self, dtype=None, non_blocking=False, **kwargs):
        legacy = legacy_dtype(dtype) if dtype is not None else None
        if legacy is None:
            return (
                real_type(self, dtype, non_blocking, **kwargs)
                if dtype is not None
                else real_type(self)
            )
        name = dtype if isinstance(dtype, str) else dtype.__legacy_cuda_type__
        check_dtype(f"Tensor.type({name})", legacy)
        RECORDER.hit(f"Tensor.type({name})", f"Tensor.to({Target.type}, {legacy})")
        return real_to(self, Target.device(), legacy, non_blocking=non_blocking)

    p.set(T, "type", tensor_type)

    M = torch.nn.Module
    real_mto = M.to
    p.set(M, "to", _to_like(real_mto, "Module.to"))

    def module_cuda(self, device=None):
        if is_internal(sys._getframe(1).f_code.co_filename):
            return _REAL["Module.cuda"](self, device)
        dest = port(device) if needs_port(device) else Target.device(port_index(device))
        RECORDER.hit(
            "Module.cuda()" if device is None else f"Module.cuda({show(device)})",
            f"Module.to({show(dest)})",
        )
        return real_mto(self, dest)

    _REAL["Module.cuda"] = M.cuda
    p.set(M, "cuda", functools.wraps(M.cuda)(module_cuda))
    p.set(M, "to_empty", _kw_device(M.to_empty, "Module.to_empty"))
    if Target.type == "cpu" or Target.type in NO_PINNING:
        _install_pin_noop(p)

    _install_load(p)
    _install_generator(p)
    _install_amp(p)
    _install_backends_flags(p)
    _install_distributed(p)
    _install_data_parallel(p)


_REAL: dict[str, object] = {}


def _install_pin_noop(p: Patcher) -> None:
    """No accelerator, or one without pinned memory (MPS): ``x.pin_memory()`` (nanoGPT's
    ``get_batch``) raises in torch; pinned memory only speeds a copy to a device, so the tensor
    itself is the answer. So does
    ``x.record_stream(s)`` for a CPU tensor, which orders nothing there."""
    real_pin = torch.Tensor.pin_memory

    @functools.wraps(real_pin)
    def pin_memory(self, *args, **kwargs):
        if is_internal(sys._getframe(1).f_code.co_filename):
            return real_pin(self, *args, **kwargs)
        RECORDER.hit("Tensor.pin_memory()", "the tensor itself (no pinned memory here)")
        return self

    p.set(torch.Tensor, "pin_memory", pin_memory)
    real_record = torch.Tensor.record_stream

    @functools.wraps(real_record)
    def record_stream(self, stream):
        """The prefetchers' ``x.record_stream(torch.cuda.current_stream())``: a CPU tensor's
        memory is not ordered by any stream (torch has no CPU kernel for it), so nothing to do."""
        if self.device.type != "cpu" or is_internal(sys._getframe(1).f_code.co_filename):
            return real_record(self, stream)
        RECORDER.hit("Tensor.record_stream()", "nothing (a CPU tensor: no stream to order)")

    p.set(torch.Tensor, "record_stream", record_stream)


def _port_positional(fn, api):
    @functools.wraps(fn)
    def wrapper(device, *args, **kwargs):
        if needs_port(device, ints=True):
            new = port(device)
            RECORDER.hit(f"{api}({show(device)})", f"{api}({show(new)})")
            device = new
        return fn(device, *args, **kwargs)

    return wrapper


def _install_load(p: Patcher) -> None:
    real_load = torch.load
    default_restore = torch.serialization.default_restore_location

    def restore(storage, location):
        # A checkpoint saved on CUDA names "cuda:N" storages; everything else restores as usual.
        if location.startswith("cuda"):
            RECORDER.hit(
                f"torch.load: storage saved on {location!r}", f"restored on {port(location)!r}"
            )
            return default_restore(storage, port(location))
        return None

    @functools.wraps(real_load)
    def load(f, map_location=None, *args, **kwargs):
        ml = map_location
        if ml is None:
            ml = restore
        elif needs_port(ml, ints=True):
            ml = port(ml)
            RECORDER.hit(
                f"torch.load(map_location={show(map_location)})", f"map_location={show(ml)}"
            )
        elif isinstance(ml, dict) and any(needs_port(v) for v in ml.values()):
            ml = {k: port(v) if needs_port(v) else v for k, v in ml.items()}
            RECORDER.hit("torch.load(map_location={...cuda...})", "cuda destinations ported")
        return real_load(f, ml, *args, **kwargs)

    p.set(torch, "load", load)


class _ProxyMeta(type):
    """isinstance/issubclass against the proxy answer for the real class it stands for."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.__real__)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.__real__)


def _install_generator(p: Patcher) -> None:
    real = torch.Generator

    class _GenMeta(_ProxyMeta):
        def __call__(cls, device="cpu"):
            if needs_port(device, ints=True):
                new = port(device)
                RECORDER.hit(f"torch.Generator(device={show(device)})", f"device={show(new)}")
                device = new
            return real(device)

    # A stand-in class, not a function: `isinstance(g, torch.Generator)` and annotations keep working.
    proxy = _GenMeta(
        "Generator", (), {"__real__": real, "__doc__": real.__doc__, "__module__": "torch"}
    )
    p.set(torch, "Generator", proxy)


def _install_amp(p: Patcher) -> None:
    real_autocast = torch.amp.autocast_mode.autocast

    class autocast(real_autocast):
        __doc__ = real_autocast.__doc__

        def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
            if device_type == "cuda":
                device_type, dtype = port_autocast_args(
                    f"torch.autocast({device_type!r})", device_type, dtype
                )
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    p.set(torch, "autocast", autocast)
    p.set(torch.amp, "autocast", autocast)

    from ..amp import NeutralGradScaler

    class GradScaler(NeutralGradScaler):
        __doc__ = torch.amp.GradScaler.__doc__

        def __init__(self, device="cuda", *args, **kwargs):
            if needs_port(device):
                new = port(device)
                RECORDER.hit(f"torch.amp.GradScaler({show(device)})", f"GradScaler({show(new)})")
                device = new
            super().__init__(device, *args, **kwargs)

    p.set(torch.amp, "GradScaler", GradScaler)


def _install_backends_flags(p: Patcher) -> None:
    cudnn_cls = type(torch.backends.cudnn)

    class Recording:
        """cuDNN flags keep their value (nothing reads them off CUDA); setting one is reported."""

        def __init__(self, name, prop, note):
            self.name, self.prop, self.note = name, prop, note

        def __get__(self, obj, objtype=None):
            return self.prop.__get__(obj, objtype)

        def __set__(self, obj, value):
            if not is_internal(sys._getframe(1).f_code.co_filename):
                RECORDER.hit(f"torch.backends.cudnn.{self.name} = {value!r}", self.note)
            self.prop.__set__(obj, value)

    notes = {
        "benchmark": "kept; cuDNN autotuning, no effect on {t}",
        "deterministic": "kept; cuDNN-only, no effect on {t} (torch.use_deterministic_algorithms is the neutral switch)",
        "allow_tf32": "kept; TF32 is NVIDIA-only, no effect on {t}",
        "enabled": "kept; cuDNN-only, no effect on {t}",
    }
    for name, note in notes.items():
        prop = cudnn_cls.__dict__.get(name)
        if prop is not None:
            p.set(cudnn_cls, name, Recording(name, prop, note.format(t=Target.type)))

    matmul_cls = type(torch.backends.cuda.matmul)
    real_setattr = matmul_cls.__setattr__

    def setattr_recorded(self, name, value):
        if not is_internal(sys._getframe(1).f_code.co_filename):
            RECORDER.hit(
                f"torch.backends.cuda.matmul.{name} = {value!r}",
                f"kept; cuBLAS-only, no effect on {Target.type}",
            )
        real_setattr(self, name, value)

    p.set(matmul_cls, "__setattr__", setattr_recorded)


def _port_backend(backend):
    """ "nccl" (or "cuda:nccl" inside a per-device list) becomes the target's c10d backend."""
    if not isinstance(backend, str) or "nccl" not in backend:
        return backend
    from ..distributed import distributed_backend

    mine = distributed_backend(Target.device())
    if ":" not in backend:
        return mine if backend == "nccl" else backend
    parts = []
    for part in backend.split(","):
        dev, _, be = part.partition(":")
        parts.append(f"{Target.type}:{mine}" if be == "nccl" else part)
    return ",".join(parts)


def _install_distributed(p: Patcher) -> None:
    if not torch.distributed.is_available():
        return
    dist = torch.distributed

    def wrap(fn, api, pos):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if len(args) > pos:
                new = _port_backend(args[pos])
                if new is not args[pos]:
                    RECORDER.hit(f"{api}({args[pos]!r})", f"backend {new!r}")
                    args = args[:pos] + (new,) + args[pos + 1 :]
            if kwargs.get("backend") is not None:
                new = _port_backend(kwargs["backend"])
                if new is not kwargs["backend"]:
                    RECORDER.hit(f"{api}(backend={kwargs['backend']!r})", f"backend {new!r}")
                    kwargs["backend"] = new
            d = kwargs.get("device_id")
            if d is not None and needs_port(d):
                kwargs["device_id"] = None if Target.is_cpu else port(d)
                RECORDER.hit(
                    f"{api}(device_id={show(d)})", f"device_id={show(kwargs['device_id'])}"
                )
            return fn(*args, **kwargs)

        return wrapper

    p.set(dist, "init_process_group", wrap(dist.init_process_group, "init_process_group", 0))
    p.set(dist, "new_group", wrap(dist.new_group, "new_group", 2))
    _install_ddp(p)


def _ddp_ids(ids):
    """DDP's ``device_ids``/``output_device`` on the target: None on CPU (DDP takes no device
    for a CPU module), CUDA strings and devices ported, indices kept (they index the target)."""
    if Target.is_cpu or ids is None:
        return None
    if isinstance(ids, (list, tuple)):
        return type(ids)(port(d) if needs_port(d) else d for d in ids)
    return port(ids) if needs_port(ids) else ids


def _install_ddp(p: Patcher) -> None:
    cls = torch.nn.parallel.DistributedDataParallel
    real = cls.__init__

    @functools.wraps(real)
    def __init__(self, module, device_ids=None, output_device=None, *args, **kwargs):
        if (device_ids is not None or output_device is not None) and not is_internal(
            sys._getframe(1).f_code.co_filename
        ):
            new_ids, new_out = _ddp_ids(device_ids), _ddp_ids(output_device)
            if (new_ids, new_out) != (device_ids, output_device):
                RECORDER.hit(
                    f"DistributedDataParallel(device_ids={device_ids!r}, "
                    f"output_device={output_device!r})",
                    f"device_ids={new_ids!r}, output_device={new_out!r}",
                )
            device_ids, output_device = new_ids, new_out
        real(self, module, device_ids, output_device, *args, **kwargs)

    p.set(cls, "__init__", __init__)


def _install_data_parallel(p: Patcher) -> None:
    """``nn.DataParallel(module)`` is the module itself, as on a machine without CUDA: its
    scatter and gather are CUDA's alone (``torch._C._scatter``), so on another accelerator the
    first forward would stop (the codemod's port keeps the wrap under a CUDA check the same way)."""
    cls = torch.nn.DataParallel
    real = cls.__init__

    @functools.wraps(real)
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        if is_internal(sys._getframe(1).f_code.co_filename):
            return real(self, module, device_ids, output_device, dim)
        RECORDER.hit("nn.DataParallel(module)", "the module itself (scatter is CUDA's)")
        torch.nn.Module.__init__(self)
        self.module, self.device_ids = module, []

    p.set(cls, "__init__", __init__)

"""Device runtime of torch.trn: devices, device context, synchronize, streams and events."""

from __future__ import annotations

import os

import torch

from . import _core

# CUDA's contract (OpenReg's too): init() or the first factory call (torch's device_lazy_init
# calls _lazy_init) marks the device initialized; a process forked after that must not
# initialize it again (its parent's runtime state does not survive a fork on a real device). In
# such a child init(), _lazy_init() and every factory call or .to("trn") raise CUDA's
# "Cannot re-initialize" error (upstream's TestDeviceLazyInit); trn's memory is host memory, so
# tensors the child inherited keep working.
_initialized = False
_in_bad_fork = False


def _after_fork_in_child() -> None:
    global _in_bad_fork
    if _initialized:
        _in_bad_fork = True
        _core.native().require_device_init()  # torch's per-device "initialized" flag, reset


os.register_at_fork(after_in_child=_after_fork_in_child)


def _name() -> str:
    return torch._C._get_privateuse1_backend_name()


def _index(device=None) -> int:
    """Device index from None/int/str/torch.device, validated against this backend."""
    if device is None:
        return _core.native().current_device()
    if isinstance(device, int):
        idx = device
    else:
        device = torch.device(device)
        if device.type != _name():
            raise ValueError(f"expected a {_name()} device, got {device}")
        idx = device.index if device.index is not None else _core.native().current_device()
    if not 0 <= idx < device_count():
        raise torch.AcceleratorError(  # as the native core (and CUDA) say it
            f"{_name()} error: invalid device ordinal: device index {idx} is out of range "
            f"(device_count() is {device_count()})"
        )
    return idx


def is_available() -> bool:
    return device_count() > 0


def is_initialized() -> bool:
    return _initialized and not _in_bad_fork


def _lazy_init() -> None:
    """Mark the device initialized (the core itself is ready once loaded); refuse in a child
    forked after that, as CUDA does."""
    global _initialized
    if _in_bad_fork:
        raise RuntimeError(
            f"Cannot re-initialize {_name()} in forked subprocess. To use {_name()} with "
            "multiprocessing, you must use the 'spawn' start method"
        )
    _initialized = True


def init() -> None:
    """Initialize the device explicitly (torch.cuda.init's contract)."""
    _lazy_init()


def _is_in_bad_fork() -> bool:
    return _in_bad_fork


def device_count() -> int:
    return _core.native().device_count()


def current_device() -> int:
    return _core.native().current_device()


def set_device(device) -> None:
    _core.native().set_device(_index(device))


def synchronize(device=None) -> None:
    torch.accelerator.synchronize(_index(device))


class device:
    """Context manager selecting the current trn device."""

    def __init__(self, device) -> None:
        self.idx = -1 if device is None else _index(device)
        self.prev = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev = current_device()
            set_device(self.idx)
        return self

    def __exit__(self, *exc) -> None:
        if self.idx >= 0:
            set_device(self.prev)


class Stream(torch.Stream):
    """A trn stream (distinct id per new stream; work is ordered on the host)."""

    def __new__(cls, device=None, priority: int = 0):
        return super().__new__(cls, device=torch.device(_name(), _index(device)), priority=priority)


class Event(torch.Event):
    def __new__(
        cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ):
        return super().__new__(
            cls,
            device=torch.device(_name(), current_device()),
            enable_timing=enable_timing,
            blocking=blocking,
            interprocess=interprocess,
        )


def current_stream(device=None) -> torch.Stream:
    return torch.accelerator.current_stream(_index(device))


def default_stream(device=None) -> torch.Stream:
    return torch.Stream(
        stream_id=0,
        device_index=_index(device),
        device_type=torch._C._autograd.DeviceType.PrivateUse1 if False else _device_type_int(),
    )


def _device_type_int() -> int:
    return torch._C._get_privateuse1_backend_name() and 20  # c10::DeviceType::PrivateUse1


def set_stream(stream: torch.Stream) -> None:
    torch.accelerator.set_stream(stream)


class stream:
    """Context manager making `stream` current on its device."""

    def __init__(self, stream: torch.Stream | None) -> None:
        self.stream = stream
        self.prev = None

    def __enter__(self):
        if self.stream is not None:
            self.prev = current_stream(self.stream.device_index)
            set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc) -> None:
        if self.prev is not None:
            set_stream(self.prev)

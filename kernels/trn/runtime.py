"""Device runtime of torch.trn: devices, device context, synchronize, streams and events."""

from __future__ import annotations

import torch

from . import _core


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
        raise ValueError(
            f"invalid {_name()} device index {idx} (device_count() is {device_count()})"
        )
    return idx


def is_available() -> bool:
    return device_count() > 0


def is_initialized() -> bool:
    return True


def _lazy_init() -> None:
    """Nothing to initialise lazily: the core is ready once loaded (fork-safe: no threads)."""


def _is_in_bad_fork() -> bool:
    return False


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

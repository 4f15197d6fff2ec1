"""Device contexts under autoport: `with torch.device(...)` and `torch.set_default_device(...)`.

torch's DeviceContext fills in `device=` for the factory functions it lists in
`torch.utils._device._device_constructors()`, a list it builds once, on first use, from the
attributes of `torch`. Built after the factories are wrapped, it would hold the wrappers and not the
functions torch dispatches, and every tensor made inside a device context would land on the CPU.
`install` builds the list from the real functions first, and makes `torch.device("cuda")` as a
context (and `set_default_device("cuda")`) enter the target instead.
"""

from __future__ import annotations

import functools

import torch.utils._device as _device

from .patcher import Patcher
from .sites import RECORDER
from .target import needs_port, port, show


def freeze_constructors() -> None:
    """Build torch's factory list from the real functions (call before wrapping any factory)."""
    _device._device_constructors.cache_clear()
    _device._device_constructors()


def install(p: Patcher) -> None:
    """A CUDA device entered as a context becomes the target (C++ `torch.device.__enter__` and
    `set_default_device` both construct `DeviceContext`)."""
    cls = _device.DeviceContext
    real_init = cls.__init__

    @functools.wraps(real_init)
    def __init__(self, device) -> None:
        if needs_port(device, ints=True):
            new = port(device)
            RECORDER.hit(f"with {show(device)}", f"with {show(new)}")
            device = new
        real_init(self, device)

    p.set(cls, "__init__", __init__)

"""Which accelerator is current, and the runtime basics on it (CPU when there is none).

Everything delegates to `torch.accelerator` / `torch.get_device_module` when they exist. On an
older torch without them the current accelerator is found by probing the device modules that
torch itself ships (cuda, xpu, mps, mtia) and the renamed PrivateUse1 backend; no device is known
by name beyond what torch's own namespaces expose.
"""

from __future__ import annotations

import types

import torch

from .errors import Unsupported

_PROBED = ("cuda", "xpu", "mps", "mtia")


def _probe_accelerator() -> str | None:
    """Gap filler for torch without `torch.accelerator.current_accelerator`."""
    pu1 = torch._C._get_privateuse1_backend_name()
    for name in (pu1, *_PROBED):
        mod = getattr(torch, name, None)
        is_avail = getattr(mod, "is_available", None)
        if callable(is_avail) and is_avail():
            return name
    return None


def accelerator() -> torch.device | None:
    """The current accelerator as a bare `torch.device` (no index), or None on CPU-only."""
    acc = getattr(torch, "accelerator", None)
    if acc is not None and hasattr(acc, "current_accelerator"):
        # check_available=True: a CUDA build on a machine without a GPU is not "an accelerator".
        return acc.current_accelerator(check_available=True)
    name = _probe_accelerator()
    return torch.device(name) if name else None


def is_available() -> bool:
    """True when an accelerator (any backend) is present; delegates to `torch.accelerator`."""
    acc = getattr(torch, "accelerator", None)
    if acc is not None and hasattr(acc, "is_available"):
        return acc.is_available()
    return _probe_accelerator() is not None


def device_type() -> str:
    """The current accelerator's type ("cuda", "xpu", "mps", a PrivateUse1 name...) or "cpu"."""
    acc = accelerator()
    return acc.type if acc is not None else "cpu"


def device_module(dev: str | torch.device | None = None) -> types.ModuleType:
    """`torch.<type>` for the device (default: current); `torch.get_device_module` when present."""
    dt = _type_of(dev)
    if hasattr(torch, "get_device_module"):
        return torch.get_device_module(dt)
    mod = getattr(torch, dt, None)
    if mod is None:
        raise Unsupported("device_module", dt, "torch has no device module for it")
    return mod


def current_device_index() -> int:
    """Index of the current device; 0 on CPU (torch.accelerator raises there)."""
    if not is_available():
        return 0
    acc = getattr(torch, "accelerator", None)
    if acc is not None and hasattr(acc, "current_device_index"):
        return acc.current_device_index()
    return device_module().current_device()


def set_device_index(index: int | str | torch.device) -> None:
    """Make `index` the current device; on CPU only index 0 exists."""
    idx = _index_of(index)
    if not is_available():
        if idx not in (None, 0):
            raise Unsupported(
                f"set_device_index({idx})", "cpu", "only device 0 exists without an accelerator"
            )
        return
    acc = getattr(torch, "accelerator", None)
    if acc is not None and hasattr(acc, "set_device_index"):
        acc.set_device_index(idx)
    else:
        device_module().set_device(idx)


def device(index: int | None = None) -> torch.device:
    """A concrete device: `type:index` on an accelerator (current index by default), else cpu."""
    acc = accelerator()
    if acc is None:
        return torch.device("cpu")
    return torch.device(acc.type, current_device_index() if index is None else index)


def device_count() -> int:
    """Number of devices of the current accelerator; 0 without one (like torch.accelerator)."""
    acc = getattr(torch, "accelerator", None)
    if acc is not None and hasattr(acc, "device_count"):
        return acc.device_count()
    return device_module().device_count() if is_available() else 0


def synchronize(dev: int | str | torch.device | None = None) -> None:
    """Wait for all work on `dev` (default: current device); a no-op on CPU."""
    if not is_available():
        return
    acc = getattr(torch, "accelerator", None)
    if acc is not None and hasattr(acc, "synchronize"):
        acc.synchronize(dev)
    else:
        device_module().synchronize(dev)


def _type_of(dev: str | torch.device | int | None) -> str:
    if dev is None or isinstance(dev, int):
        return device_type()
    return torch.device(dev).type


def _index_of(dev: int | str | torch.device | None) -> int | None:
    if dev is None or isinstance(dev, int):
        return dev
    return torch.device(dev).index

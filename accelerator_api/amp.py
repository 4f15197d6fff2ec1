"""Mixed precision on the current device: autocast with the device's preferred dtype, GradScaler."""
from __future__ import annotations

import torch

from . import runtime as _dev
from .errors import Unsupported

# Autocast dtypes torch itself allows per built-in device type (torch/amp/autocast_mode.py).
_BUILTIN_AMP = {"cpu": (torch.bfloat16, torch.float16), "cuda": (torch.float16, torch.bfloat16),
                "xpu": (torch.bfloat16, torch.float16), "mps": (torch.float16, torch.bfloat16)}


def autocast_dtypes(device_type: str | None = None) -> tuple[torch.dtype, ...]:
    """Dtypes autocast accepts on the device type; a PrivateUse1 module's `get_amp_supported_dtype`."""
    dt = device_type or _dev.device_type()
    mod = getattr(torch, dt, None)
    fn = getattr(mod, "get_amp_supported_dtype", None)
    if fn is not None:
        return tuple(fn())
    return _BUILTIN_AMP.get(dt, (torch.get_autocast_dtype(dt),))


def preferred_dtype(device_type: str | None = None) -> torch.dtype:
    """The device's default autocast dtype (`torch.get_autocast_dtype`), bf16 on CPU."""
    dt = device_type or _dev.device_type()
    return torch.get_autocast_dtype(dt)


def autocast(dtype: torch.dtype | None = None, enabled: bool = True, cache_enabled: bool | None = None):
    """`torch.autocast` on the current device; `dtype=None` picks the device's preferred dtype.

    An explicit dtype the device cannot autocast to raises `Unsupported` (torch would only warn
    and silently run in fp32).
    """
    dt = _dev.device_type()
    if not torch.amp.is_autocast_available(dt):
        raise Unsupported("autocast", dt, "torch has no autocast support for this device type")
    dtype = preferred_dtype(dt) if dtype is None else dtype
    if enabled and dtype not in autocast_dtypes(dt):
        names = ", ".join(str(d) for d in autocast_dtypes(dt))
        raise Unsupported(f"autocast(dtype={dtype})", dt, f"autocast supports only {names}")
    return torch.autocast(dt, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def GradScaler(init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
               growth_interval: int = 2000, enabled: bool = True) -> torch.amp.GradScaler:
    """`torch.amp.GradScaler` for the current device (torch's default device is still "cuda")."""
    return torch.amp.GradScaler(_dev.device_type(), init_scale=init_scale, growth_factor=growth_factor,
                                backoff_factor=backoff_factor, growth_interval=growth_interval,
                                enabled=enabled)

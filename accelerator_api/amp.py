"""Mixed precision on the current device: autocast with the device's preferred dtype, GradScaler."""

from __future__ import annotations

import torch

from . import runtime as _dev
from .errors import Unsupported

# Autocast dtypes torch itself allows per built-in device type (torch/amp/autocast_mode.py).
_BUILTIN_AMP = {
    "cpu": (torch.bfloat16, torch.float16),
    "cuda": (torch.float16, torch.bfloat16),
    "xpu": (torch.bfloat16, torch.float16),
    "mps": (torch.float16, torch.bfloat16),
}


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


def autocast(
    dtype: torch.dtype | None = None, enabled: bool = True, cache_enabled: bool | None = None
):
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


class NeutralGradScaler(torch.amp.GradScaler):
    """`torch.amp.GradScaler` that also works on devices without float64.

    Gap filled: torch's `unscale_` takes the reciprocal of the scale in float64 on the device
    (mps excepted), which fails where float64 does not exist. There it is taken in float32, which
    is exact for the power-of-two scales GradScaler produces from a power-of-two init_scale.
    """

    def __init__(self, device: str = "cuda", *args, **kwargs):
        super().__init__(device, *args, **kwargs)
        from .properties import supports_dtype

        self._fp32_inverse = (
            self._enabled and device != "cpu" and not supports_dtype(torch.float64, device)
        )

    def unscale_(self, optimizer) -> None:
        if not getattr(self, "_fp32_inverse", False):
            return super().unscale_(optimizer)
        from torch.amp.grad_scaler import OptState

        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.reciprocal()
        found_inf = torch.full((), 0.0, dtype=torch.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED


def GradScaler(
    init_scale: float = 2.0**16,
    growth_factor: float = 2.0,
    backoff_factor: float = 0.5,
    growth_interval: int = 2000,
    enabled: bool = True,
) -> torch.amp.GradScaler:
    """A GradScaler for the current device (torch's default device is still "cuda")."""
    return NeutralGradScaler(
        _dev.device_type(),
        init_scale=init_scale,
        growth_factor=growth_factor,
        backoff_factor=backoff_factor,
        growth_interval=growth_interval,
        enabled=enabled,
    )

"""GradScaler on a device without float64 (the strict Trainium dtype policy).

``torch.amp.GradScaler.unscale_`` computes the inverse scale as
``scale.double().reciprocal().float()`` on the scale's device, except on ``mps:0``, which has no
float64 either and computes ``scale.reciprocal()`` in float32. The strict policy refuses the
float64 tensor, so every ``scaler.step()`` on trn would raise. :func:`install` gives scalers
whose device type is the trn backend the same treatment as MPS and leaves every other scaler on
upstream's code; it patches nothing else, so user float64 on trn is still refused.

Why float32 loses nothing: GradScaler's scales are powers of two (``init_scale`` 2**16,
growth/backoff factors 2 and 0.5), whose reciprocals are exact in float32. For any other float32
scale the float32 reciprocal is correctly rounded (the CPU kernel divides in IEEE single
precision), and rounding 1/s first to float64 and then to float32 gives the same float32
whenever float64 has at least 2*24+2 significand bits (Figueroa, "When is double rounding
innocuous?", 1995); tests/kernels/test_device_runtime.py checks it bit for bit. (Upstream's
float64 detour guards against inexact float32 division under some compile options, which does
not apply to the CPU kernels trn runs.)
"""

from __future__ import annotations

import functools

import torch
from torch.amp.grad_scaler import GradScaler, OptState

_upstream_unscale = None


def _unscale_float32(self: GradScaler, optimizer: torch.optim.Optimizer) -> None:
    """upstream ``GradScaler.unscale_`` with the MPS branch of the inverse scale."""
    if not self._enabled:
        return
    self._check_scale_growth_tracker("unscale_")
    optimizer_state = self._per_optimizer_states[id(optimizer)]
    if optimizer_state["stage"] is OptState.UNSCALED:
        raise RuntimeError(
            "unscale_() has already been called on this optimizer since the last update()."
        )
    if optimizer_state["stage"] is OptState.STEPPED:
        raise RuntimeError("unscale_() is being called after step().")
    if self._scale is None:
        raise AssertionError("_scale is None in unscale_")
    inv_scale = self._scale.reciprocal()
    found_inf = torch.full((), 0.0, dtype=torch.float32, device=self._scale.device)
    optimizer_state["found_inf_per_device"] = self._unscale_grads_(
        optimizer, inv_scale, found_inf, False
    )
    optimizer_state["stage"] = OptState.UNSCALED


def install(name: str) -> None:
    """Route ``unscale_`` of scalers on device type ``name`` through float32 (idempotent)."""
    global _upstream_unscale
    if _upstream_unscale is not None:
        return
    _upstream_unscale = upstream = GradScaler.unscale_

    @functools.wraps(upstream)
    def unscale_(self, optimizer):
        if str(self._device).partition(":")[0] == name:
            return _unscale_float32(self, optimizer)
        return upstream(self, optimizer)

    GradScaler.unscale_ = unscale_

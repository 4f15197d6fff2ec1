"""Pinned (page-locked) host memory for fast copies to the current accelerator.

In torch 2.13 `Tensor.pin_memory()` pins for the current accelerator and raises when there is
none, and on MPS, which has no pinned memory (pytorch#86060: torch's own DataLoader turns pinning
off there); these helpers make both cases a clean no-op instead.
"""

from __future__ import annotations

import torch

from . import runtime as _dev

NO_PINNING = frozenset({"mps"})  # accelerators without pinned host memory


def can_pin_memory() -> bool:
    """True when there is an accelerator to pin host memory for, and it has pinned memory."""
    return _dev.is_available() and _dev.device_type() not in NO_PINNING


def pin_memory(t: torch.Tensor) -> torch.Tensor:
    """`t.pin_memory()` when an accelerator is present, `t` unchanged otherwise."""
    return t.pin_memory() if can_pin_memory() and not t.is_pinned() else t


def loader_kwargs() -> dict[str, bool]:
    """DataLoader keyword arguments for pinning (no `pin_memory_device`: that is deprecated)."""
    return {"pin_memory": can_pin_memory()}

"""Per-device random number generator state.

Delegates to `torch.get_device_module(type)`'s RNG functions. Gaps filled: `torch.cpu` has no RNG
functions, so on CPU the global CPU generator is used; a backend module without `manual_seed_all`
(mps) is seeded through `manual_seed`.
"""

from __future__ import annotations

import contextlib

import torch

from . import runtime as _dev
from .errors import Unsupported


def manual_seed_all(seed: int) -> None:
    """Seed every device of the current accelerator (the CPU generator when there is none)."""
    if not _dev.is_available():
        torch.random.default_generator.manual_seed(seed)
        return
    mod = _dev.device_module()
    fn = getattr(mod, "manual_seed_all", None) or getattr(mod, "manual_seed", None)
    if fn is None:
        raise Unsupported(
            "manual_seed_all", _dev.device_type(), "the device module has no seeding function"
        )
    fn(seed)


def manual_seed(seed: int, dev=None) -> None:
    """Seed one device (default: current) of the current accelerator, or the CPU generator."""
    if not _dev.is_available():
        torch.random.default_generator.manual_seed(seed)
        return
    mod = _dev.device_module()
    if dev is None:
        mod.manual_seed(seed)
    else:
        # device modules seed the *current* device only, so switch around the call.
        with _device_index(dev):
            mod.manual_seed(seed)


def get_rng_state(dev=None) -> torch.Tensor:
    """The RNG state (a uint8 CPU tensor) of `dev`; the CPU generator's without an accelerator."""
    if not _dev.is_available():
        return torch.get_rng_state()
    fn = getattr(_dev.device_module(), "get_rng_state", None)
    if fn is None:
        raise Unsupported(
            "get_rng_state", _dev.device_type(), "the device module exposes no RNG state"
        )
    return fn(_device_arg(dev))


def set_rng_state(state: torch.Tensor, dev=None) -> None:
    """Restore a state from `get_rng_state` on `dev`."""
    if not _dev.is_available():
        torch.set_rng_state(state)
        return
    fn = getattr(_dev.device_module(), "set_rng_state", None)
    if fn is None:
        raise Unsupported(
            "set_rng_state", _dev.device_type(), "the device module exposes no RNG state"
        )
    fn(state, _device_arg(dev))


@contextlib.contextmanager
def fork_rng(enabled: bool = True):
    """Restore the CPU and current accelerator's RNG state after the block (`torch.random.fork_rng`)."""
    dt = _dev.device_type()
    # devices=[] on CPU: only the CPU generator, else torch would look for a "cuda" module.
    kwargs = {"devices": []} if dt == "cpu" else {"device_type": dt}
    with torch.random.fork_rng(enabled=enabled, **kwargs):
        yield


def _device_arg(dev):
    # torch's device modules take an index or a device string ("cuda" means current).
    return dev if dev is not None else _dev.device_type()


@contextlib.contextmanager
def _device_index(dev):
    prev = _dev.current_device_index()
    _dev.set_device_index(dev)
    try:
        yield
    finally:
        _dev.set_device_index(prev)

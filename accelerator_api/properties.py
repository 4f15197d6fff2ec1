"""What the current device is and can do: dtypes, bf16, normalised properties."""

from __future__ import annotations

import dataclasses
import os
import platform
from typing import Any

import torch

from . import runtime as _dev

_PROBE_CACHE: dict[tuple[str, int | None, torch.dtype], bool] = {}


def supported_dtypes(dev=None) -> frozenset[torch.dtype] | None:
    """The device's own dtype list from `torch.accelerator.get_device_capability`, if it has one."""
    if not _dev.is_available():
        return None
    # torch.accelerator's answer comes from the C++ device guard; a backend may answer from its
    # Python module instead, so ask both.
    for owner in (getattr(torch, "accelerator", None), _dev.device_module()):
        fn = getattr(owner, "get_device_capability", None)
        if fn is None:
            continue
        try:
            cap = fn(dev)
        except (RuntimeError, NotImplementedError, TypeError):
            continue
        dtypes = cap.get("supported_dtypes") if isinstance(cap, dict) else None
        if dtypes:
            return frozenset(dtypes)
    return None


def supports_dtype(dtype: torch.dtype, dev=None) -> bool:
    """Whether tensors of `dtype` can live on `dev` (default: current device).

    Uses the backend's declared `supported_dtypes`; gap filled where a backend declares none by
    allocating one element (cached per device and dtype).
    """
    declared = supported_dtypes(dev)
    if declared is not None:
        return dtype in declared
    target = torch.device(dev) if isinstance(dev, (str, torch.device)) else _dev.device(dev)
    key = (target.type, target.index, dtype)
    if key not in _PROBE_CACHE:
        try:
            ok = torch.empty(1, dtype=dtype, device=target).dtype == dtype
        except (RuntimeError, TypeError, NotImplementedError):
            ok = False
        _PROBE_CACHE[key] = ok
    return _PROBE_CACHE[key]


def is_bf16_supported(dev=None) -> bool:
    """bf16 support: the device module's `is_bf16_supported` when it has one, else `supports_dtype`."""
    if _dev.is_available():
        fn = getattr(_dev.device_module(), "is_bf16_supported", None)
        if fn is not None:
            return bool(fn())
    return supports_dtype(torch.bfloat16, dev)


@dataclasses.dataclass(frozen=True)
class DeviceProperties:
    """Backend-neutral properties; `raw` keeps the backend's own object for CUDA-only fields."""

    type: str
    index: int | None
    name: str
    total_memory: int | None
    device_count: int
    raw: Any = None


def device_properties(index: int | None = None) -> DeviceProperties:
    """Normalised properties of device `index` (default current) of the current accelerator.

    Name and total memory come from `get_device_properties` (cuda, xpu, PrivateUse1 modules that
    implement it) or `get_device_name`; gap filled on CPU from the host (cpu name, RAM).
    """
    if not _dev.is_available():
        name = _cpu_name()
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return DeviceProperties("cpu", None, name, mem, 1, None)
    dt = _dev.device_type()
    idx = _dev.current_device_index() if index is None else index
    mod = _dev.device_module()
    raw = None
    if hasattr(mod, "get_device_properties"):
        try:
            raw = mod.get_device_properties(idx)
        except (RuntimeError, NotImplementedError, TypeError):
            raw = None
    name = getattr(raw, "name", None)
    if name is None and hasattr(mod, "get_device_name"):
        name = mod.get_device_name(idx)
    total = getattr(raw, "total_memory", None)
    if total is None:
        try:
            from .memory import get_memory_info

            total = get_memory_info(idx)[1]
        except Exception:  # a backend without memory info leaves the field unknown, not wrong
            total = None
    return DeviceProperties(dt, idx, str(name or dt), total, _dev.device_count(), raw)


def _cpu_name() -> str:
    caps = getattr(torch.cpu, "get_capabilities", None)
    if caps is not None:
        try:
            return str(caps().get("cpu_name") or platform.processor() or "cpu")
        except RuntimeError:
            pass
    return platform.processor() or "cpu"

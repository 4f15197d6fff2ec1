"""Holds the loaded native core (built on first use by build.py) and the Python aten kernels."""

from __future__ import annotations

_module = None


def native():
    global _module
    if _module is None:
        from .build import load

        _module = load()
    return _module


_python_kernels: dict = {}


def python_kernels(owner: str, kernels: dict) -> None:
    """Registers Python kernels (aten op name -> function) for the PrivateUse1 key, once per
    `owner` module; the Library is kept alive here, since dropping it would unregister them."""
    if owner in _python_kernels:
        return
    import torch

    lib = torch.library.Library("aten", "IMPL")
    for op, fn in kernels.items():
        lib.impl(op, fn, "PrivateUse1")
    _python_kernels[owner] = lib

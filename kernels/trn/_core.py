"""Holds the loaded native core (built on first use by build.py)."""

from __future__ import annotations

_module = None


def native():
    global _module
    if _module is None:
        from .build import load

        _module = load()
    return _module

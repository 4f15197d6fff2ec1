"""Registers the Dynamo device interface as soon as torch._dynamo.device_interface is imported,
without importing Dynamo ourselves (which would add ~3 s to `import kernels.trn`)."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

_TARGET = "torch._dynamo.device_interface"


def _register(name: str) -> None:
    from . import dynamo

    dynamo.install(name)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, fullname, path, target=None):
        if fullname != _TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module, name = spec.loader.exec_module, self.name

        def exec_then_register(module):
            exec_module(module)
            _register(name)

        spec.loader.exec_module = exec_then_register
        return spec


def install(name: str) -> None:
    if _TARGET in sys.modules:
        _register(name)
    else:
        sys.meta_path.insert(0, _Finder(name))

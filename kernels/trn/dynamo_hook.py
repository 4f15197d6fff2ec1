"""Registers the Dynamo device interface as soon as torch._dynamo.device_interface is imported,
and Inductor's code generation for trn once torch._inductor.compile_fx is (the first
``torch.compile``), without importing either ourselves (seconds of `import kernels.trn`)."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

_DYNAMO = "torch._dynamo.device_interface"
_INDUCTOR = "torch._inductor.compile_fx"


def _register(target: str, name: str) -> None:
    if target == _DYNAMO:
        from . import dynamo

        dynamo.install(name)
    else:
        from . import inductor

        inductor.install(name)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, target: str, name: str) -> None:
        self.target, self.name = target, name

    def find_spec(self, fullname, path, target=None):
        if fullname != self.target:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module, name, what = spec.loader.exec_module, self.name, self.target

        def exec_then_register(module):
            exec_module(module)
            _register(what, name)

        spec.loader.exec_module = exec_then_register
        return spec


def install(name: str) -> None:
    for target in (_DYNAMO, _INDUCTOR):
        if target in sys.modules:
            _register(target, name)
        else:
            sys.meta_path.insert(0, _Finder(target, name))

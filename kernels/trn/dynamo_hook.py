"""Registers the Dynamo device interface as soon as torch._dynamo.device_interface is imported,
and Inductor's code generation for trn once torch._inductor.compile_fx is (the first
``torch.compile``), without importing either ourselves (seconds of `import kernels.trn`)."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable

_DYNAMO = "torch._dynamo.device_interface"
_INDUCTOR = "torch._inductor.compile_fx"


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, target: str, then: Callable[[], None]) -> None:
        self.target, self.then = target, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.target:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module, then = spec.loader.exec_module, self.then

        def exec_then_register(module):
            exec_module(module)
            then()

        spec.loader.exec_module = exec_then_register
        return spec


def after_import(target: str, then: Callable[[], None]) -> None:
    """Call ``then()`` once module ``target`` has been executed (now, if it already was)."""
    if target in sys.modules:
        then()
    else:
        sys.meta_path.insert(0, _Finder(target, then))


def install(name: str) -> None:
    def dynamo() -> None:
        from . import dynamo

        dynamo.install(name)

    def inductor() -> None:
        from . import inductor

        inductor.install(name)

    after_import(_DYNAMO, dynamo)
    after_import(_INDUCTOR, inductor)

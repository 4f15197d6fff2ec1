"""Runner and ``import torch_neuronx`` finder of the opt-in Neuron compatibility mode.

``python -m kernels.neuron script.py args...`` runs an unmodified script written for AWS's
native Trainium backend on the emulator: the device is named ``neuron`` and ``import
torch_neuronx`` (even before ``import torch``) resolves to the emulator unless the real package
is installed. The mode itself: kernels/trn/neuron_compat.py and docs/device.md. This module
lives outside kernels.trn because importing that package registers the device.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types

NAME = "neuron"
PACKAGE = "torch_neuronx"


class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``torch_neuronx`` from the emulator. It is appended *last* to sys.meta_path, so
    every ordinary finder (site-packages, PYTHONPATH) is asked first: a real package wins."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != PACKAGE:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, origin=__file__)

    def create_module(self, spec):
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        import torch

        from kernels.trn.register import register

        name = register()
        if name != NAME:
            raise ImportError(
                f"torch_neuronx emulation needs the device named {NAME!r}, but it is registered "
                f"as {name!r}; set HN_TRN_NAME={NAME} (docs/device.md, Neuron compatibility)"
            )
        module.__emulated__ = True  # the real package has no such attribute
        module.device_count = torch.neuron.device_count
        module.is_available = torch.neuron.is_available


FINDER = Finder()


def install_finder() -> None:
    if not any(isinstance(f, Finder) for f in sys.meta_path):
        sys.meta_path.append(FINDER)


def main(argv: list[str] | None = None) -> None:
    import runpy

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-"):
        raise SystemExit("usage: python -m kernels.neuron script.py [args...]")
    current = os.environ.get("HN_TRN_NAME")
    if current not in (None, "", NAME):
        raise SystemExit(f"kernels.neuron: HN_TRN_NAME={current!r} conflicts with compat mode")
    os.environ["HN_TRN_NAME"] = NAME
    os.environ["HN_TRN"] = "1"  # the device registers at `import torch`, as the real plugin does
    install_finder()
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()

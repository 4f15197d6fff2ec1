"""The ``import torch_neuronx`` finder of the opt-in Neuron compatibility mode.

``python -m kernels.neuron script.py args...`` (``__main__.py``) runs an unmodified script
written for AWS's native Trainium backend on the emulator: the device is named ``neuron`` and
``import torch_neuronx`` (even before ``import torch``) resolves to the emulator unless the real
package is installed. The mode itself: kernels/trn/neuron_compat.py and docs/device.md.

This module imports nothing of the project: the device's registration installs the finder
(kernels/trn/neuron_compat.py), and the runner hands it the registration to run when
``torch_neuronx`` is imported first. It lives outside kernels.trn because importing that package
registers the device.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable

NAME = "neuron"
PACKAGE = "torch_neuronx"


class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``torch_neuronx`` from the emulator. It is appended *last* to sys.meta_path, so
    every ordinary finder (site-packages, PYTHONPATH) is asked first: a real package wins.

    ``ensure_device`` (set by the runner) registers the device when ``torch_neuronx`` is
    imported before anything else did; without it the device must already be registered."""

    def __init__(self) -> None:
        self.ensure_device: Callable[[], object] | None = None

    def find_spec(self, fullname, path=None, target=None):
        if fullname != PACKAGE:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, origin=__file__)

    def create_module(self, spec):
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        import torch

        if self.ensure_device is not None:
            self.ensure_device()
        name = torch._C._get_privateuse1_backend_name()
        if name != NAME:
            raise ImportError(
                f"torch_neuronx emulation needs the device named {NAME!r}, but it is registered "
                f"as {name!r}; set HN_TRN_NAME={NAME} (docs/device.md, Neuron compatibility)"
            )
        module.__emulated__ = True  # the real package has no such attribute
        module.device_count = torch.neuron.device_count
        module.is_available = torch.neuron.is_available


FINDER = Finder()


def install_finder(ensure_device: Callable[[], object] | None = None) -> None:
    """Append the finder to sys.meta_path once; ``ensure_device`` as in :class:`Finder`."""
    if ensure_device is not None:
        FINDER.ensure_device = ensure_device
    if not any(isinstance(f, Finder) for f in sys.meta_path):
        sys.meta_path.append(FINDER)

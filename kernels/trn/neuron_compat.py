"""Opt-in compatibility with code written for AWS's native Trainium backend (torch-neuronx).

Off by default. On with ``HN_TRN_NAME=neuron`` when the device registers (``HN_TRN=1`` autoload at
``import torch``, or ``import kernels.trn``), or by running a script under ``python -m kernels.neuron script.py
args...`` (sets both and runs the script unmodified). Then:

- the device is ``neuron`` and its module ``torch.neuron`` (kernels/trn/register.py);
- the c10d backend is ``neuron`` (kernels/trn/distributed.py), the default for the device;
- ``torch.compile(backend="neuron")`` works: AOTAutograd capture of forward and backward, run by
  Inductor when Inductor has code generation registered for the device, else by the eager
  kernels (``aot_eager``); which one is in ``kernels.trn.dynamo.compile_path`` after a compile;
- ``import torch_neuronx`` resolves to this emulator **only when the real package is not
  installed**: the finder (kernels/neuron/__init__.py) sits at the *end* of ``sys.meta_path``, so every ordinary finder
  (site-packages, PYTHONPATH) is asked first and a real torch-neuronx always wins.
"""

from __future__ import annotations

NAME = "neuron"


def enabled(name: str) -> bool:
    return name == NAME


def install(name: str) -> None:
    """Called by register() with the device's name; does nothing unless it is ``neuron``."""
    if not enabled(name):
        return
    from kernels.neuron import install_finder

    install_finder()
    # the device-named compile backend (kernels/trn/dynamo.py), registered now rather than when
    # torch._dynamo is first imported: torch-neuronx code may look it up before compiling.
    # Dynamo first: its import runs dynamo_hook's registrations, which import .dynamo themselves.
    import torch._dynamo  # noqa: F401

    from . import dynamo

    dynamo.install(NAME)

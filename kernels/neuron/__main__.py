"""``python -m kernels.neuron script.py args...``: run a script written for torch-neuronx on the
emulator, unmodified (kernels/neuron/__init__.py, docs/device.md "Neuron compatibility")."""

from __future__ import annotations

import os
import sys

from kernels.neuron import NAME, install_finder


def _register_device() -> str:
    """The device's registration, deferred to the first ``import torch_neuronx``."""
    from kernels.trn.register import register

    return register()


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
    install_finder(_register_device)
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()

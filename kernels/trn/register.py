"""Registers the native core as the PrivateUse1 backend `trn` (name from $HN_TRN_NAME).

Registration makes `trn` the process's torch.accelerator, so it only ever happens on an explicit
`import kernels.trn`, `kernels.trn.register()` or the HN_TRN=1 autoload entry point.
"""

from __future__ import annotations

import atexit
import os
import sys
import time

import torch

from . import _core

DEFAULT_NAME = "trn"
DEFAULT_DEVICES = 8
_registered: str | None = None


def backend_name() -> str:
    return os.environ.get("HN_TRN_NAME") or DEFAULT_NAME


def is_registered() -> bool:
    return _registered is not None


def register() -> str:
    """Load the native core and register the backend; idempotent. Returns the backend name."""
    global _registered
    if _registered is not None:
        return _registered
    name = backend_name()
    current = torch._C._get_privateuse1_backend_name()
    if current not in ("privateuseone", name):
        raise RuntimeError(
            f"PrivateUse1 is already registered as {current!r}; cannot register {name!r}"
        )
    devices = int(os.environ.get("HN_TRN_DEVICES", DEFAULT_DEVICES))
    core = _core.native()
    core.set_device_count(devices)
    core.claim_composite_ops()
    from . import device_check

    device_check.install(core)  # which ops refuse 0-dim cpu tensors, as CUDA's kernels do
    if current == "privateuseone":
        torch.utils.rename_privateuse1_backend(name)
    from . import device_module

    torch._register_device_module(name, device_module)
    sys.modules.setdefault(f"torch.{name}", device_module)
    torch.utils.generate_methods_for_privateuse1_backend(
        for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
    )
    from . import attention, autocast, dynamo_hook, rnn, sharing, trainium, upstream_gaps

    trainium.install(core, name)
    autocast.install()
    attention.install()
    rnn.install()
    sharing.install(name)
    dynamo_hook.install(name)
    upstream_gaps.install(name)
    if torch.distributed.is_available():
        from . import distributed

        distributed.register(name)  # c10d backend `name` (kernels/trn/distributed.py)
    from . import neuron_compat

    neuron_compat.install(name)  # opt-in: only when the name is `neuron`
    _autograd_on_calling_thread()
    atexit.register(_settle_autograd_device_threads)
    _children_inherit(name)
    _registered = name
    return name


def _children_inherit(name: str) -> None:
    """Processes started from this one register trn too, as CUDA is there in a spawned child.

    A `multiprocessing` child started by spawn or forkserver is a fresh interpreter that imports
    only what unpickling its target needs; a worker function defined next to a test, with no
    import of kernels.trn, found no device ("Expected one of cpu, cuda, ... device type"). The
    opt-in autoload (HN_TRN=1, the torch.backends entry point) is how a fresh interpreter gets the
    device, so registering exports it to the environment children inherit, with a non-default
    name.
    An explicit HN_TRN (e.g. 0) is left alone.
    """
    os.environ.setdefault("HN_TRN", "1")
    if name != DEFAULT_NAME:
        os.environ.setdefault("HN_TRN_NAME", name)


ENV_AUTOGRAD_THREAD = "HN_TRN_AUTOGRAD_DEVICE_THREAD"


def _autograd_on_calling_thread() -> None:
    """Run backward passes on the thread that calls them, as for CPU tensors.

    Autograd's engine hands every graph whose tensors are on a non-CPU device to one worker thread
    per device (an accelerator queues its kernels from there). trn's kernels run on the host, so
    that thread only adds two cross-thread hand-offs per backward (queue push, wake-up, future
    completion): on the tiny MLP step of tests/benchmarks/bench_device.py it was most of the gap
    to CPU (docs/performance.md). ``set_multithreading_enabled(False)`` is autograd's own switch
    for this; it is per thread, so it applies to the thread that registers the device (normally
    the main thread). HN_TRN_AUTOGRAD_DEVICE_THREAD=1 keeps upstream's device thread.
    """
    if os.environ.get(ENV_AUTOGRAD_THREAD) == "1":
        return
    torch._C._set_multithreading_enabled(False)


def _settle_autograd_device_threads() -> None:
    """At interpreter exit, let autograd's device threads finish starting (pytorch#38228).

    The first backward starts one autograd thread per device (8 here, one on a CPU-only build) and
    each counts itself as started *before* it takes the GIL to create its thread state. A script
    that exits right after that first backward can finalize Python while such a thread still waits
    for the GIL; the thread is then killed inside C++ and the process aborts with "terminate called
    without an active exception". Releasing the GIL for a moment at exit lets them all through.
    """
    for _ in range(5):
        time.sleep(0.01)

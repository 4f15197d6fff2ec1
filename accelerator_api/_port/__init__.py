"""The machinery behind `accelerator_api.autoport` (import that module, not this package)."""

from __future__ import annotations

import atexit
import os

from .. import runtime
from .patcher import Patcher
from .sites import RECORDER, Recorder
from .target import Target

ENV_REPORT = "HN_AUTOPORT_REPORT"  # write the report as JSON to this path at exit
ENV_QUIET = "HN_AUTOPORT_QUIET"  # 1: no report on stderr

_state: dict = {"patcher": None, "atexit": False}


def installed() -> bool:
    return _state["patcher"] is not None


def install(report_json: str | None = None, quiet: bool | None = None) -> Recorder:
    """Redirect CUDA usage to the current accelerator (or CPU). Idempotent; returns the recorder.

    When the current accelerator is CUDA nothing is patched.
    """
    if report_json is not None:
        os.environ[ENV_REPORT] = report_json
    if quiet is not None:
        os.environ[ENV_QUIET] = "1" if quiet else "0"
    if not _state["atexit"]:
        atexit.register(_report_at_exit)
        _state["atexit"] = True
    if installed():
        return RECORDER
    acc = runtime.accelerator()
    RECORDER.target = acc.type if acc is not None else "cpu"
    RECORDER.changed = RECORDER.target != "cuda"
    if not RECORDER.changed:
        return RECORDER
    Target.set(RECORDER.target)
    from . import cuda_namespace, device_context, legacy, torch_patches

    p = Patcher()
    try:
        device_context.freeze_constructors()  # before any factory is wrapped
        device_context.install(p)
        torch_patches.install(p)
        legacy.install(p)
        cuda_namespace.install(p)
    except BaseException:
        p.undo()  # never leave torch half-patched
        raise
    _state["patcher"] = p
    return RECORDER


def uninstall() -> None:
    """Restore every patched attribute (the recorded sites stay until `RECORDER.clear()`)."""
    p = _state["patcher"]
    if p is not None:
        p.undo()
        _state["patcher"] = None


def _report_at_exit() -> None:
    if not installed() and RECORDER.changed:
        return  # uninstalled before exit: the port is over and its caller has RECORDER
    quiet = os.environ.get(ENV_QUIET, "0").strip().lower() in ("1", "true", "yes", "on")
    RECORDER.write(os.environ.get(ENV_REPORT) or None, quiet)

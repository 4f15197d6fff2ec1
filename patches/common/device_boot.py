"""Subprocess bootstrap: make DEVICE available, then hand over to a module (pytest, a worker).

    python patches/common/device_boot.py DEVICE [--plugin MODULE] --probe
    python patches/common/device_boot.py DEVICE [--plugin MODULE] -m MODULE [ARGS...]

Upstream's ``common_device_type`` computes its device list when it is imported, so a PrivateUse1
plugin must be registered *before* the test harness is imported; this script guarantees the order
(and refuses to run if the harness is already loaded). It is run by file path, not ``-m``, so a
``patches`` package in the tree under test cannot shadow it; it imports only the stdlib, torch and
the plugin (the plugin table is read from ``audits/vocabulary.py`` by file path, for the same
reason).

Exit codes: 0/the module's own code; 3 = device unavailable (reason on stderr, first line
``DEVICE-UNAVAILABLE: ...``); 2 = usage error.

With ``HN_BOOT_INFO=FILE`` it also records, right after the boot, what ``--probe`` would
print, as JSON ``{"device", "available", "detail"}`` (written whole: a reader never sees half), so a
test run doubles as the device's probe (patches.common.runpool).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import runpy
import sys


def _vocabulary():
    """``audits/vocabulary.py`` of this installation, by path: never a tree under test's."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "audits")
    spec = importlib.util.spec_from_file_location(
        "_hn_vocabulary", os.path.join(path, "vocabulary.py")
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# Out-of-tree PrivateUse1 backends we know how to register; others via --plugin.
DEVICE_PLUGINS = _vocabulary().DEVICE_PLUGINS
# the folder holding this project's packages (the plugins above live there)
PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _find_own_plugin(module: str) -> None:
    """A plugin of this project (``kernels.trn``) imports where the project is not installed:
    its folder goes last on ``sys.path``, behind the tree under test and everything else."""
    if os.path.isdir(os.path.join(PROJECT, module.split(".")[0])) and PROJECT not in sys.path:
        sys.path.append(PROJECT)


NATIVE = ("cpu", "cuda", "meta")
HARNESS = ("torch.testing._internal.common_device_type", "torch.testing._internal.common_utils")
UNAVAILABLE_RC = 3


class DeviceUnavailable(RuntimeError):
    pass


def boot(device: str, plugin: str | None = None) -> str:
    """Make ``device`` usable in this process; return a one-line description of it."""
    loaded = [m for m in HARNESS if m in sys.modules]
    if loaded:
        raise RuntimeError(f"{loaded[0]} was imported before the device was registered")
    import torch

    if device == "cpu":
        return f"cpu (torch {torch.__version__})"
    if device == "cuda":
        if not torch.cuda.is_available():
            raise DeviceUnavailable(
                "torch.cuda.is_available() is False "
                f"(torch {torch.__version__}, cuda {torch.version.cuda})"
            )
        return f"cuda {torch.cuda.get_device_name(0)} x{torch.cuda.device_count()}"
    if device == "meta":
        return "meta"
    module = plugin or DEVICE_PLUGINS.get(device)
    if not module:
        raise DeviceUnavailable(f"no plugin known for device {device!r} (pass --plugin MODULE)")
    if not plugin:
        _find_own_plugin(module)
    try:
        mod = importlib.import_module(module)
        if torch._C._get_privateuse1_backend_name() != device:
            register = getattr(mod, "register", None)
            if callable(register):
                register()
    except Exception as e:  # noqa: BLE001 - any plugin failure means "absent", with its reason
        raise DeviceUnavailable(f"import {module} failed: {type(e).__name__}: {e}") from e
    name = torch._C._get_privateuse1_backend_name()
    if name != device:
        raise DeviceUnavailable(f"{module} registered PrivateUse1 as {name!r}, not {device!r}")
    try:
        torch.ones(2, device=device).add_(1).cpu()
    except Exception as e:  # noqa: BLE001
        raise DeviceUnavailable(
            f"{device} registered but a tensor op failed: {type(e).__name__}: {e}"
        ) from e
    count = getattr(getattr(torch, device, None), "device_count", lambda: "?")()
    return f"{device} via {module} ({count} devices)"


def record(device: str, available: bool, detail: str) -> None:
    """Write the boot record to $HN_BOOT_INFO, if set (see the module docstring)."""
    path = os.environ.pop("HN_BOOT_INFO", None)  # the tests' own subprocesses: not theirs
    if not path:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        json.dump({"device": device, "available": available, "detail": detail}, fh)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    device, rest = argv[0], argv[1:]
    plugin = None
    if rest[:1] == ["--plugin"] and len(rest) >= 2:
        plugin, rest = rest[1], rest[2:]
    try:
        desc = boot(device, plugin)
    except DeviceUnavailable as e:
        record(device, False, str(e))
        print(f"DEVICE-UNAVAILABLE: {e}", file=sys.stderr)
        return UNAVAILABLE_RC
    record(device, True, desc)
    if rest == ["--probe"]:
        print(desc)
        return 0
    if len(rest) < 2 or rest[0] != "-m":
        print(__doc__, file=sys.stderr)
        return 2
    os.environ["HN_TEST_DEVICE"] = device
    sys.argv = [rest[1], *rest[2:]]
    # sys.path[0] is this script's folder; the module's tree comes from the cwd, as with -m.
    sys.path[0] = os.getcwd()
    try:
        runpy.run_module(rest[1], run_name="__main__", alter_sys=True)
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        return code if isinstance(code, int) else 1
    return 0


if __name__ == "__main__":
    rc = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: exiting right after a backward can abort in the autograd
    # device threads (device.md pitfall 6); the results are already written by then.
    os._exit(rc)

"""pytest plugin for validation runs (``-p hn_validate_plugin``; its folder is put on PYTHONPATH).

It is a top-level module of its own folder, so a ``patches`` package in the tree under test cannot
shadow it, and it imports only the stdlib (plus ``coverage`` and the device bootstrap when used).
Configured by the environment that ``patches.common.runner`` sets:

- ``HN_TEST_DEVICE`` / ``HN_TEST_PLUGIN``: in a pytest-xdist worker (a fresh
  interpreter the bootstrap never saw) the device is booted in ``pytest_configure``, before any
  test module imports upstream's harness.
- ``HN_PROGRESS``: a folder; each process appends JSON lines ``{"start": id}`` and
  ``{"end": id, "status": s, "message": m}``, so a run killed on timeout names the test that was
  running and keeps the outcomes of the tests that finished.
- ``HN_COV_DIR`` + ``HN_COV_INCLUDE`` (os.pathsep list of files): coverage.py
  measures those files, with one dynamic context per test (the JUnit id ``module.Class::name``),
  one data file per process in that folder.

Test ids are JUnit's (``classname::name`` as pytest's junitxml mangles a node id), the ids
``patches.common.runner.parse_junit`` reads, so coverage, progress and outcomes join on them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

_STATE: dict = {"cov": None, "log": None, "status": {}}
_RANK = {"pass": 0, "skip": 1, "xfail": 1, "fail": 2, "error": 3}


def junit_id(nodeid: str) -> str:
    """``dir/test_x.py::Cls::test_y[p]`` -> ``dir.test_x.Cls::test_y[p]`` (junitxml's naming)."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return f"{'.'.join(names[:-1])}::{names[-1]}" if len(names) > 1 else f"{names[0]}::<module>"


def _boot_worker() -> None:
    device = os.environ.get("HN_TEST_DEVICE")
    if not device or device == "cpu":
        return
    boot_py = Path(__file__).resolve().parents[1] / "device_boot.py"
    spec = importlib.util.spec_from_file_location("_hn_device_boot", boot_py)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.boot(device, os.environ.get("HN_TEST_PLUGIN") or None)


def _write(event: dict) -> None:
    fh = _STATE.get("log")
    if fh is not None:
        fh.write(json.dumps(event) + "\n")
        fh.flush()


def pytest_configure(config) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        _boot_worker()
    tag = f"{worker or 'main'}-{os.getpid()}"
    progress = os.environ.get("HN_PROGRESS")
    if progress:
        _STATE["log"] = open(Path(progress, f"progress-{tag}.jsonl"), "a", encoding="utf-8")
    cov_dir = os.environ.get("HN_COV_DIR")
    distributing = not worker and getattr(config.option, "numprocesses", None)
    if cov_dir and not distributing:  # an xdist controller runs no test: nothing to measure
        import coverage

        include = [p for p in os.environ.get("HN_COV_INCLUDE", "").split(os.pathsep) if p]
        cov = coverage.Coverage(
            data_file=str(Path(cov_dir, f"cov-{tag}")),
            include=include or None,
            config_file=False,
        )
        cov.start()
        _STATE["cov"] = cov


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    tid = junit_id(item.nodeid)
    _write({"start": tid})
    cov = _STATE.get("cov")
    if cov is not None:
        cov.switch_context(tid)
    yield
    if cov is not None:
        cov.switch_context("")
    status, message = _STATE.setdefault("status", {}).pop(tid, ("pass", ""))
    _write({"end": tid, "status": status, "message": message})


def pytest_runtest_logreport(report) -> None:
    if report.passed and report.when != "call":
        return
    tid = junit_id(report.nodeid)
    if report.skipped:
        status = "xfail" if hasattr(report, "wasxfail") else "skip"
    elif report.failed:
        status = "fail" if report.when == "call" else "error"
    else:
        status = "pass"
    msg = str(report.longrepr or "").strip().splitlines()
    seen = _STATE.setdefault("status", {})
    prev = seen.get(tid)
    if prev is None or _RANK[status] > _RANK[prev[0]]:
        seen[tid] = (status, msg[-1][:300] if msg else "")


def pytest_unconfigure(config) -> None:
    cov = _STATE.pop("cov", None)
    if cov is not None:
        cov.stop()
        cov.save()
    fh = _STATE.pop("log", None)
    if fh is not None:
        fh.close()

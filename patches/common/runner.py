"""Run tests on one device in a fresh subprocess and read the outcomes from pytest's JUnit XML.

Each run is ``python patches/common/device_boot.py DEVICE -m pytest ... --junitxml FILE`` so the device
plugin is registered before upstream's harness is imported, with
``PYTORCH_TESTING_DEVICE_ONLY_FOR=DEVICE`` so device-type tests instantiate for that device only.
Non-CUDA runs hide GPUs (``CUDA_VISIBLE_DEVICES=""``) so a test gated on CUDA cannot silently run
on a GPU inside the "cpu" column. Outcomes come from the XML, never from console text.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from patches.common.outcome import Outcome

BOOT = Path(__file__).resolve().with_name("device_boot.py")
# the folder holding this project's packages: on a worker's PYTHONPATH, so `-m patches.matrix...`
# runs from any working folder whether or not the project is installed
PROJECT_ROOT = BOOT.parents[2]
# the pytest plugin's own folder goes on PYTHONPATH: nothing in the tree under test can shadow it
PLUGIN_DIR = Path(__file__).resolve().with_name("pytest_plugin")
PLUGIN_MODULE = "hn_validate_plugin"
UNAVAILABLE_RC = 3
RUN_ERROR_ID = "<pytest run>"


@dataclass
class DeviceInfo:
    name: str
    available: bool
    detail: str  # description when available, the reason when not

    def to_dict(self) -> dict:
        return {"name": self.name, "available": self.available, "detail": self.detail}


@dataclass
class RunResult:
    device: str
    phase: str
    rc: int | None
    duration: float
    command: list[str]
    outcomes: list[Outcome] = field(default_factory=list)
    log_tail: str = ""
    xdist: int = 0  # pytest-xdist processes (0: in the pytest process itself)
    coverage_dir: Path | None = None  # coverage.py data files, one per process (see plugin)
    running: list[str] = field(default_factory=list)  # tests still running when it timed out

    @property
    def incomplete(self) -> str:
        """Why this run says nothing about the tests it did not reach ('' when it completed).

        A run killed on timeout or a pytest that crashed leaves its other tests ``absent``; a
        comparison against it cannot rule a regression out, so the verdict must say so.
        """
        if self.rc is None:
            where = f" in {', '.join(self.running)}" if self.running else " outside any test"
            return f"timed out{where}"
        crash = next((o for o in self.outcomes if o.test == RUN_ERROR_ID), None)
        return crash.message if crash else ""

    def to_dict(self) -> dict:
        return {
            "device": self.device,
            "phase": self.phase,
            "rc": self.rc,
            "duration": round(self.duration, 3),
            "command": self.command,
            "tests": len(self.outcomes),
            "xdist": self.xdist,
            "timed_out_in": self.running,
            "incomplete": self.incomplete,
            "log_tail": self.log_tail,
        }


# what pytest-xdist sets in each worker's environment
XDIST_WORKER_ENV = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


def device_env(
    device: str, pythonpath: Sequence[str | os.PathLike] = (), base: dict[str, str] | None = None
) -> dict[str, str]:
    """The environment for a subprocess that tests ``device``."""
    env = dict(os.environ if base is None else base)
    paths = [str(p) for p in pythonpath]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTORCH_TESTING_DEVICE_ONLY_FOR"] = device
    env["HN_TEST_DEVICE"] = device  # read by the plugin in pytest-xdist workers
    env.pop("PYTORCH_TESTING_DEVICE_EXCEPT_FOR", None)
    env.pop("HN_BOOT_INFO", None)  # only the run that asks for a boot record writes one
    # started from inside a pytest-xdist worker (a test suite run with -n): the child pytest is a
    # session of its own, not that worker (its plugins would boot as a worker, name their files
    # after it, and an xdist child run would not see itself as the controller)
    for name in XDIST_WORKER_ENV:
        env.pop(name, None)
    if device != "cuda":
        env["CUDA_VISIBLE_DEVICES"] = ""
    # before/after trees may differ by a same-size edit within one second: never trust a .pyc
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def boot_command(device: str, python: str = sys.executable, plugin: str | None = None) -> list[str]:
    cmd = [python, str(BOOT), device]
    if plugin:
        cmd += ["--plugin", plugin]
    return cmd


def run_logged(
    cmd: list[str], cwd: Path, env: dict[str, str], timeout: float, log: Path
) -> tuple[int | None, float]:
    """Run ``cmd`` in its own process group, output to ``log``; None rc means timed out."""
    t0 = time.monotonic()
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            rc: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = None
    return rc, time.monotonic() - t0


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def probe(
    device: str,
    *,
    cwd: Path,
    pythonpath: Sequence = (),
    python: str = sys.executable,
    plugin: str | None = None,
    timeout: float = 600,
    log: Path | None = None,
) -> DeviceInfo:
    """Can ``device`` be booted here? Runs the bootstrap's ``--probe`` in a subprocess."""
    if device == "cpu":
        return DeviceInfo("cpu", True, "cpu")  # always there; saves a torch import
    log = log or Path(cwd) / f".probe-{device}.log"
    rc, _ = run_logged(
        boot_command(device, python, plugin) + ["--probe"],
        Path(cwd),
        device_env(device, pythonpath),
        timeout,
        log,
    )
    text = tail(log, 40)
    if rc == 0:
        return DeviceInfo(device, True, text.splitlines()[-1] if text else device)
    reason = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in text.splitlines()
            if ln.startswith("DEVICE-UNAVAILABLE:")
        ),
        None,
    )
    if reason is None:
        reason = (
            "probe timed out"
            if rc is None
            else f"probe exited {rc}: " + (text.splitlines()[-1] if text else "no output")
        )
    return DeviceInfo(device, False, reason)


def probe_all(devices: Sequence[str], *, work: Path, plugins: dict, log) -> dict[str, DeviceInfo]:
    """Probe each device once; an unavailable one is logged and becomes an "absent" column."""
    infos: dict[str, DeviceInfo] = {}
    for dev in devices:
        info = infos[dev] = probe(
            dev, cwd=work, plugin=plugins.get(dev), log=work / f"probe-{dev}.log"
        )
        if not info.available:
            log(f"  {dev}: absent ({info.detail})")
    return infos


def parse_junit(path: Path, device: str, phase: str) -> list[Outcome]:
    """Outcomes from a pytest JUnit XML file (xunit1 or xunit2)."""
    root = ET.parse(path).getroot()
    found: dict[str, Outcome] = {}
    for case in root.iter("testcase"):
        cls, name = case.get("classname", ""), case.get("name", "")
        test = f"{cls}::{name}" if cls else f"{name}::<collection>"
        status, message = "pass", ""
        for child in case:
            tag = child.tag
            msg = (child.get("message") or (child.text or "")).strip().splitlines()
            msg = msg[0][:300] if msg else ""
            if tag == "error":
                status, message = "error", msg
            elif tag == "failure" and status != "error":
                status, message = "fail", msg
            elif tag == "skipped" and status == "pass":
                status = "xfail" if child.get("type") == "pytest.xfail" else "skip"
                message = msg
        prev = found.get(test)
        # a teardown error is reported as a second <testcase> with the same name: worst wins
        if prev is None or _rank(status) > _rank(prev.status):
            found[test] = Outcome(
                test, device, phase, status, float(case.get("time") or 0.0), message
            )
    return list(found.values())


def _rank(status: str) -> int:
    return {"pass": 0, "skip": 1, "xfail": 1, "fail": 2, "error": 3}.get(status, 0)


@dataclass
class PytestRun:
    """How one pytest run goes: ``workdir`` holds its XML, log and progress; ``xdist`` > 1
    spreads the tests over pytest-xdist processes; ``coverage_include`` (absolute paths) measures
    those files with one coverage context per test (see the plugin); ``boot_info``: where the
    bootstrap records whether it brought the device up (the run is then also the device's probe,
    see patches.common.runpool)."""

    workdir: Path
    pythonpath: Sequence = ()
    python: str = sys.executable
    plugin: str | None = None
    timeout: float = 1800
    pytest_args: Sequence[str] = ()
    xdist: int = 0
    coverage_include: Sequence = ()
    boot_info: Path | None = None


def _pytest_command(root: Path, tests: Sequence[str], device: str, how: PytestRun, xml: Path):
    return boot_command(device, how.python, how.plugin) + [
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        PLUGIN_MODULE,
        "--rootdir",
        str(root),
        f"--junitxml={xml}",
        "-o",
        "junit_logging=no",
        # a test file that fails to import is one "collection error" row, not the end of the run
        "--continue-on-collection-errors",
        *(["-n", str(how.xdist)] if how.xdist > 1 else []),
        *how.pytest_args,
        "--",
        *tests,
    ]


def _pytest_env(root: Path, device: str, how: PytestRun, progress: Path, cov_dir) -> dict:
    env = device_env(device, [root, *how.pythonpath, PLUGIN_DIR])
    env["HN_PROGRESS"] = str(progress)
    if how.plugin:
        env["HN_TEST_PLUGIN"] = how.plugin
    if how.boot_info is not None:
        Path(how.boot_info).unlink(missing_ok=True)
        env["HN_BOOT_INFO"] = str(how.boot_info)
    if cov_dir is not None:
        env["HN_COV_DIR"] = str(cov_dir)
        env["HN_COV_INCLUDE"] = os.pathsep.join(str(p) for p in how.coverage_include)
    return env


def _outcomes(result: RunResult, xml: Path) -> list[Outcome]:
    """The outcomes of a run that finished: its JUnit XML, or one error naming the crash."""
    device, phase, dt, rc = result.device, result.phase, result.duration, result.rc
    if xml.exists():
        try:
            return parse_junit(xml, device, phase)
        except ET.ParseError as e:
            return [Outcome(RUN_ERROR_ID, device, phase, "error", dt, f"unreadable JUnit XML: {e}")]
    if rc == 5:  # nothing collected: legitimately no outcomes
        return []
    last = result.log_tail.splitlines()[-1] if result.log_tail else ""
    why = f"pytest exited {rc} without results: {last}"[:300]
    return [Outcome(RUN_ERROR_ID, device, phase, "error", dt, why)]


def run_tests(
    root: Path, tests: Sequence[str], device: str, phase: str, how: PytestRun
) -> RunResult:
    """Run ``tests`` (paths or node ids relative to ``root``) with pytest on ``device``; cwd is
    ``root``. A run past ``how.timeout`` is killed; the tests that finished keep their outcomes
    (from the plugin's progress log) and the ones still running become ``error`` outcomes
    naming it."""
    workdir = how.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    xml = workdir / f"junit-{phase}-{device}.xml"
    log = workdir / f"pytest-{phase}-{device}.log"
    progress = workdir / f"progress-{phase}-{device}"
    cov_dir = workdir / f"coverage-{phase}-{device}" if how.coverage_include else None
    xml.unlink(missing_ok=True)
    for d in (progress, cov_dir):
        if d is not None:
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
    cmd = _pytest_command(root, tests, device, how, xml)
    env = _pytest_env(root, device, how, progress, cov_dir)
    rc, dt = run_logged(cmd, Path(root), env, how.timeout, log)
    result = RunResult(
        device,
        phase,
        rc,
        dt,
        cmd,
        log_tail=tail(log),
        xdist=how.xdist if how.xdist > 1 else 0,
        coverage_dir=cov_dir,
    )
    if rc is None:  # killed on timeout: no JUnit XML; the progress log says what happened
        result.outcomes, result.running = _from_progress(progress, device, phase, dt, how.timeout)
    else:
        result.outcomes = _outcomes(result, xml)
    return result


def _from_progress(
    folder: Path, device: str, phase: str, dt: float, timeout: float
) -> tuple[list[Outcome], list[str]]:
    """Outcomes of a run killed on timeout: finished tests as recorded, running ones as errors."""
    finished: dict[str, Outcome] = {}
    started: dict[str, None] = {}
    for f in sorted(folder.glob("progress-*.jsonl")):
        for line in f.read_text(errors="replace").splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue  # a line cut short by the kill
            if "start" in ev:
                started[ev["start"]] = None
            elif "end" in ev and ev.get("status") in ("pass", "fail", "error", "skip", "xfail"):
                started.pop(ev["end"], None)
                finished[ev["end"]] = Outcome(
                    ev["end"], device, phase, ev["status"], 0.0, ev.get("message", "")
                )
    running = [t for t in started if t not in finished]
    why = f"timed out after {timeout:g}s while running this test (the run was killed)"
    out = list(finished.values())
    out += [Outcome(t, device, phase, "error", dt, why) for t in running]
    if not running:
        out.append(
            Outcome(
                RUN_ERROR_ID,
                device,
                phase,
                "error",
                dt,
                f"pytest timed out after {timeout:g}s outside any test (collection or exit)",
            )
        )
    return out, running

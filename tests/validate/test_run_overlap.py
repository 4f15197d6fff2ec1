"""The (device, phase) runs of a validation overlap (patches.common.runpool), and the shadow of
the installed torch reuses site's compiled modules (patches.validate.shadow): issue 19.

The scheduler tests use fake runs (threads that write a boot record as device_boot.py does,
then sleep), so they check ordering, the concurrency bound and the probe decisions exactly,
without a torch import per run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from patches.common import device_boot, runpool
from patches.common.runner import DeviceInfo, RunResult
from patches.validate import shadow


class Fake:
    """Fake runs: ``boots`` says what each device's bootstrap records (None: nothing, a crash)."""

    def __init__(self, boots: dict[str, bool | None], sleeps: dict[str, float]):
        self.boots, self.sleeps = boots, sleeps
        self.lock = threading.Lock()
        self.now = self.peak = 0
        self.started: dict[str, float] = {}
        self.booted: dict[str, float] = {}
        self.probed: list[str] = []

    def run(self, dev: str, key: str):
        def go(record: Path):
            with self.lock:
                self.now += 1
                self.peak = max(self.peak, self.now)
                self.started[key] = time.monotonic()
            time.sleep(0.05)
            boot = self.boots.get(dev, True)
            if boot is not None:
                tmp = record.with_suffix(".tmp")
                tmp.write_text(json.dumps({"device": dev, "available": boot, "detail": f"{dev}!"}))
                tmp.replace(record)
                self.booted[key] = time.monotonic()
            time.sleep(self.sleeps.get(key, 0.1))
            with self.lock:
                self.now -= 1
            rc = 0 if boot else 3
            return RunResult(dev, key, rc, 0.0, [key]), [f"  {key}: rc {rc}"]

        return go

    def probe(self, dev: str) -> DeviceInfo:
        self.probed.append(dev)
        return DeviceInfo(dev, self.boots.get(dev) is not False, f"probe {dev}")


def go(fake: Fake, plan: list[tuple[str, str]], slots: int, tmp_path: Path, start_order=None):
    lines: list[str] = []
    infos, results = runpool.run_all(
        list(dict.fromkeys(d for d, _ in plan)),
        [(d, k, fake.run(d, k)) for d, k in plan],
        slots=slots,
        probe=fake.probe,
        log=lines.append,
        records=tmp_path,
        start_order=start_order,
    )
    return infos, results, lines


PLAN = [("cpu", "cpu-b"), ("cpu", "cpu-a"), ("trn", "trn-b"), ("trn", "trn-a")]


def test_results_and_log_in_the_callers_order_whatever_finishes_first(tmp_path):
    # cpu-b is the slowest, trn-a the fastest: they finish in the reverse order
    fake = Fake({}, {"cpu-b": 0.6, "cpu-a": 0.4, "trn-b": 0.2, "trn-a": 0.05})
    infos, results, lines = go(fake, PLAN, 4, tmp_path, start_order=[0, 2, 1, 3])
    assert [r.phase for r in results] == ["cpu-b", "cpu-a", "trn-b", "trn-a"]
    assert lines == ["  cpu-b: rc 0", "  cpu-a: rc 0", "  trn-b: rc 0", "  trn-a: rc 0"]
    assert infos["trn"] == DeviceInfo("trn", True, "trn!")  # from the run's boot record
    assert fake.probed == ["cpu"]  # trn's first run was its probe
    assert fake.peak == 4  # they did overlap


def test_never_more_runs_at_once_than_slots(tmp_path):
    fake = Fake({}, {})
    plan = [("cpu", f"r{i}") for i in range(7)]
    _infos, results, _ = go(fake, plan, 2, tmp_path)
    assert fake.peak == 2 and [r.phase for r in results] == [f"r{i}" for i in range(7)]
    fake1 = Fake({}, {})
    go(fake1, plan, 1, tmp_path / "seq")
    assert fake1.peak == 1


def test_a_devices_other_runs_wait_until_its_first_run_booted_it(tmp_path):
    fake = Fake({}, {"trn-b": 0.3})
    go(fake, [("trn", "trn-b"), ("trn", "trn-a")], 2, tmp_path)
    assert fake.started["trn-a"] >= fake.booted["trn-b"]
    assert fake.started["trn-a"] < fake.booted["trn-b"] + 0.25  # not after the whole run


def test_absent_device_probed_once_its_runs_dropped_and_logged_first(tmp_path):
    fake = Fake({"trn": False}, {})
    infos, results, lines = go(fake, PLAN, 2, tmp_path, start_order=[0, 2, 1, 3])
    assert infos["trn"] == DeviceInfo("trn", False, "probe trn")
    assert fake.probed == ["cpu", "trn"]
    assert "trn-a" not in fake.started  # never started: the device is absent
    assert results[2] is None and results[3] is None
    assert [r.phase for r in results[:2]] == ["cpu-b", "cpu-a"]
    assert lines == ["  trn: absent (probe trn)", "  cpu-b: rc 0", "  cpu-a: rc 0"]


@pytest.mark.parametrize("boot", [False, None])
def test_device_the_tree_breaks_keeps_the_runs_error(tmp_path, boot):
    # the run does not bring trn up (unavailable, or a crash before any record) but the
    # stand-alone probe does: the run's result stands, the device's other run still runs
    fake = Fake({"trn": boot}, {})
    fake.probe = lambda dev: (fake.probed.append(dev), DeviceInfo(dev, True, "probe ok"))[1]
    infos, results, lines = go(fake, [("trn", "trn-b"), ("trn", "trn-a")], 2, tmp_path)
    assert infos["trn"] == DeviceInfo("trn", True, "probe ok") and fake.probed == ["trn"]
    assert [r.rc for r in results] == [3, 3] and "trn-a" in fake.started
    assert lines == ["  trn-b: rc 3", "  trn-a: rc 3"]


def test_a_run_that_raises_is_reported_to_the_caller(tmp_path):
    def boom(record):
        raise OSError("no such python")

    with pytest.raises(OSError, match="no such python"):
        runpool.run_all(
            ["cpu"],
            [("cpu", "x", boom)],
            slots=2,
            probe=lambda d: DeviceInfo(d, True, d),
            log=print,
            records=tmp_path,
        )


def test_default_slots_count_xdist_workers(monkeypatch):
    monkeypatch.setattr(runpool.os, "sched_getaffinity", lambda _: set(range(8)), raising=False)
    assert runpool.default_slots() == 8
    assert runpool.default_slots(8) == 1 and runpool.default_slots(3) == 2
    monkeypatch.setattr(runpool.os, "sched_getaffinity", lambda _: {0}, raising=False)
    assert runpool.default_slots(4) == 1


def test_bootstrap_writes_its_record_whole_and_hides_it_from_the_tests(tmp_path, monkeypatch):
    path = tmp_path / "boot.json"
    monkeypatch.setenv("HN_BOOT_INFO", str(path))
    device_boot.record("trn", True, "trn via kernels.trn (8 devices)")
    assert runpool.read_boot_record(path) == DeviceInfo(
        "trn", True, "trn via kernels.trn (8 devices)"
    )
    assert "HN_BOOT_INFO" not in device_boot.os.environ
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left
    assert runpool.read_boot_record(tmp_path / "missing.json") is None


def test_shadow_links_compiled_files_of_linked_modules_only(tmp_path):
    site = shadow.installed_site()
    rel = "torch/utils/dlpack.py"
    shadow.build_shadow(site, tmp_path, [rel])
    tag = sys.implementation.cache_tag
    linked = tmp_path / "torch" / "__pycache__" / f"__init__.{tag}.pyc"
    assert linked.is_symlink() and linked.resolve() == (site / linked.relative_to(tmp_path))
    assert not list((tmp_path / "torch" / "utils" / "__pycache__").glob("dlpack.*"))
    # importing torch from the shadow compiles the copied module only, and from its source
    probe = (
        "import importlib._bootstrap_external as be\n"
        "seen = []\n"
        "orig = be.SourceLoader.source_to_code\n"
        "def s2c(self, data, path, *a, **k):\n"
        "    seen.append(str(path)); return orig(self, data, path, *a, **k)\n"
        "be.SourceLoader.source_to_code = s2c\n"
        "import torch, torch.utils.dlpack\n"
        "print(torch.__file__); print(*seen, sep='\\n')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.split()
    assert out[0] == str(tmp_path / "torch" / "__init__.py")
    # torch's own modules only: entry-point plugins (this project's kernels._autoload, compiled
    # from source in a clean clone) are not part of the shadow
    torch_files = [p for p in out[1:] if p.startswith((str(tmp_path), str(site)))]
    assert torch_files == [str(tmp_path / rel)]

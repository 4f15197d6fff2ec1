"""Run a validation's (device, phase) pytest runs side by side, at most ``slots`` at a time.

The runs of a validation are independent once the scratch trees exist, so they overlap; each is
still its own subprocess with its own timeout, log, JUnit file and outcomes (see
patches.common.runner), and the results come back in the caller's order, whatever the order they
finished in. The per-run log lines are written in that order too, each as soon as it and every
line before it are ready.

No separate probe process per device: a run's bootstrap writes whether it brought the device up
(``HN_BOOT_INFO``, see device_boot.py), so the first run of a device is its probe; the
device's other runs start once that run has booted it (every run of the device has to wait for
the first anyway: only one may find that the device is absent). Only when a run ends without
having brought its device up does the stand-alone probe (``runner.probe``, the installed torch)
decide, as before this module: the device fails there too -> an ``absent`` column, its runs
dropped; it boots there -> the tree under test breaks it, and the run's error outcomes stand.
Devices whose probe costs nothing (``cpu``) are probed directly.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from patches.common.runner import DeviceInfo, RunResult

POLL_S = 0.05  # how often a waiting device run looks for its first run's boot record

# (device, boot record path) -> (the run's result, log lines for it)
RunFn = Callable[[Path], tuple[RunResult, list[str]]]
ProbeFn = Callable[[str], DeviceInfo]


AUTO_XDIST = -1  # ``-n auto``: workers per run decided by split_cores for the runs at hand
AUTO_XDIST_MIN_CORES = 4  # below this each run stays in its pytest process


def cores() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def default_slots(xdist_workers: int = 0) -> int:
    """One run per core; a run spread over N pytest-xdist processes counts as N."""
    return max(1, cores() // max(1, xdist_workers))


def split_cores(runs: int) -> tuple[int, int]:
    """``-n auto`` for ``runs`` runs that can go at once: (xdist workers per run, runs at once).

    The cores are shared among the runs, never given whole to each run in turn: every xdist
    worker imports torch and collects its files again, so 16 workers for one run of a dozen
    tests cost more than they save while the other runs wait (docs/validation.md, "Workers on
    a many-core machine"). Each run gets ``cores // runs`` workers when that is 2 or more, else
    runs in its pytest process, one run per core; below 4 cores always the latter."""
    n = cores()
    share = n // max(1, runs)
    if n < AUTO_XDIST_MIN_CORES or share < 2:
        return 0, n
    return share, max(1, n // share)


def read_boot_record(path: Path) -> DeviceInfo | None:
    """The device as a run's bootstrap recorded it, None when it wrote nothing (yet)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return DeviceInfo(str(data["device"]), bool(data["available"]), str(data["detail"]))


@dataclass
class _Task:
    index: int  # position in the caller's order
    device: str
    fn: RunFn
    record: Path
    state: str = "pending"  # pending -> running -> done | dropped
    result: RunResult | None = None
    lines: list[str] = field(default_factory=list)


class _Pool:
    def __init__(self, devices, runs, slots, probe, free_probe, log, records, start_order):
        self.cond = threading.Condition()
        self.slots = max(1, slots)
        self.busy = 0
        self.probe, self.log = probe, log
        self.infos: dict[str, DeviceInfo | None] = {d: None for d in devices}
        self.probing: set[str] = set()
        self.tasks = [
            _Task(i, dev, fn, Path(records) / f"boot-{key}.json")
            for i, (dev, key, fn) in enumerate(runs)
        ]
        for t in self.tasks:
            t.record.unlink(missing_ok=True)
        self.queue = [self.tasks[i] for i in start_order]
        # the log, in order: one entry per device (its "absent" line), then one per run
        self.entries: list[list[str] | None] = [None] * (len(devices) + len(self.tasks))
        self.devices = list(devices)
        self.flushed = 0
        self.errors: list[BaseException] = []
        for d in devices:
            if d in free_probe or not any(t.device == d for t in self.tasks):
                self._settle(d, probe(d))

    # -- bookkeeping (called with the lock held)

    def _emit(self, slot: int, lines: list[str]) -> None:
        self.entries[slot] = lines
        while self.flushed < len(self.entries) and self.entries[self.flushed] is not None:
            for line in self.entries[self.flushed]:
                self.log(line)
            self.flushed += 1

    def _settle(self, dev: str, info: DeviceInfo) -> None:
        if self.infos[dev] is not None:
            return
        self.infos[dev] = info
        slot = self.devices.index(dev)
        if info.available:
            self._emit(slot, [])
            return
        self._emit(slot, [f"  {dev}: absent ({info.detail})"])
        for t in self.tasks:
            if t.device == dev and t.state in ("pending", "done"):
                t.state, t.result = "dropped", None
                self._emit(len(self.devices) + t.index, [])

    def _startable(self, t: _Task) -> bool:
        info = self.infos[t.device]
        if info is not None:
            return info.available
        if t.device in self.probing:
            return False
        # unknown device: the first of its runs goes; the others wait for it to boot the device
        for other in self.queue:
            if other.device == t.device and other.state in ("running", "done"):
                rec = read_boot_record(other.record)
                if rec is not None and rec.available:
                    self._settle(t.device, rec)
                    return True
                return False
        return True

    def _finished(self, t: _Task) -> None:
        rec = read_boot_record(t.record)
        if self.infos[t.device] is None:
            if rec is not None and rec.available:
                self._settle(t.device, rec)
            elif t.device not in self.probing:
                self.probing.add(t.device)  # the run did not boot the device: ask the probe
                self.busy += 1
                threading.Thread(target=self._probe_worker, args=(t.device,), daemon=True).start()
        info = self.infos[t.device]
        if info is not None and not info.available:  # its device turned out absent
            t.state, t.result = "dropped", None
            self._emit(len(self.devices) + t.index, [])
            return
        t.state = "done"
        if info is not None:
            self._emit(len(self.devices) + t.index, t.lines)

    def _watch(self) -> bool:
        """Settle the devices whose running first run has booted them; True while one of them
        is still booting (the scheduler then polls)."""
        booting = False
        for t in self.tasks:
            if t.state == "running" and self.infos[t.device] is None:
                rec = read_boot_record(t.record)
                if rec is not None and rec.available:
                    self._settle(t.device, rec)
                else:
                    booting = True
        return booting

    def _flush_done(self) -> None:
        """Runs that finished before their device was known to be available: log them now."""
        for t in self.tasks:
            info = self.infos[t.device]
            if t.state == "done" and info is not None and info.available:
                slot = len(self.devices) + t.index
                if self.entries[slot] is None:
                    self._emit(slot, t.lines)

    # -- threads

    def _run_worker(self, t: _Task) -> None:
        try:
            result, lines = t.fn(t.record)
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            with self.cond:
                self.errors.append(e)
                self.busy -= 1
                t.state = "done"
                self.cond.notify_all()
            return
        with self.cond:
            self.busy -= 1
            t.result, t.lines = result, lines
            self._finished(t)
            self.cond.notify_all()

    def _probe_worker(self, dev: str) -> None:
        try:
            info = self.probe(dev)
        except BaseException as e:  # noqa: BLE001
            info = DeviceInfo(dev, False, f"probe failed: {type(e).__name__}: {e}")
            with self.cond:
                self.errors.append(e)
        with self.cond:
            self.busy -= 1
            self.probing.discard(dev)
            self._settle(dev, info)
            self.cond.notify_all()

    def run(self) -> None:
        with self.cond:
            while True:
                if self.errors:
                    raise self.errors[0]
                waiting = self._watch()
                self._flush_done()
                for t in self.queue:
                    if self.busy >= self.slots:
                        break
                    if t.state != "pending":
                        continue
                    if self.infos[t.device] is not None and not self.infos[t.device].available:
                        t.state = "dropped"
                        continue
                    if not self._startable(t):
                        waiting = True
                        continue
                    t.state = "running"
                    self.busy += 1
                    threading.Thread(target=self._run_worker, args=(t,), daemon=True).start()
                active = self.busy or any(t.state == "pending" for t in self.tasks)
                if not active:
                    return
                # a waiting run polls its device's boot record; otherwise wake on a finish
                self.cond.wait(POLL_S if waiting else None)


def run_all(
    devices: Sequence[str],
    runs: Sequence[tuple[str, str, RunFn]],
    *,
    slots: int,
    probe: ProbeFn,
    log,
    records: Path,
    free_probe: Sequence[str] = ("cpu",),
    start_order: Sequence[int] | None = None,
) -> tuple[dict[str, DeviceInfo], list[RunResult | None]]:
    """Run ``runs`` = [(device, key, fn)], at most ``slots`` at once; return every device's
    info and, in the order of ``runs``, each result (None: its device is absent).

    ``fn(record)`` runs one pytest subprocess whose bootstrap writes its boot record to
    ``record`` and returns (result, log lines); ``key`` names the record (unique per run).
    Runs start in ``start_order`` (indices into ``runs``; default: as given; put each device's
    first run early: it is the device's probe); ``probe(device)`` is the stand-alone probe, run
    only when it is needed."""
    Path(records).mkdir(parents=True, exist_ok=True)
    order = list(range(len(runs))) if start_order is None else list(start_order)
    if sorted(order) != list(range(len(runs))):
        raise ValueError(f"start_order {order} is not an order of the {len(runs)} runs")
    pool = _Pool(devices, runs, slots, probe, set(free_probe), log, records, order)
    pool.run()
    infos = {d: i for d, i in pool.infos.items() if i is not None}
    return infos, [t.result if t.state == "done" else None for t in pool.tasks]

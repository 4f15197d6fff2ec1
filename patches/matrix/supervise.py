"""One device's OpInfo worker under supervision: the worker (patches.matrix.opinfo_worker, booted
by device_boot) streams events; a worker that dies or times out inside an op is restarted after
that op, which is recorded as ``error``."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from patches.common.outcome import Outcome
from patches.common.runner import PROJECT_ROOT, boot_command, device_env, run_logged, tail

MAX_RESTARTS = 20
_COUNTS = ("samples", "passed", "failed", "errors", "skipped", "refused", "duration", "message")


@dataclass
class Cell:
    """One (op, device, dtype) entry of the matrix."""

    op: str
    device: str
    dtype: str
    status: str
    samples: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    refused: int = 0  # samples the device's dtype policy refused (status "refused")
    duration: float = 0.0
    message: str = ""

    def outcome(self) -> Outcome:
        return Outcome(
            f"opinfo::{self.op}::{self.dtype}",
            self.device,
            "after",
            self.status,
            self.duration,
            self.message,
        )


@dataclass
class WorkerJob:
    """One worker's share of a device: ``shards`` (``"I/N"`` specs, nested in order) restrict
    the ops; ``tag`` names its files in the working folder."""

    device: str
    dtypes: str
    ops: list[str] | None
    work: Path
    max_samples: int
    timeout: float
    plugin: str | None = None
    shards: tuple[str, ...] = ()
    tag: str = ""


def _read_events(path: Path) -> list[dict]:
    events = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                break  # a line cut short by a crash: everything before it is good
    return events


def _command(job: WorkerJob, out: Path, skip: Path) -> list[str]:
    cmd = boot_command(job.device, plugin=job.plugin) + [
        "-m",
        "patches.matrix.opinfo_worker",
        "--device",
        job.device,
        "--dtypes",
        job.dtypes,
        "--out",
        str(out),
        "--skip",
        str(skip),
        "--max-samples",
        str(job.max_samples),
    ]
    if job.ops:
        cmd += ["--ops", ",".join(job.ops)]
    for spec in job.shards:
        cmd += ["--shard", spec]
    if job.plugin:
        cmd += ["--package", job.plugin]  # where the device declares its OpInfo skips
    return cmd


def _collect(events: list[dict], device: str, cells: dict) -> tuple[str, str] | None:
    """Cells of ``events`` into ``cells``; the (op, dtype) started but not finished, if any."""
    pending = None
    for ev in events:
        if ev.get("event") == "start":
            pending = (ev["op"], ev["dtype"])
        elif ev.get("event") == "cell":
            key = (ev["op"], ev["dtype"])
            cells[key] = Cell(
                ev["op"],
                device,
                ev["dtype"],
                ev["status"],
                **{k: ev[k] for k in _COUNTS if k in ev},
            )
            pending = None
    return pending


def run_device(job: WorkerJob, log=print) -> tuple[list[Cell], list[dict]]:
    """All cells of one worker's share; restarts the worker past an op that kills it."""
    device, work = job.device, job.work
    out, skip = work / f"cells-{device}{job.tag}.jsonl", work / f"done-{device}{job.tag}.txt"
    out.unlink(missing_ok=True)
    skip.write_text("")
    cells: dict[tuple[str, str], Cell] = {}
    runs = []
    deadline = time.monotonic() + job.timeout
    for attempt in range(MAX_RESTARTS + 1):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        logf = work / f"worker-{device}{job.tag}-{attempt}.log"
        rc, dt = run_logged(
            _command(job, out, skip), work, device_env(device, [PROJECT_ROOT]), left, logf
        )
        runs.append(
            {
                "device": device,
                "attempt": attempt,
                "rc": rc,
                "duration": round(dt, 2),
                "log_tail": tail(logf, 8),
            }
        )
        events = _read_events(out)
        pending = _collect(events, device, cells)
        if events and events[-1].get("event") == "done":
            break
        if pending is None:  # died before any op (import/boot): nothing to skip past
            log(f"  {device}: worker exited {rc} before starting an op: {tail(logf, 1)}")
            runs[-1]["before_any_op"] = True  # the device measured nothing: the matrix fails
            break
        why = "timed out" if rc is None else f"worker died (rc {rc})"
        cells[pending] = Cell(
            pending[0],
            device,
            pending[1],
            "error",
            message=f"{why} in this op: {tail(logf, 1)}"[:300],
        )
        log(f"  {device}: {why} in {pending[0]} {pending[1]}; resuming after it")
        skip.write_text("".join(f"{o} {d}\n" for o, d in cells))
    return sorted(cells.values(), key=lambda c: (c.op, c.dtype)), runs

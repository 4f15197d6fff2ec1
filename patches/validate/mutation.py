"""Mutation-checked hunks: would the tests that ran a hunk notice if its lines were wrong?

For each hunk and device, the mutants of its added lines (patches.validate.mutants) are written
in turn into the after tree (the file is put back after each), and only the tests that ran the
hunk on that device and passed there after the series are run against each mutant, in one pytest
process (``-x``: the first failure ends it). A mutant is *killed* when one of those tests fails or
errors (a crash or a timeout counts: the test would notice); the hunk is then **checked** on the
device. **unchecked**: it ran, and every mutant survived; **unexercised**: no test ran it there.
``revert`` (the hunk's before state) is left out on a device whose tests all passed before the
series too (:func:`_order`).

The cost is bounded by :class:`Options`: at most ``max_mutants`` mutants per hunk, ``max_tests``
tests per mutant run, ``test_timeout`` seconds per test plus ``startup`` per run, and (by default)
a hunk stops at its first killed mutant on a device. With ``reuse`` (the default) the pytest
process is reused: a device runs all of a hunk's mutants that a code swap can express
(patches.validate.swap) in one process, and only a kill there (confirmed with its test) or a
mutant a swap cannot express costs a fresh process.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from patches.validate import hunks as hunkcov
from patches.validate import mutants as mutantgen
from patches.validate import swap

CHECKED, UNCHECKED, UNEXERCISED = "checked", "unchecked", "unexercised"
KILLING = ("fail", "error")


@dataclass
class Options:
    max_mutants: int = 3  # per hunk
    max_tests: int = 12  # per mutant run (the first ones by test id)
    test_timeout: float = 60.0  # seconds per test in a mutant run
    startup: float = 180.0  # seconds per mutant run for the interpreter, torch and collection
    stop_at_kill: bool = True  # a hunk is checked on a device by its first killed mutant
    reuse: bool = True  # a hunk's swappable mutants in one pytest process per device

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        return (
            f"at most {self.max_mutants} mutants per hunk, {self.max_tests} tests per mutant run, "
            f"{self.test_timeout:g} s per test + {self.startup:g} s per run"
            + (", stopping at the first killed mutant" if self.stop_at_kill else "")
            + (
                "; a hunk's mutants share one pytest process per device where a code swap can "
                "put them in place, each kill confirmed in a fresh process"
                if self.reuse
                else ""
            )
        )


class _Run(Protocol):  # what run_tests returns, as far as the mutation check reads it
    rc: int | None
    outcomes: list


# (pytest node ids, device, tag (a file-name-safe name for its run folder), timeout) -> a
# finished run of those tests on the after tree
RunTests = Callable[[list[str], str, str, float], _Run]


def node_id(test: str, files: list[str]) -> str | None:
    """The pytest node id of a JUnit test id (``dir.test_x.Cls::test_y[p]`` ->
    ``dir/test_x.py::Cls::test_y[p]``), given the test files the run selected."""
    left, sep, name = test.partition("::")
    if not sep:
        return None
    for rel in sorted(files, key=len, reverse=True):
        dotted = rel[:-3].replace("/", ".") if rel.endswith(".py") else rel
        if left == dotted:
            return f"{rel}::{name}"
        if left.startswith(dotted + "."):
            return f"{rel}::{left[len(dotted) + 1 :].replace('.', '::')}::{name}"
    return None


def _killer(run: _Run) -> tuple[str, str] | None:
    """(test, why) of the first failing or erroring outcome of a mutant run, or None."""
    for o in run.outcomes:
        if o.status in KILLING:
            return o.test, f"{o.status}: {o.message}" if o.message else o.status
    if run.rc is None:
        return "<pytest run>", "timed out"
    return None


@dataclass
class _Ctx:
    """One hunk's mutation check: what every step of it reads."""

    run: RunTests
    hunk: hunkcov.Hunk
    opts: Options
    files: list[str]
    log: Callable
    target: Path
    original: str
    mutants: list
    orders: dict = field(default_factory=dict)  # device -> the mutants (1-based) it tries


def check_hunk(
    root: Path,
    hunk: hunkcov.Hunk,
    patch_text: str,
    entry: dict,
    run: RunTests,
    opts: Options,
    files: list[str],
    log,
) -> dict:
    """Mutate ``hunk`` in ``root`` (the after tree) and run each mutant on every device where a
    passing test ran it; return {device: result} and put it in ``entry["mutation"]``.

    When ``run`` can also run a batch (``run.batch``, see patches.validate.run), each device
    first runs every mutant a code swap can express in one pytest process
    (patches.validate.swap); a mutant that survived there is recorded, one killed there is
    confirmed in a fresh process (a test failing only because an earlier mutant left state
    behind never makes a hunk checked). Fresh runs: one mutant is in place at a time, the
    devices that need it side by side."""
    target = root / hunk.path
    original = target.read_text(encoding="utf-8")
    mutants = mutantgen.derive(original, hunk, patch_text, opts.max_mutants + 1)
    c = _Ctx(run, hunk, opts, files, log, target, original, mutants)
    out: dict[str, dict] = {}
    for dev, d in entry["devices"].items():
        if d.get("state") != "measured":
            continue
        tests = [t for t in d["passing_tests"] if node_id(t, files)][: opts.max_tests]
        out[dev] = {"tests": tests, "mutants": [], "nodes": [node_id(t, files) for t in tests]}
        c.orders[dev] = _order(mutants, tests, d, opts, out[dev])
    batched = _batched(c, out)
    for k, m in enumerate(mutants, 1):
        todo = []
        for dev, res in out.items():
            if not res["tests"] or _done(res, opts) or k not in c.orders[dev]:
                continue
            r = batched.get(dev, {}).get(k)
            if r is not None and r.get("swapped") and (not r["killed_by"] or r.get("first")):
                res["mutants"].append(_batch_item(m, r, c.files, res["nodes"]))
                _log(c, k, dev, res, " (in one process with the hunk's other mutants)")
            else:
                todo.append((dev, r.get("killed_by") if r else None))
        if todo:
            _fresh_all(c, k, todo, out)
            for dev, _ in todo:
                _log(c, k, dev, out[dev], "")
    for dev, res in out.items():
        d = entry["devices"][dev]
        if not res["tests"]:
            res["verdict"] = UNEXERCISED if not d["tests"] else UNCHECKED
            continue
        res["verdict"] = CHECKED if any(x["killed"] for x in res["mutants"]) else UNCHECKED
        if not mutants:
            res["note"] = "no mutant could be derived from the added lines"
    entry["mutation"] = out
    return out


def _order(mutants: list, tests: list[str], d: dict, opts: Options, res: dict) -> list[int]:
    """The mutants (1-based) a device tries. ``revert`` puts back this hunk's before state:
    where every test it would run passed before the series too (``passed_before``; on CUDA, a
    series that claims CUDA unchanged), only another hunk could make it fail them, so the slot
    goes to the next operator and the record says why."""
    before = d.get("passed_before")
    moot = bool(tests) and before is not None and set(tests) <= set(before)
    ks = [k for k, m in enumerate(mutants, 1) if not (moot and m.operator == "revert")]
    if len(ks) < len(mutants):
        res["revert"] = "not tried: its tests passed before the series too"
    return ks[: opts.max_mutants]


def _batch_item(m, r: dict, files: list[str], nodes: list[str]) -> dict:
    """A mutant's record from its batch result: it survived, or it was the batch's first (a
    process in the state a fresh one has after collection) and killed."""
    item = {**m.to_dict(), "killed": bool(r["killed_by"]), "seconds": r["seconds"]}
    if r["killed_by"]:
        item["killed_by"] = r["killed_by"]
        item["why"] = f"{r['status']}: {r['message']}" if r.get("message") else r["status"]
        item["node"] = node_id(r["killed_by"], files) or nodes[0]
    return item


def _log(c: _Ctx, k: int, dev: str, res: dict, how: str) -> None:
    item, m, order = res["mutants"][-1], c.mutants[k - 1], c.orders[dev]
    state = f"killed by {item['killed_by']}" if item["killed"] else "survived"
    c.log(
        f"  mutation {c.hunk.key()} {dev}: mutant {order.index(k) + 1}/{len(order)} "
        f"{m.operator} line {m.line}: {state}{how} ({item['seconds']}s)"
    )


def _fresh_all(c: _Ctx, k: int, todo: list, out: dict) -> None:
    """Mutant ``k`` written in place, run fresh on each device of ``todo`` = [(device, the test
    that killed it in the batch or None)] side by side, the file put back."""
    try:
        c.target.write_text(c.mutants[k - 1].source, encoding="utf-8")
        with ThreadPoolExecutor(len(todo)) as pool:
            jobs = [pool.submit(_run_one, c, k, dev, out[dev], hint) for dev, hint in todo]
            items = [j.result() for j in jobs]
    finally:
        c.target.write_text(c.original, encoding="utf-8")
    for (dev, _), item in zip(todo, items):
        out[dev]["mutants"].append(item)


def _done(res: dict, opts: Options) -> bool:
    return opts.stop_at_kill and any(x["killed"] for x in res["mutants"])


def _run_one(c: _Ctx, k: int, dev: str, res: dict, hint: str | None = None) -> dict:
    """One mutant (already in place) against one device's tests, in a fresh process: the
    mutant's record. ``hint``: the test that killed it in a batch, run alone first (confirming
    costs one test); only when it passes here do all the tests run."""
    nodes, m, files = res["nodes"], c.mutants[k - 1], c.files
    t0 = time.monotonic()
    tag = re.sub(r"[^\w.-]", "_", f"{c.hunk.key()}-{dev}-{k}")
    killed = None
    first = node_id(hint, files) if hint else None
    if first in nodes:
        killed = _killer(c.run([first], dev, tag + "-confirm", _timeout(c.opts, 1)))
    if killed is None:
        killed = _killer(c.run(nodes, dev, tag, _timeout(c.opts, len(nodes))))
    item = {**m.to_dict(), "killed": killed is not None, "seconds": 0.0}
    item["seconds"] = round(time.monotonic() - t0, 1)
    if killed:
        item["killed_by"], item["why"] = killed
        item["node"] = node_id(killed[0], files) or nodes[0]
    return item


def _batched(c: _Ctx, out: dict) -> dict[str, dict[int, dict]]:
    """{device: {mutant number: its result in the batch}} for the devices where ``run.batch``
    ran the hunk's swappable mutants in one process ({} when it cannot)."""
    batch = getattr(c.run, "batch", None)
    if batch is None or not c.mutants or not c.opts.reuse:
        return {}
    every = [
        {"index": k, "file": str(c.target), "qualname": q, "source": m.source}
        for k, m in enumerate(c.mutants, 1)
        if (q := swap.swap_target(c.original, m.source))
    ]
    outside = getattr(c.run, "ran_outside_tests", lambda *a: True)
    todo = {dev: [m for m in every if m["index"] in c.orders[dev]] for dev in out}
    devs = [
        dev
        for dev, res in out.items()
        if res["tests"] and todo[dev] and not outside(dev, c.hunk.path, c.hunk.statements)
    ]
    if not devs:
        return {}
    tag = re.sub(r"[^\w.-]", "_", c.hunk.key())
    with ThreadPoolExecutor(len(devs)) as pool:
        jobs = {
            dev: pool.submit(
                batch, out[dev]["nodes"], dev, f"{tag}-{dev}-batch",
                _timeout(c.opts, len(out[dev]["nodes"]) * len(todo[dev])), todo[dev],
            )
            for dev in devs
        }  # fmt: skip
        results = {dev: j.result() for dev, j in jobs.items()}
    for dev, res in results.items():
        ran = [res[m["index"]] for m in todo[dev] if res.get(m["index"], {}).get("swapped")]
        if ran:  # the first mutant the process ran: its state was a fresh process's
            ran[0]["first"] = True
        c.log(
            f"  mutation {c.hunk.key()} {dev}: {len(ran)} mutant(s) run in one process "
            f"({sum(r['seconds'] for r in ran):.1f}s after collection)"
        )
    return results


def _timeout(opts: Options, tests: int) -> float:
    return opts.startup + opts.test_timeout * tests


def check_all(
    root: Path,
    series_hunks: list[hunkcov.Hunk],
    entries: list[dict],
    patch_texts: dict[str, str],
    run: RunTests,
    opts: Options,
    files: list[str],
    log,
) -> dict:
    """Run :func:`check_hunk` for every hunk with executable added lines; return the counts
    {device: {checked, unchecked, unexercised}} and the bound that was applied."""
    by_key = {e["key"]: e for e in entries}
    t0 = time.monotonic()
    for h in series_hunks:
        e = by_key.get(h.key())
        if e is None or not h.statements or not h.path.endswith(".py"):
            continue
        check_hunk(root, h, patch_texts[h.patch], e, run, opts, files, log)
    counts: dict[str, dict[str, int]] = {}
    for e in entries:
        if not e.get("statements"):
            continue  # comments, blank lines: nothing to run or mutate
        for dev, d in e["devices"].items():
            if d.get("state") != "measured":
                continue
            v = e.get("mutation", {}).get(dev, {}).get("verdict")
            if v is None:
                v = UNEXERCISED if not d.get("tests") else UNCHECKED
            c = counts.setdefault(dev, {CHECKED: 0, UNCHECKED: 0, UNEXERCISED: 0})
            c[v] += 1
    return {
        "bound": opts.to_dict(),
        "bound_text": opts.describe(),
        "counts": counts,
        "seconds": round(time.monotonic() - t0, 1),
    }

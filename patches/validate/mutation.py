"""Mutation-checked hunks: would the tests that ran a hunk notice if its lines were wrong?

For each hunk and device, the mutants of its added lines (patches.validate.mutants) are written
in turn into the after tree (the file is put back after each), and only the tests that ran the
hunk on that device and passed there after the series are run against each mutant, in one pytest
process (``-x``: the first failure ends it). A mutant is *killed* when one of those tests fails or
errors (a crash or a timeout counts: the test would notice); the hunk is then **checked** on the
device. **unchecked**: it ran, and every mutant survived; **unexercised**: no test ran it there.

The cost is bounded by :class:`Options`: at most ``max_mutants`` mutants per hunk, ``max_tests``
tests per mutant run, ``test_timeout`` seconds per test plus ``startup`` per run, and (by default)
a hunk stops at its first killed mutant on a device.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Protocol

from patches.validate import hunks as hunkcov
from patches.validate import mutants as mutantgen

CHECKED, UNCHECKED, UNEXERCISED = "checked", "unchecked", "unexercised"
KILLING = ("fail", "error")


@dataclass
class Options:
    max_mutants: int = 3  # per hunk
    max_tests: int = 12  # per mutant run (the first ones by test id)
    test_timeout: float = 60.0  # seconds per test in a mutant run
    startup: float = 180.0  # seconds per mutant run for the interpreter, torch and collection
    stop_at_kill: bool = True  # a hunk is checked on a device by its first killed mutant

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        return (
            f"at most {self.max_mutants} mutants per hunk, {self.max_tests} tests per mutant run, "
            f"{self.test_timeout:g} s per test + {self.startup:g} s per run"
            + (", stopping at the first killed mutant" if self.stop_at_kill else "")
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
    passing test ran it (the devices side by side: one mutant is in place at a time); return
    {device: result} and put it in ``entry["mutation"]``."""
    target = root / hunk.path
    original = target.read_text(encoding="utf-8")
    mutants = mutantgen.derive(original, hunk, patch_text, opts.max_mutants)
    out: dict[str, dict] = {}
    for dev, d in entry["devices"].items():
        if d.get("state") != "measured":
            continue
        tests = [t for t in d["passing_tests"] if node_id(t, files)][: opts.max_tests]
        out[dev] = {"tests": tests, "mutants": [], "nodes": [node_id(t, files) for t in tests]}
    for k, m in enumerate(mutants, 1):
        todo = [dev for dev, res in out.items() if res["tests"] and not _done(res, opts)]
        if not todo:
            break
        try:
            target.write_text(m.source, encoding="utf-8")
            with ThreadPoolExecutor(len(todo)) as pool:
                jobs = [
                    pool.submit(_run_one, run, hunk, k, m, dev, out, opts, files) for dev in todo
                ]
                runs = [j.result() for j in jobs]
        finally:
            target.write_text(original, encoding="utf-8")
        for dev, item in zip(todo, runs):
            out[dev]["mutants"].append(item)
            state = f"killed by {item['killed_by']}" if item["killed"] else "survived"
            log(
                f"  mutation {hunk.key()} {dev}: mutant {k}/{len(mutants)} {m.operator} "
                f"line {m.line}: {state} ({item['seconds']}s)"
            )
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


def _done(res: dict, opts: Options) -> bool:
    return opts.stop_at_kill and any(x["killed"] for x in res["mutants"])


def _run_one(run: RunTests, hunk, k: int, m, dev: str, out: dict, opts: Options, files) -> dict:
    """One mutant (already in place) against one device's tests: the mutant's record."""
    nodes = out[dev]["nodes"]
    t0 = time.monotonic()
    tag = re.sub(r"[^\w.-]", "_", f"{hunk.key()}-{dev}-{k}")
    killed = _killer(run(nodes, dev, tag, _timeout(opts, len(nodes))))
    item = {**m.to_dict(), "killed": killed is not None, "seconds": 0.0}
    item["seconds"] = round(time.monotonic() - t0, 1)
    if killed:
        item["killed_by"], item["why"] = killed
        item["node"] = node_id(killed[0], files) or nodes[0]
    return item


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

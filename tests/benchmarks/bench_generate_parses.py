"""Benchmark: how often ``patches.generate --unsafe-fixes`` parses the same text, in one process,
on a COPY of the installed torch tree (or ``--tree DIR``).

    .venv/bin/python tests/benchmarks/bench_generate_parses.py [--tree DIR] [--rounds N]

Every ``ast.parse`` of the run is timed and keyed by its text. The baseline, measured in the same
process after the run: one parse of each distinct text the run parsed (collections inside a parse
are left out of both). Prints generate's wall time, its parse time against that baseline (1.00x:
no text parsed twice), the time spent parsing a text again by caller, time inside the cyclic garbage collector, peak memory, and how
many times the intent gate's per-file index (``intent.index.Index``) was built per file. With
``--rounds N``: N pairs of plain runs, default collector thresholds against the relaxed policy
``pipeline.plan`` uses, alternating, and the ratio of their medians.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import gc
import resource
import statistics
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from patches.common.collector import relaxed  # noqa: E402
from patches.generate import pipeline  # noqa: E402
from patches.generate.intent import index as intent_index  # noqa: E402
from patches.generate.state import Settings  # noqa: E402
from tests.benchmarks.bench_patches import copy_torch  # noqa: E402

_ROOT = str(Path(__file__).resolve().parents[2]) + "/"


class _Collector:
    """Time inside the cyclic garbage collector (``gc.callbacks``): every AST kept alive is
    scanned by each full collection."""

    def __init__(self) -> None:
        self.spent, self.t0 = 0.0, 0.0

    def __call__(self, phase, info) -> None:
        if phase == "start":
            self.t0 = time.perf_counter()
        else:
            self.spent += time.perf_counter() - self.t0


class _Parses:
    """``ast.parse`` replaced for the run: time per call (less any collection inside it), its
    text, its caller."""

    def __init__(self, collector: _Collector) -> None:
        self.real, self.collector = ast.parse, collector
        self.texts: dict[tuple, int] = {}  # (text, mode) -> times parsed
        self.total = 0.0
        self.again: dict[str, float] = defaultdict(float)  # caller -> time on texts seen before

    def __call__(self, source, filename="<unknown>", mode="exec", **kw):
        t0, gc0 = time.perf_counter(), self.collector.spent
        try:
            return self.real(source, filename, mode, **kw)
        finally:
            dt = time.perf_counter() - t0 - (self.collector.spent - gc0)
            self.total += dt
            key = (source, mode)
            if key in self.texts:
                caller = traceback.extract_stack(limit=2)[0]
                self.again[f"{caller.filename.replace(_ROOT, '')}:{caller.name}"] += dt
            self.texts[key] = self.texts.get(key, 0) + 1

    def baseline(self) -> float:
        """One parse of each distinct text, now (the run's own texts, the same process), with
        the collector off: parsing alone, as the run's parse times count it."""
        gc.disable()
        try:
            t0 = time.perf_counter()
            for source, mode in self.texts:
                try:
                    self.real(source, mode=mode)
                except (SyntaxError, ValueError, RecursionError):
                    pass
            return time.perf_counter() - t0
        finally:
            gc.enable()


def measure(tree: Path) -> dict:
    collector = _Collector()
    parses, builds = _Parses(collector), Counter()
    real_init = intent_index.Index.__init__

    def counted(self, ctx):
        builds[ctx.path] += 1
        real_init(self, ctx)

    ast.parse, intent_index.Index.__init__ = parses, counted
    gc.callbacks.append(collector)
    try:
        t0 = time.perf_counter()
        pipeline.generate(Settings(tree, unsafe_fixes=True))
        total = time.perf_counter() - t0
    finally:
        ast.parse, intent_index.Index.__init__ = parses.real, real_init
        gc.callbacks.remove(collector)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "total": total,
        "parses": parses,
        "base": parses.baseline(),
        "builds": builds,
        "gc": collector.spent,
        "rss": rss,
    }


def policies(tree: Path, rounds: int) -> dict[str, list[float]]:
    """generate's wall time under the default collector thresholds and under ``pipeline.plan``'s
    policy (``patches.common.collector.relaxed``), ``rounds`` pairs in alternating order (ABBA)
    in this process, uninstrumented."""
    walls: dict[str, list[float]] = {"default": [], "relaxed": []}
    try:
        for i in range(rounds):
            for name in ("default", "relaxed")[:: 1 if i % 2 == 0 else -1]:
                pipeline.relaxed = relaxed if name == "relaxed" else contextlib.nullcontext
                gc.collect()
                t0 = time.perf_counter()
                pipeline.generate(Settings(tree, unsafe_fixes=True))
                walls[name].append(time.perf_counter() - t0)
                print(f"  {name:8} {walls[name][-1]:.1f} s", flush=True)
    finally:
        pipeline.relaxed = relaxed
    return walls


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, help="a tree to run on (default: a copy of torch)")
    ap.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="then this many pairs of runs, default collector "
        "thresholds against the relaxed policy (alternating; ~4 min a pair on torch)",
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tree = args.tree or copy_torch(Path(tmp), [])
        r = measure(tree)
        walls = policies(tree, args.rounds)
    p, base, builds = r["parses"], r["base"], r["builds"]
    calls, again = sum(p.texts.values()), sum(p.again.values())
    print(
        f"generate {r['total']:.1f} s; ast.parse {p.total:.1f} s over {calls} calls; "
        f"garbage collector {r['gc']:.1f} s; peak RSS {r['rss']:.0f} MiB"
    )
    print(
        f"  baseline (each of {len(p.texts)} distinct texts once, same process): {base:.1f} s; "
        f"ratio {p.total / base:.2f}x; {again:.1f} s parsing a text again"
    )
    for caller, s in sorted(p.again.items(), key=lambda x: -x[1])[:6]:
        print(f"  {s:6.2f} s again  {caller}")
    twice = sum(1 for n in builds.values() if n > 1)
    print(
        f"intent index: {sum(builds.values())} builds for {len(builds)} files "
        f"({twice} files built more than once)"
    )
    if args.rounds:
        d, x = (statistics.median(walls[k]) for k in ("default", "relaxed"))
        print(f"collector: default {d:.1f} s, relaxed {x:.1f} s (medians); ratio {d / x:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Shards of the conformance matrix: deterministic, cost-balanced op assignment.

``--shard I/N`` (1-based) gives a machine the ops of shard I. Every machine computes the same
assignment from the same inputs: the op ids (sorted) and the committed cost table
``costs.json`` (seconds per op id, all dtypes and devices of a measured run). Ops the table does
not know cost its median. Assignment is longest-processing-time-first: ops by decreasing cost
(name breaks ties) each go to the least-loaded shard (lowest index breaks ties).

Refresh the table from a full run: ``python -m patches.matrix costs matrix-out/matrix.json``.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from pathlib import Path

COSTS = Path(__file__).with_name("costs.json")


class ShardError(ValueError):
    """A bad shard spec or a bad set of shards to merge: the message is the one line to print."""


def parse(spec: str) -> tuple[int, int]:
    """``"I/N"`` -> ``(I, N)`` with ``1 <= I <= N``."""
    index, sep, count = str(spec).partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = 0
    if not sep or n < 1 or not 1 <= i <= n:
        raise ShardError(f"bad shard {spec!r}: expected I/N with 1 <= I <= N (e.g. 1/4)")
    return i, n


def load_costs(path: Path = COSTS) -> dict[str, float]:
    if not path.is_file():
        return {}
    return {str(k): float(v) for k, v in json.loads(path.read_text())["seconds"].items()}


def assign(ops: Iterable[str], count: int, costs: dict[str, float]) -> list[list[str]]:
    """Split ``ops`` into ``count`` lists of about equal total cost, deterministically."""
    ops = sorted(set(ops))
    known = [costs[o] for o in ops if o in costs]
    default = statistics.median(known) if known else 1.0
    load = [0.0] * count
    shards: list[list[str]] = [[] for _ in range(count)]
    for op in sorted(ops, key=lambda o: (-costs.get(o, default), o)):
        k = min(range(count), key=lambda j: (load[j], j))
        shards[k].append(op)
        load[k] += costs.get(op, default)
    return [sorted(s) for s in shards]


def select(ops: Iterable[str], specs: Iterable[str], costs: dict[str, float] | None = None):
    """The ops of a shard; several specs nest (``2/4`` then ``1/2``: half of shard 2 of 4)."""
    costs = load_costs() if costs is None else costs
    chosen = sorted(set(ops))
    for spec in specs:
        i, n = parse(spec)
        chosen = assign(chosen, n, costs)[i - 1]
    return chosen


def cost_table(matrix: dict) -> dict:
    """The cost table of one matrix run: seconds per op id over all its cells."""
    seconds: dict[str, float] = {}
    for c in matrix["cells"]:
        seconds[c["op"]] = seconds.get(c["op"], 0.0) + float(c.get("duration") or 0.0)
    return {
        "about": "seconds per OpInfo op id (all dtypes and devices of one run); "
        "refresh: python -m patches.matrix costs MATRIX.json",
        "torch": matrix.get("torch", ""),
        "devices": sorted(matrix["devices"]),
        "dtypes": matrix.get("dtypes", []),
        "seconds": {k: round(v, 3) for k, v in sorted(seconds.items())},
    }

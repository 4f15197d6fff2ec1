"""Shards: a deterministic, cost-balanced split of work items (matrix ops, validated test files).

``--shard I/N`` (1-based) gives a machine the items of shard I. Every machine computes the same
assignment from the same inputs: the item names (sorted) and a cost per name (the matrix's
committed ``patches/matrix/costs.json``; file sizes for test files). Items without a cost cost the
median. Assignment is longest-processing-time-first: items by decreasing cost (name breaks ties)
each go to the least-loaded shard (lowest index breaks ties).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable


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


def select(ops: Iterable[str], specs: Iterable[str], costs: dict[str, float]) -> list[str]:
    """The items of a shard; several specs nest (``2/4`` then ``1/2``: half of shard 2 of 4)."""
    chosen = sorted(set(ops))
    for spec in specs:
        i, n = parse(spec)
        chosen = assign(chosen, n, costs)[i - 1]
    return chosen

"""The cyclic garbage collector's policy for a long planning pass (``patches.generate``).

Planning a torch-sized tree keeps thousands of parsed trees alive (``ast`` per file, libcst per
rewritten file) and allocates tens of millions of container objects. With the default
thresholds (700 allocations) the collector walked the young ones over and over: 30 s of a
167 s run (tests/benchmarks/bench_generate_parses.py). ``relaxed`` freezes what exists (the
collector ignores it until ``unfreeze``) and collects the youngest generation every
``threshold`` allocations instead: 4.6 s, the same peak memory. Turning the collector off
instead (the scanner's ``audits.workers.gc_paused``) is as fast here but holds the cycles libcst
makes until the end: 300 MiB more at the peak.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG = 100_000


@contextmanager
def relaxed(threshold: int = YOUNG) -> Iterator[None]:
    """Freeze the heap and collect the youngest generation every ``threshold`` allocations for
    the duration; the thresholds as they were and the heap unfrozen afterwards, on any exit. A
    heap the caller froze already stays as the caller left it (nothing more frozen, nothing
    unfrozen)."""
    was, ours = gc.get_threshold(), gc.get_freeze_count() == 0
    if ours:
        gc.freeze()
    gc.set_threshold(threshold, *was[1:])
    try:
        yield
    finally:
        gc.set_threshold(*was)
        if ours:
            gc.unfreeze()

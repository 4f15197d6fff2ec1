"""torch.trn.memory._record_memory_history / _snapshot / _dump_snapshot, as torch.cuda.memory's.

The native allocator records every allocation and free while history is on, with the Python
(optionally C++) stack of each allocation (kernels/csrc/memory_trace.cpp); _snapshot() returns the
dict torch.cuda.memory._snapshot() returns ("segments", "device_traces"), so
torch.cuda._memory_viz and https://pytorch.org/memory_viz read it. trn does not cache memory: each
allocation is its own segment with one block.
"""

from __future__ import annotations

import pickle

from . import _core


def _record_memory_history(
    enabled: str | None = "all",
    context: str | None = "all",
    stacks: str = "python",
    max_entries: int = 0,
) -> None:
    """Start (enabled="all") or stop (enabled=None) recording; stacks: "python" or "all" (+C++)."""
    if enabled not in (None, "all", "state"):
        raise ValueError(f"enabled must be None, 'state' or 'all', not {enabled!r}")
    if stacks not in ("python", "all"):
        raise ValueError(f"stacks must be 'python' or 'all', not {stacks!r}")
    _core.native().record_memory_history(
        enabled is not None, context is not None, stacks == "all", int(max_entries)
    )


def _snapshot(device=None) -> dict:
    return _core.native().memory_snapshot()


def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)

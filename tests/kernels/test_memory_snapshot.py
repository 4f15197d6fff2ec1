"""torch.trn.memory._record_memory_history/_snapshot: CUDA's snapshot format, read by _memory_viz."""

from __future__ import annotations

import pickle

import pytest
import torch
from torch.cuda import _memory_viz


@pytest.fixture(scope="module")
def trn():
    import kernels.trn

    return kernels.trn.register()


def _allocate_here(trn):
    return torch.empty(1 << 16, dtype=torch.uint8, device=f"{trn}:1")


def test_snapshot_has_allocations_with_stacks(trn, tmp_path):
    mod = getattr(torch, trn)
    mod.memory._record_memory_history()
    try:
        kept = _allocate_here(trn)
        dropped = torch.ones(1000, device=trn)
        del dropped
        snap = mod.memory._snapshot()
    finally:
        mod.memory._record_memory_history(enabled=None)
    seg = [s for s in snap["segments"] if s["address"] == kept.data_ptr()]
    assert len(seg) == 1 and seg[0]["device"] == 1 and seg[0]["total_size"] == 1 << 16
    frames = seg[0]["blocks"][0]["frames"]
    assert any(f["name"] == "_allocate_here" for f in frames), frames
    trace = snap["device_traces"][0]
    actions = [e["action"] for e in trace if e["size"] == 4000]
    assert actions == ["segment_alloc", "alloc", "free_requested", "free_completed", "segment_free"]
    # PyTorch's visualizer reads it
    assert "segment" in _memory_viz.segsum(snap)  # raises on a malformed snapshot
    html = _memory_viz.trace_plot(snap)
    assert "<html" in html.lower() or len(html) > 1000
    path = tmp_path / "snap.pickle"
    mod.memory._dump_snapshot(str(path))
    assert "segments" in pickle.loads(path.read_bytes())


def test_history_off_records_nothing(trn):
    mod = getattr(torch, trn)
    mod.memory._record_memory_history(enabled=None)
    x = torch.ones(10, device=trn)
    snap = mod.memory._snapshot()
    assert snap["segments"] == [] and all(t == [] for t in snap["device_traces"])
    del x

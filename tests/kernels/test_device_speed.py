"""The trn speed paths (issue 12 part 6) compute what the general paths compute.

Each fast path here replaces a slower route for a common case; these tests pin that the case is
taken (so the speed is real) and that its results match the reference route (so nothing else
changed). Timings themselves live in tests/benchmarks/bench_device.py and docs/performance.md.
"""

from __future__ import annotations

import pytest
import torch

DEV = "trn"


def _allocated():
    return torch.accelerator.memory_allocated(DEV)


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,  # fast.cpp
        lambda a, b: torch.relu(a),  # boxed fallback
        lambda a, b: torch.mm(a, b),
        lambda a, b: a.sum(0),
    ],
)
def test_fresh_outputs_taken_over_in_place_are_device_memory(op):
    """A CPU kernel's fresh output becomes a trn tensor in place (its storage and TensorImpl): it is
    on trn with trn's dispatch keys, its bytes are booked on the device until it is freed, and a
    later resize grows it with the device allocator."""
    a, b = torch.randn(16, 16, device=DEV), torch.randn(16, 16, device=DEV)
    before = _allocated()
    out = op(a, b)
    assert out.device == torch.device(DEV, 0) and out.untyped_storage().device.type == DEV
    assert torch._C._dispatch_keys(out).has(torch._C.DispatchKey.PrivateUse1)
    assert not torch._C._dispatch_keys(out).has(torch._C.DispatchKey.CPU)
    assert _allocated() - before == out.untyped_storage().nbytes()
    ref = op(a.cpu(), b.cpu())
    torch.testing.assert_close(out.cpu(), ref)
    out.resize_(64, 64)
    assert out.untyped_storage().device.type == DEV
    assert _allocated() - before == 64 * 64 * 4
    del out
    assert _allocated() == before


def test_an_output_over_capacity_is_refused_and_nothing_leaks():
    """Adopting a fresh output books it first: over the capacity it is an OutOfMemoryError, the
    CPU memory is freed as a CPU tensor, and the device's count is unchanged."""
    from kernels.trn import memory

    a = torch.randn(256, 256, device=DEV)
    before = _allocated()
    old = memory.capacity(0)
    memory.set_capacity(0, before + 1024)
    try:
        with pytest.raises(torch.OutOfMemoryError):
            torch.relu(a)
        with pytest.raises(torch.OutOfMemoryError):
            a + a
    finally:
        memory.set_capacity(0, old)
    assert _allocated() == before
    torch.testing.assert_close(torch.relu(a).cpu(), torch.relu(a.cpu()))

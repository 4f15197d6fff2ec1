"""Differential checks: trn raises where CPU and CUDA raise, with the same exception type, and
quantized trn tensors run what quantized CPU tensors run (kernels/csrc/fallback.cpp)."""

from __future__ import annotations

import copy
import io

import pytest
import torch
import torch.nn.functional as F

import kernels.trn  # noqa: F401

MISMATCH = "Expected all tensors to be on the same device"


def _outcome(fn, device):
    try:
        fn(device)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return None


OUT_OF_BOUNDS = {
    "index_select": lambda d: torch.ones(3, device=d).index_select(0, torch.tensor([5], device=d)),
    "index_select negative": lambda d: torch.ones(3, device=d).index_select(
        0, torch.tensor([-5], device=d)
    ),
    "getitem": lambda d: torch.ones(3, device=d)[torch.tensor([5], device=d)],
    "gather": lambda d: torch.ones(3, device=d).gather(0, torch.tensor([7], device=d)),
    "scatter_add": lambda d: torch.zeros(3, device=d).scatter_add(
        0, torch.tensor([7], device=d), torch.ones(1, device=d)
    ),
    "index_put_": lambda d: torch.zeros(3, device=d).index_put_(
        (torch.tensor([7], device=d),), torch.ones(1, device=d)
    ),
    "index_add": lambda d: torch.zeros(3, device=d).index_add(
        0, torch.tensor([7], device=d), torch.ones(1, device=d)
    ),
    "index_copy": lambda d: torch.zeros(3, device=d).index_copy(
        0, torch.tensor([7], device=d), torch.ones(1, device=d)
    ),
    "take": lambda d: torch.zeros(3, device=d).take(torch.tensor([7], device=d)),
    "put_": lambda d: torch.zeros(3, device=d).put_(
        torch.tensor([7], device=d), torch.ones(1, device=d)
    ),
    "embedding": lambda d: F.embedding(torch.tensor([9], device=d), torch.ones(3, 2, device=d)),
    "nll_loss": lambda d: F.nll_loss(torch.ones(2, 3, device=d), torch.tensor([0, 5], device=d)),
    "one_hot": lambda d: F.one_hot(torch.tensor([5], device=d), 3),
    "narrow": lambda d: torch.ones(3, device=d).narrow(0, 2, 5),
}


@pytest.mark.parametrize("case", sorted(OUT_OF_BOUNDS))
def test_out_of_bounds_indices_raise_the_same_exception_type_as_cpu(case):
    fn = OUT_OF_BOUNDS[case]
    expected = _outcome(fn, "cpu")
    assert expected is not None
    assert _outcome(fn, "trn") is expected


def _setitem(x, i, v):
    x[i] = v


def test_index_put_takes_cpu_indices_but_not_cpu_values_like_cuda():
    """CUDA moves index tensors to the indexed tensor's device; its TensorIterator refuses any
    other non-scalar cpu operand. Once the whole index_put family accepted cpu tensors."""
    idx = torch.tensor([1], device="trn")
    x = torch.zeros(3, device="trn")
    # refused: 1-d cpu values, with or without accumulate, and a cpu self written with trn values
    with pytest.raises(RuntimeError, match=MISMATCH):
        x.index_put_((idx,), torch.ones(1))
    with pytest.raises(RuntimeError, match=MISMATCH):
        x.index_put_((idx,), torch.ones(1), accumulate=True)
    with pytest.raises(RuntimeError, match=MISMATCH):
        torch.zeros(3).index_put_((torch.tensor([1]),), torch.ones(1, device="trn"))
    # accepted: cpu indices, a 0-dim cpu value, setitem (which views a [1] value as 0-dim),
    # and a cpu tensor indexed by trn indices with cpu values
    x.index_put_((torch.tensor([0]),), torch.full((1,), 2.0, device="trn"))
    x.index_put_((idx,), torch.tensor(3.0))
    _setitem(x, torch.tensor([2]), torch.full((1,), 4.0))
    assert x.cpu().tolist() == [2.0, 3.0, 4.0]
    y = torch.zeros(3)
    y.index_put_((idx,), torch.ones(1))
    assert y.tolist() == [0.0, 1.0, 0.0]
    # the other device-checked ops refuse cpu operands as before
    with pytest.raises(RuntimeError, match=MISMATCH):
        torch.ones(3, device="trn").masked_scatter_(torch.ones(3, dtype=torch.bool, device="trn"),
                                                    torch.ones(3))  # fmt: skip


def _q(x, device):
    return torch.quantize_per_tensor(x.to(device), 0.05, 3, torch.quint8)


QUANTIZED = {
    "clone": lambda q: q.clone(),
    "contiguous": lambda q: q.t().contiguous(),
    "mean": lambda q: q.mean(1),
    "sort": lambda q: torch.sort(q, 1)[0],
    "topk": lambda q: torch.topk(q, 2)[0],
    "cat": lambda q: torch.cat([q, q]),
    "stack-free flatten": lambda q: q.flatten(),
    "deepcopy": lambda q: copy.deepcopy(q),
    "save/load": lambda q: _save_load(q),
}


def _save_load(q):
    buf = io.BytesIO()
    torch.save(q, buf)
    buf.seek(0)
    return torch.load(buf)


@pytest.mark.parametrize("case", sorted(QUANTIZED))
def test_quantized_ops_with_composite_kernels_match_cpu(case):
    """Composite kernels fill the QuantizedPrivateUse1 slot too; without a direct registration
    clone/contiguous failed ("Copying from quantized Tensor to non-quantized Tensor"), mean,
    sort and topk found no kernel, cat asked a CPU alias for its qscheme."""
    torch.manual_seed(0)
    x = torch.randn(4, 6)
    fn = QUANTIZED[case]
    expected, got = fn(_q(x, "cpu")), fn(_q(x, "trn"))
    assert got.device.type == "trn" and got.is_quantized == expected.is_quantized
    if got.is_quantized:
        assert (got.q_scale(), got.q_zero_point()) == (expected.q_scale(), expected.q_zero_point())
        got, expected = got.int_repr(), expected.int_repr()
    torch.testing.assert_close(got.cpu(), expected)


def test_quantized_factories_run_on_trn():
    q = torch._empty_affine_quantized((2, 3), scale=0.1, zero_point=2, dtype=torch.quint8,
                                      device="trn")  # fmt: skip
    assert q.device.type == "trn" and q.is_quantized and q.dtype == torch.quint8
    assert (q.q_scale(), q.q_zero_point(), tuple(q.shape)) == (0.1, 2, (2, 3))

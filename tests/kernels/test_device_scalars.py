"""CPU 0-dim tensors as scalar operands of trn ops (CUDA's rule), the clear error for anything
else mixed, and the unboxed elementwise kernels (kernels/csrc/fast.cpp) agreeing with CPU."""

import operator

import pytest
import torch

BINARY = [torch.add, torch.sub, torch.mul, torch.div]
INPLACE = ["add_", "sub_", "mul_", "div_"]


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_cpu_0dim_tensor_is_a_scalar_operand(op):
    x = torch.randn(3, 4)
    s = torch.tensor(2.5)
    for dev in ("trn", "trn:3"):
        xt = x.to(dev)
        for got, want in ((op(xt, s), op(x, s)), (op(s, xt), op(s, x))):
            assert got.device == torch.device(dev if ":" in dev else "trn:0")
            torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)


@pytest.mark.parametrize("name", INPLACE)
def test_cpu_0dim_tensor_in_place_and_out(name):
    x, s = torch.randn(5), torch.tensor(-1.5)
    xt = x.to("trn:1")
    ptr = xt.data_ptr()
    assert getattr(xt, name)(s) is xt and xt.data_ptr() == ptr
    torch.testing.assert_close(xt.cpu(), getattr(x.clone(), name)(s), rtol=0, atol=0)
    out = torch.empty(5, device="trn:1")
    fn = getattr(torch, name[:-1])
    fn(x.to("trn:1"), s, out=out)
    torch.testing.assert_close(out.cpu(), fn(x, s), rtol=0, atol=0)


def test_other_ops_take_cpu_0dim_scalars():
    x, s = torch.randn(6), torch.tensor(0.25)
    xt = x.to("trn")
    for f in (
        lambda a: torch.where(a > 0, a, s),
        lambda a: torch.pow(a, s),
        lambda a: torch.maximum(a, s),
        lambda a: torch.lerp(a, a * 2, s),
        lambda a: torch.atan2(a, s),
        lambda a: a == s,
        lambda a: torch.div(a, s, rounding_mode="floor"),
        lambda a: a + torch.tensor(3),
    ):
        got = f(xt)
        assert got.is_trn
        torch.testing.assert_close(got.cpu(), f(x), rtol=0, atol=0, equal_nan=True)


def test_promotion_with_scalars_follows_cpu():
    i = torch.arange(4, dtype=torch.int32)
    for a, b in ((i, torch.tensor(2.5)), (i, torch.tensor(3)), (i.bfloat16(), torch.tensor(1.0))):
        for op in BINARY:
            got = op(a.to("trn"), b)
            assert got.dtype == op(a, b).dtype
            torch.testing.assert_close(got.cpu(), op(a, b), rtol=0, atol=0)
    # a 0-dim float64 cpu scalar does not make the result float64 (strict policy stays quiet)
    assert (
        torch.ones(2, device="trn") * torch.tensor(2.0, dtype=torch.float64)
    ).dtype == torch.float32


@pytest.mark.parametrize(
    "op",
    [
        operator.add,
        operator.sub,
        operator.mul,
        operator.truediv,
        operator.iadd,
        operator.isub,
        operator.imul,
        operator.itruediv,
        torch.atan2,
    ],
)
def test_non_scalar_cpu_tensor_still_raises(op):
    xt = torch.ones(3, device="trn")
    with pytest.raises(
        RuntimeError, match=r"same device, but found at least two devices, trn:0 and cpu"
    ):
        op(xt, torch.ones(3))
    with pytest.raises(RuntimeError, match=r"same device.*trn:0 and cpu"):
        op(torch.tensor(2.0, device="trn"), torch.ones(3))  # the 0-dim one on trn is no excuse
    with pytest.raises(RuntimeError, match=r"same device.*trn:0 and trn:1"):
        op(xt, torch.ones(3, device="trn:1"))


def test_in_place_aliasing_matches_cpu():
    x = torch.arange(6.0)
    xt = x.to("trn")
    xt.mul_(xt)  # same storage on both sides
    assert torch.equal(xt.cpu(), x * x)
    with pytest.raises(RuntimeError, match="single memory location|overlap"):
        x[1:].add_(x[:-1])
    with pytest.raises(RuntimeError, match="single memory location|overlap"):
        xt[1:].add_(xt[:-1])  # the overlap check still sees the shared storage
    v = xt[::2]
    v.sub_(1, alpha=2)  # strided view written through
    expected = x * x
    expected[::2] -= 2
    assert torch.equal(xt.cpu(), expected)


def test_elementwise_results_are_device_tensors_with_autograd():
    a = torch.randn(4, 4, device="trn:2", requires_grad=True)
    b = torch.randn(4, 4, device="trn:2")
    y = ((a + b) * b - a / (b.abs() + 1)).sum()
    y.backward()
    ac = a.detach().cpu().requires_grad_()
    bc = b.cpu()
    ((ac + bc) * bc - ac / (bc.abs() + 1)).sum().backward()
    assert a.grad.device == torch.device("trn", 2)
    torch.testing.assert_close(a.grad.cpu(), ac.grad)
    before = torch.trn.memory_allocated(2)
    z = a.detach() + b
    assert (
        torch.trn.memory_allocated(2) - before >= z.numel() * 4
    )  # adopted output is booked on trn:2

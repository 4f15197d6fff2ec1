"""The trn speed paths (issue 12 part 6) compute what the general paths compute.

Each fast path here replaces a slower route for a common case; these tests pin that the case is
taken (so the speed is real) and that its results match the reference route (so nothing else
changed). Timings themselves live in tests/benchmarks/bench_device.py and docs/performance.md.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

DEV = "trn"
CPU_FLASH = "aten::_scaled_dot_product_flash_attention_for_cpu"


def _sdpa(dev, q, k, v, mask, causal):
    q, k, v = (t.detach().to(dev).requires_grad_() for t in (q, k, v))
    m = None if mask is None else mask.detach().to(dev).requires_grad_(mask.is_floating_point())
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal)
        out.backward(torch.linspace(-1, 1, out.numel()).reshape(out.shape).to(dev, out.dtype))
    grads = [t.grad.cpu() for t in (q, k, v)] + (
        [m.grad.cpu()] if m is not None and m.grad is not None else []
    )
    names = {e.name for e in prof.events()}
    return out.detach().cpu(), grads, names


CASES = ["plain", "causal", "causal_rect", "bias", "broadcast_bias", "bool_mask", "mask_3d", "long"]


@pytest.mark.parametrize("case", CASES)
def test_attention_runs_cpu_flash_on_trn_and_matches_the_math_path(case):
    """One head size for q, k and v (every transformer): trn's OVERRIDEABLE kernels run CPU's C++
    flash kernels on the aliases; results equal the math path's, gradients of a float mask too
    (that backward takes the blocked Python kernel, which has the mask's gradient)."""
    torch.manual_seed(0)
    n_q, n_k = (5, 9) if case == "causal_rect" else (7, 300 if case == "long" else 9)
    q, k, v = torch.randn(2, 3, n_q, 16), torch.randn(2, 3, n_k, 16), torch.randn(2, 3, n_k, 16)
    mask = {
        "bias": torch.randn(2, 3, n_q, n_k),
        "broadcast_bias": torch.randn(1, 1, n_q, n_k),
        "bool_mask": torch.rand(n_q, n_k) > 0.3,
        "mask_3d": torch.randn(3, n_q, n_k),
    }.get(case)
    if case == "bool_mask":
        mask[:, 0] = True
    causal = case.startswith("causal")
    with sdpa_kernel([SDPBackend.MATH]):
        ref_out, ref_grads, _ = _sdpa("cpu", q, k, v, mask, causal)
    out, grads, names = _sdpa(DEV, q, k, v, mask, causal)
    assert CPU_FLASH in names
    # the backward: CPU's flash backward unless the mask wants a gradient
    want_mask_grad = mask is not None and mask.is_floating_point()
    assert (CPU_FLASH + "_backward" in names) != want_mask_grad
    torch.testing.assert_close(out, ref_out)
    assert len(grads) == len(ref_grads)
    for g, r in zip(grads, ref_grads):
        torch.testing.assert_close(g, r)


def test_attention_layouts_follow_the_inputs():
    """A GPT block's head split hands in transposed q/k/v; outputs and gradients keep each input's
    dimension order (what the meta kernels promise torch.compile)."""
    torch.manual_seed(0)
    x = torch.randn(2, 6, 3, 8)  # (batch, seq, heads, head size), then heads to dim 1
    q, k, v = (x.clone().to(DEV).transpose(1, 2).requires_grad_() for _ in range(3))
    cq, ck, cv = (x.clone().transpose(1, 2).requires_grad_() for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with sdpa_kernel([SDPBackend.MATH]):
        ref = F.scaled_dot_product_attention(cq, ck, cv, is_causal=True)
    assert out.stride() == q.stride()
    out.sum().backward()
    ref.sum().backward()
    torch.testing.assert_close(out.detach().cpu(), ref.detach())
    for t, r in zip((q, k, v), (cq, ck, cv)):
        assert t.grad.stride() == t.stride()
        torch.testing.assert_close(t.grad.cpu(), r.grad)


def test_attention_other_head_size_keeps_the_blocked_kernel():
    """v with another head size than q/k: CPU's flash kernel refuses it, the blocked kernel runs."""
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 2, 5, 16), torch.randn(1, 2, 6, 16), torch.randn(1, 2, 6, 8)
    with sdpa_kernel([SDPBackend.MATH]):
        ref_out, ref_grads, _ = _sdpa("cpu", q, k, v, None, False)
    out, grads, names = _sdpa(DEV, q, k, v, None, False)
    assert CPU_FLASH not in names
    torch.testing.assert_close(out, ref_out)
    for g, r in zip(grads, ref_grads):
        torch.testing.assert_close(g, r)


def test_attention_bfloat16_on_cpu_flash():
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 5, 8) for _ in range(3))
    with sdpa_kernel([SDPBackend.MATH]):
        ref, ref_grads, _ = _sdpa("cpu", q, k, v, None, True)
    out, grads, names = _sdpa(DEV, q.bfloat16(), k.bfloat16(), v.bfloat16(), None, True)
    assert CPU_FLASH in names and out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), ref, atol=2e-2, rtol=2e-2)
    for g, r in zip(grads, ref_grads):
        assert g.dtype == torch.bfloat16
        torch.testing.assert_close(g.float(), r, atol=5e-2, rtol=5e-2)


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


UNARY = {
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "silu": torch.nn.functional.silu,
    "exp": torch.exp,
    "neg": torch.neg,
    "sqrt": lambda t: torch.sqrt(t.abs()),
    "rsqrt": lambda t: torch.rsqrt(t.abs() + 0.5),
    "gelu": torch.nn.functional.gelu,
    "gelu_tanh": lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unboxed_activations_and_their_backwards_match_cpu(name):
    """fast.cpp's unboxed activations (and, through autograd, their *_backward kernels) give CPU's
    values and gradients, in float32 and bfloat16, on contiguous and strided inputs."""
    fn = UNARY[name]
    for dtype in (torch.float32, torch.bfloat16):
        base = torch.randn(6, 10, dtype=dtype)
        for x in (base, base.t()):
            c = x.clone().requires_grad_()
            t = x.clone().to(DEV).requires_grad_()
            out_c, out_t = fn(c), fn(t)
            assert out_t.device.type == DEV and out_t.dtype == out_c.dtype
            torch.testing.assert_close(out_t.detach().cpu(), out_c.detach())
            g = torch.linspace(-1, 1, out_c.numel()).reshape(out_c.shape).to(dtype)
            out_c.backward(g)
            out_t.backward(g.to(DEV))
            torch.testing.assert_close(t.grad.cpu(), c.grad)


def test_unboxed_kernels_keep_the_fallbacks_errors():
    """Errors stay CPU's (same kernel) or the fallback's (mixed devices): same type and message."""
    t = torch.randn(3, device=DEV)
    with pytest.raises(RuntimeError) as on_cpu:
        torch.nn.functional.gelu(t.cpu(), approximate="bad")
    with pytest.raises(RuntimeError) as on_trn:
        torch.nn.functional.gelu(t, approximate="bad")
    assert str(on_trn.value) == str(on_cpu.value)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ops.aten.threshold_backward(t, torch.randn(3), 0.0)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ops.aten.tanh_backward(torch.randn(3), t)
    if torch.trn.device_count() > 1:
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            torch.ops.aten.sigmoid_backward(t, torch.randn(3, device=f"{DEV}:1"))
    # a 0-dim cpu tensor is a scalar operand where CUDA takes one (add & co, `NoCheck`), and
    # refused where CUDA's generated device check refuses it (the structured *_backward ops)
    torch.testing.assert_close((t * torch.tensor(2.0)).cpu(), t.cpu() * 2)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ops.aten.threshold_backward(t, torch.tensor(1.0), 0.0)


FAST_BINARY = {  # fast.cpp's unboxed binary kernels, by the aten name the yaml lists
    "add.Tensor": lambda a, b: torch.ops.aten.add.Tensor(a, b),
    "add_.Tensor": lambda a, b: torch.ops.aten.add_.Tensor(a, b),
    "sub.Tensor": lambda a, b: torch.ops.aten.sub.Tensor(a, b),
    "sub_.Tensor": lambda a, b: torch.ops.aten.sub_.Tensor(a, b),
    "mul.Tensor": lambda a, b: torch.ops.aten.mul.Tensor(a, b),
    "mul_.Tensor": lambda a, b: torch.ops.aten.mul_.Tensor(a, b),
    "div.Tensor": lambda a, b: torch.ops.aten.div.Tensor(a, b),
    "div_.Tensor": lambda a, b: torch.ops.aten.div_.Tensor(a, b),
    "threshold_backward": lambda a, b: torch.ops.aten.threshold_backward(a, b, 0.0),
    "sigmoid_backward": lambda a, b: torch.ops.aten.sigmoid_backward(a, b),
    "tanh_backward": lambda a, b: torch.ops.aten.tanh_backward(a, b),
    "silu_backward": lambda a, b: torch.ops.aten.silu_backward(a, b),
    "gelu_backward": lambda a, b: torch.ops.aten.gelu_backward(a, b),
}


@pytest.mark.parametrize("name", sorted(FAST_BINARY))
def test_unboxed_binary_kernels_take_cpu_scalars_exactly_where_cuda_does(name):
    """fast.cpp decides at compile time which ops take a 0-dim cpu operand; the decision must be
    the one torchgen's device check makes for CUDA, read from the installed torch's yaml."""
    from kernels.trn import device_check

    refused_on_cuda = name in set(device_check.checked_ops())
    t = torch.randn(4, device=DEV)
    if refused_on_cuda:
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            FAST_BINARY[name](t, torch.tensor(0.5))
    else:
        out = FAST_BINARY[name](t, torch.tensor(0.5))
        assert out.device.type == DEV


def test_leased_operand_aliases_hold_no_device_memory_between_calls():
    """fast.cpp reuses one CPU alias per operand slot and thread instead of allocating two per
    call; between calls it holds nothing, so an operand's memory goes with its last tensor."""
    base = _allocated()
    a, b = torch.randn(512, 512, device=DEV), torch.randn(512, 512, device=DEV)
    c, r = a + b, torch.relu(a)
    a.mul_(b)
    del a, b
    assert _allocated() == base + c.untyped_storage().nbytes() + r.untyped_storage().nbytes()
    del c, r
    assert _allocated() == base


def _operand_cases():
    g = torch.Generator().manual_seed(0)
    m = torch.randn(6, 8, generator=g)
    yield m, torch.randn(6, 8, generator=g)  # contiguous
    yield m.t(), torch.randn(8, 6, generator=g)  # strided
    yield m[2:, 3:], torch.randn(4, 5, generator=g)[:, :]  # storage offsets
    yield m, torch.randn(8, generator=g)  # broadcast (stride 0)
    yield m.to(torch.bfloat16), torch.randn(6, 8, generator=g).to(torch.bfloat16)
    yield torch.arange(12).reshape(3, 4), torch.arange(4)  # int64
    yield torch.randn(6, 8, generator=g), torch.tensor(2.5)  # 0-dim cpu scalar operand
    yield torch.tensor(1.5), torch.randn(3, generator=g)  # 0-dim device operand
    yield torch.empty(0, 4), torch.empty(0, 4)
    yield m, m[0]  # one storage behind both operands


def _same_operands(x, y, device):
    """x and y on `device`, y a view of x where it was one on the CPU; 0-dim cpu y stays cpu."""
    xd = x.clone().to(device)
    if y._base is x or (y._base is not None and y._base is x._base):
        return xd, xd[0]
    return xd, (y if y.dim() == 0 else y.to(device))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "add_", "mul_"])
def test_leased_operand_aliases_follow_each_calls_operands(op):
    """One call after another with new dtypes, shapes, strides and offsets: every result is CPU's
    (the reused alias takes each operand's metadata), in-place ops write the device memory, and
    what CPU refuses (an in-place op whose operands overlap) trn refuses with CPU's error."""
    for x, y in _operand_cases():
        if op == "div" and not x.is_floating_point():
            x = x.float()
        xc, yc = _same_operands(x, y, "cpu")
        xd, yd = _same_operands(x, y, DEV)
        try:
            ref = getattr(xc, op)(yc)
        except RuntimeError as err:
            with pytest.raises(RuntimeError) as on_trn:
                getattr(xd, op)(yd)
            assert str(on_trn.value) == str(err)
            continue
        out = getattr(xd, op)(yd)
        assert out.device.type == DEV and out.dtype == ref.dtype
        torch.testing.assert_close(out.cpu(), ref, equal_nan=True)  # 0/0 in the int case
        if op.endswith("_"):
            assert out.data_ptr() == xd.data_ptr()
            torch.testing.assert_close(xd.cpu(), xc, equal_nan=True)

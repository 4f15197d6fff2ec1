"""The PrivateUse1 contract as PyTorch's reference backend (OpenReg) tests it (issue 12 part 3)."""

from __future__ import annotations

import io
import multiprocessing

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils._python_dispatch import TorchDispatchMode

DEV = "trn"


def test_accelerator_device_capability_lists_the_policy_dtypes():
    cap = torch.accelerator.get_device_capability()
    assert cap == torch.accelerator.get_device_capability(f"{DEV}:1")
    dtypes = cap["supported_dtypes"]
    assert {torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.bool} <= dtypes
    from kernels.trn import trainium

    for dt in trainium.state().dtypes.unsupported:  # float64 & co on every preset
        assert dt not in dtypes
    assert torch.float64 not in dtypes
    # quantized tensors live on trn (QuantizedPrivateUse1), as OpenReg's test_device_capability wants
    assert {torch.qint8, torch.quint8, torch.qint32} <= dtypes
    assert (
        torch.quantize_per_tensor(torch.ones(2, device=DEV), 0.5, 0, torch.qint8).device.type == DEV
    )


def test_an_invalid_device_index_is_cuda_shaped():
    """CUDA: torch.AcceleratorError (a RuntimeError) "invalid device ordinal"; same on every path."""
    n = torch.accelerator.device_count()
    paths = [
        lambda: torch.accelerator.set_device_index(n),
        lambda: torch.empty(1, device=f"{DEV}:{n}"),
        lambda: torch.ones(1).to(f"{DEV}:{n}"),
        lambda: torch.trn.set_device(n),
        lambda: torch.trn.memory_allocated(n),
    ]
    for path in paths:
        with pytest.raises(torch.AcceleratorError, match="invalid device ordinal.*out of range"):
            path()
    assert torch.accelerator.current_device_index() < n  # nothing was changed


def test_init_and_is_initialized():
    torch.trn.init()
    assert torch.trn.is_initialized() and not torch.trn._is_in_bad_fork()


def _init_in_child(q):
    try:
        torch.trn.init()
        q.put(None)
    except Exception as e:
        q.put(f"{type(e).__name__}: {e}")


def test_a_fork_after_init_is_poisoned():
    torch.trn.init()
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_init_in_child, args=(q,))
    p.start()
    p.join(120)
    assert q.get(timeout=5) == (
        f"RuntimeError: Cannot re-initialize {DEV} in forked subprocess. To use {DEV} with "
        "multiprocessing, you must use the 'spawn' start method"
    )


def _spawned_worker(t, q):
    import kernels.trn  # noqa: F401  (a spawned child registers the device like any process)

    q.put((str(t.device), (t @ t.T).sum().item(), torch.trn.is_initialized()))


def test_spawned_processes_receive_trn_tensors():
    t = torch.arange(6.0, device=f"{DEV}:1").reshape(2, 3)
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_spawned_worker, args=(t, q))
    p.start()
    got = q.get(timeout=240)
    p.join(60)
    assert got == (f"{DEV}:1", 83.0, True)  # first use initializes, as on CUDA


def test_rng_offset_is_declined_with_a_reason():
    for call in (torch.trn.get_offset, lambda: torch.trn.set_offset(3)):
        with pytest.raises(RuntimeError, match="does not support (get|set)_offset"):
            call()
    g = torch.Generator(device=DEV)
    with pytest.raises(RuntimeError, match="trn generator does not support set_offset"):
        g.set_offset(1)


def _roundtrip(obj, **load):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load)


def test_tensors_sent_to_other_processes_keep_their_view():
    """torch.multiprocessing's pickler sends a trn tensor by value, and a view arrives as the same
    view over its whole storage (OpenReg test_ipc: `t[::2]` keeps stride 2), on the same device,
    with requires_grad; quantized tensors keep their quantizer."""
    import pickle
    from multiprocessing.reduction import ForkingPickler

    base = torch.arange(24.0, device=f"{DEV}:1").reshape(4, 6)
    for t in (base, base[::2], base[1:, 2:], base.t(), base[0, 0], torch.empty(0, device=DEV)):
        got = pickle.loads(ForkingPickler.dumps(t))
        assert got.device == t.device
        assert (got.size(), got.stride(), got.storage_offset()) == (
            t.size(),
            t.stride(),
            t.storage_offset(),
        )
        assert torch.equal(got.cpu(), t.cpu())
        if t.numel():  # by value: a storage of its own
            assert got.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()
    p = torch.nn.Parameter(torch.randn(3, device=DEV))
    got = pickle.loads(ForkingPickler.dumps(p))
    assert got.requires_grad and got.is_leaf and torch.equal(got.detach().cpu(), p.detach().cpu())
    q = torch.quantize_per_tensor(torch.randn(4, device=DEV), 0.1, 2, torch.quint8)
    got = pickle.loads(ForkingPickler.dumps(q))
    assert (
        got.device.type == DEV
        and got.q_scale() == 0.1
        and torch.equal(got.int_repr().cpu(), q.int_repr().cpu())
    )


def test_serialization_keeps_the_device_and_honours_map_location():
    x = torch.randn(3, 4, device=f"{DEV}:1")
    y = _roundtrip(x)
    assert y.device == x.device and torch.equal(y.cpu(), x.cpu())
    assert _roundtrip(x, map_location="cpu").device.type == "cpu"
    assert _roundtrip(x, map_location=f"{DEV}:0").device == torch.device(f"{DEV}:0")
    assert _roundtrip(x.cpu(), map_location=DEV).device.type == DEV
    assert _roundtrip(x, weights_only=True).device == x.device
    # views keep sharing one storage after the round trip
    base = torch.arange(8.0, device=DEV)
    a, b = _roundtrip([base[:4], base[2:]])
    a[2] = 100.0
    assert b[0].item() == 100.0
    # typed storages (rewrapped on load) come back on the device
    s = _roundtrip(torch.arange(4.0, device=DEV).storage())
    assert s.device.type == DEV and s.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_shallow_copy_through_data_assignment():
    a = torch.zeros(2, device=DEV)
    a.data = torch.ones(3)
    assert a.device.type == "cpu" and a.tolist() == [1.0, 1.0, 1.0]
    a.data = torch.full((2,), 5.0, device=f"{DEV}:1")
    assert a.device == torch.device(f"{DEV}:1") and a.tolist() == [5.0, 5.0]


class _Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def _sdpa(dev, q, k, v, mask, causal):
    q, k, v = (t.detach().to(dev).requires_grad_() for t in (q, k, v))
    m = None if mask is None else mask.detach().to(dev).requires_grad_(mask.is_floating_point())
    with _Ops() as ops:
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal)
        out.backward(torch.linspace(-1, 1, out.numel()).reshape(out.shape).to(dev, out.dtype))
    grads = [t.grad.cpu() for t in (q, k, v)] + (
        [m.grad.cpu()] if m is not None and m.grad is not None else []
    )
    return out.detach().cpu(), grads, ops.names


def test_fused_sdp_choice_is_overrideable():
    q = torch.randn(1, 2, 4, 8, device=DEV)
    assert torch._fused_sdp_choice(q, q, q) == SDPBackend.OVERRIDEABLE.value
    assert torch._fused_sdp_choice(q, q, q, dropout_p=0.5) == SDPBackend.MATH.value


@pytest.mark.parametrize("case", ["plain", "causal", "bias", "broadcast_bias", "bool_mask", "long"])
def test_fused_attention_matches_the_math_path(case):
    torch.manual_seed(0)
    n_k = 300 if case == "long" else 9  # 300 keys: three blocks of the online softmax
    q, k, v = torch.randn(2, 3, 7, 16), torch.randn(2, 3, n_k, 16), torch.randn(2, 3, n_k, 8)
    mask = {
        "bias": torch.randn(2, 3, 7, n_k),
        "broadcast_bias": torch.randn(1, 1, 7, n_k),
        "bool_mask": torch.rand(7, n_k) > 0.3,
    }.get(case)
    if case == "bool_mask":
        mask[:, 0] = True
    causal = case == "causal"
    with sdpa_kernel([SDPBackend.MATH]):
        ref_out, ref_grads, _ = _sdpa("cpu", q, k, v, mask, causal)
    out, grads, ops = _sdpa(DEV, q, k, v, mask, causal)
    assert "_scaled_dot_product_fused_attention_overrideable" in ops
    assert "_scaled_dot_product_fused_attention_overrideable_backward" in ops
    torch.testing.assert_close(out, ref_out)
    assert len(grads) == len(ref_grads)
    for g, r in zip(grads, ref_grads):
        torch.testing.assert_close(g, r)


def test_fused_attention_in_bfloat16_and_opt_out():
    q = torch.randn(1, 2, 5, 8)
    with sdpa_kernel([SDPBackend.MATH]):
        ref, _, _ = _sdpa("cpu", q.float(), q.float(), q.float(), None, False)
        _, _, math_ops = _sdpa(DEV, q, q, q, None, False)  # the user's choice is honoured
    assert "_scaled_dot_product_fused_attention_overrideable" not in math_ops
    out, _, ops = _sdpa(DEV, q.bfloat16(), q.bfloat16(), q.bfloat16(), None, False)
    assert out.dtype == torch.bfloat16 and "_scaled_dot_product_fused_attention_overrideable" in ops
    torch.testing.assert_close(out.float(), ref, atol=2e-2, rtol=2e-2)

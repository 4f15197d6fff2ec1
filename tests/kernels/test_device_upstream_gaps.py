"""Where upstream special-cases devices by name or by "is it CUDA?" and trn must answer like the
device it emulates (kernels/trn/upstream_gaps.py, kernels/csrc/accumulate.cpp, fallback.cpp's
device-gated composites), and the autograd thread choice made at registration."""

import torch

import kernels.trn  # noqa: F401


def test_dlpack_round_trip_shares_trn_memory():
    t = torch.arange(6.0, device="trn").reshape(2, 3)
    from torch.utils.dlpack import DLDeviceType

    assert t.__dlpack_device__() == (DLDeviceType.kDLExtDev, 0)
    u = torch.from_dlpack(t)
    assert u.device == t.device and u.data_ptr() == t.data_ptr()
    u[0, 0] = 7.0
    assert t[0, 0].item() == 7.0
    # other devices keep upstream's answer
    assert torch.zeros(2).__dlpack_device__() == (DLDeviceType.kDLCPU, 0)


def test_linear_cross_entropy_accumulates_bf16_in_float32_like_cpu():
    from torch.nn.modules.linear_cross_entropy_options import LinearCrossEntropyOptions as L

    trn, cpu = torch.device("trn"), torch.device("cpu")
    assert L._resolve_auto_acc_dtype(torch.bfloat16, trn) == torch.float32
    assert L._resolve_auto_acc_dtype(torch.float32, trn) is None
    assert L._resolve_auto_acc_dtype(torch.bfloat16, cpu) == torch.float32
    torch.manual_seed(0)
    x, w = torch.randn(64, 32).bfloat16(), torch.randn(100, 32).bfloat16()
    y = torch.randint(0, 100, (64,))
    opts = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=16)
    f = torch.nn.functional.linear_cross_entropy
    expected = f(x, w, y, options=opts)
    got = f(x.to("trn"), w.to("trn"), y.to("trn"), options=opts)
    torch.testing.assert_close(got.cpu(), expected)


def test_batch_norm_of_an_empty_input_allocates_no_float64():
    # _batch_norm_impl_index's empty branch asks toAccumulateType(float, is_cuda=False) = float64
    x = torch.zeros(0, 3, device="trn", requires_grad=True)
    w = torch.ones(3, device="trn", requires_grad=True)
    for training in (True, False):
        out = torch.nn.functional.batch_norm(
            x, torch.zeros(3, device="trn"), torch.ones(3, device="trn"), w, None, training
        )
        assert out.shape == (0, 3) and out.dtype == torch.float32 and out.device.type == "trn"
        out.sum().backward()
    # a non-empty input still goes through upstream's composite, gradients included
    torch.manual_seed(0)
    xc = torch.randn(4, 3, 5, requires_grad=True)
    xt = xc.detach().to("trn").requires_grad_()
    for t in (xc, xt):
        torch.nn.functional.batch_norm(t, None, None, training=True).pow(2).sum().backward()
    torch.testing.assert_close(xt.grad.cpu(), xc.grad)


def test_mode_out_runs_on_trn():
    x = torch.tensor([1.0, 2.0, 2.0, 3.0], device="trn")
    values, indices = torch.empty(0, device="trn"), torch.empty(0, dtype=torch.long, device="trn")
    torch.mode(x, out=(values, indices))
    assert values.item() == 2.0 and indices.item() in (1, 2) and values.device.type == "trn"


def test_backward_runs_on_the_calling_thread():
    import threading

    assert not torch._C._is_multithreading_enabled()
    seen = []
    w = torch.ones(3, device="trn", requires_grad=True)
    w.register_hook(lambda g: seen.append(threading.get_ident()))
    (w * 2).sum().backward()
    assert seen == [threading.get_ident()]
    torch.testing.assert_close(w.grad.cpu(), torch.full((3,), 2.0))


def test_quantized_tensors_live_on_trn_with_their_quantizer_and_match_cpu():
    """QuantizedCPU results become QuantizedPrivateUse1 tensors (QTensorImpl over trn memory, the
    quantizer kept), as OpenReg's test_quantize expects; they were once adopted as strided trn
    tensors labelled qint8 with is_quantized False. Quantized ops run QuantizedCPU's kernels."""
    import warnings

    warnings.simplefilter("ignore", UserWarning)  # torch 2.13 deprecates quantized creation
    x = torch.randn(3, 4)
    xt = x.to("trn")
    scales, zeros = torch.tensor([0.1, 0.2, 0.3]), torch.tensor([0, 1, 2])
    pairs = [
        (
            torch.quantize_per_tensor(xt, 0.1, 10, torch.qint8),
            torch.quantize_per_tensor(x, 0.1, 10, torch.qint8),
        ),
        (
            torch.quantize_per_channel(xt, scales.to("trn"), zeros.to("trn"), 0, torch.quint8),
            torch.quantize_per_channel(x, scales, zeros, 0, torch.quint8),
        ),
        (
            torch.quantize_per_tensor_dynamic(xt, torch.quint8, False),
            torch.quantize_per_tensor_dynamic(x, torch.quint8, False),
        ),
    ]
    for q, ref in pairs:
        assert q.device == torch.device("trn:0") and q.dtype == ref.dtype and q.is_quantized
        assert q.qscheme() == ref.qscheme()
        assert torch.equal(q.int_repr().cpu(), ref.int_repr())
        torch.testing.assert_close(q.dequantize().cpu(), ref.dequantize())
        assert q.dequantize().device.type == "trn"
        c = q.cpu()  # a copy on cpu, quantizer kept
        assert (
            c.device.type == "cpu" and c.is_quantized and torch.equal(c.int_repr(), ref.int_repr())
        )
        back = ref.to("trn")  # and back
        assert back.device.type == "trn" and torch.equal(back.int_repr().cpu(), ref.int_repr())
    assert "quantization_scheme=torch.per_tensor_affine" in repr(pairs[0][0])
    assert (xt + 1).device.type == "trn"  # the device stays usable


def test_quantizer_metadata_and_sub_byte_quantized_tensors_cross_devices():
    """q_per_channel_scales is float64 on cpu/CUDA; trn has no float64 and hands the scales out
    in float32 (the repr of a per-channel tensor prints them). quint4x2 packs two values a byte
    and CPU's copy kernel has no case for it: cpu <-> trn copies the packed bytes."""
    import warnings

    warnings.simplefilter("ignore", UserWarning)  # torch 2.13 deprecates quantized creation
    x = torch.randn(3, 4)
    scales, zeros = torch.tensor([0.1, 0.2, 0.3]), torch.tensor([0, 1, 2])
    ref = torch.quantize_per_channel(x, scales, zeros, 0, torch.quint8)
    q = ref.to("trn")
    s = q.q_per_channel_scales()
    assert s.device.type == "trn" and s.dtype == torch.float32
    assert torch.equal(s.cpu(), ref.q_per_channel_scales().float())
    assert torch.equal(q.q_per_channel_zero_points().cpu(), ref.q_per_channel_zero_points())
    assert "per_channel_affine" in repr(q)
    ref4 = torch.quantize_per_tensor(torch.rand(9), 0.1, 0, torch.quint4x2)
    t4 = ref4.to("trn:1")
    assert t4.device == torch.device("trn:1") and t4.dtype == torch.quint4x2 and t4.q_scale() == 0.1
    back = t4.cpu()
    assert back.dtype == torch.quint4x2 and torch.equal(back.int_repr(), ref4.int_repr())
    assert torch.equal(t4.int_repr().cpu(), ref4.int_repr())
    torch.testing.assert_close(t4.dequantize().cpu(), ref4.dequantize())
    assert torch.equal(t4.to("trn:0").cpu().int_repr(), ref4.int_repr())


def test_indices_on_another_trn_device_answer_like_cuda():
    """CUDA: x[i] with i on another device is an IndexError (index's meta check); index_put_
    moves such indices to x's device. Other operands on another device stay a mismatch."""
    import pytest

    x = torch.arange(6.0, device="trn:1")
    i = torch.tensor([0, 2], device="trn:0")
    with pytest.raises(
        IndexError,
        match=r"indices should be either on cpu or on the same device "
        r"as the indexed tensor \(trn:1\)",
    ):
        x[i]
    with pytest.raises(IndexError, match="same device as the indexed tensor"):
        x[torch.ones(6, dtype=torch.bool, device="trn:0")]
    assert x[i.cpu()].tolist() == [0.0, 2.0] and x[i.to("trn:1")].device == x.device
    x[i] = torch.tensor(7.0, device="trn:1")
    x.index_put_((i,), torch.ones(2, device="trn:1"), accumulate=True)
    assert x.cpu().tolist() == [8.0, 1.0, 8.0, 3.0, 4.0, 5.0]
    with pytest.raises(RuntimeError, match="same device"):
        x.index_put_((i.to("trn:1"),), torch.ones(2, device="trn:0"))
    with pytest.raises(RuntimeError, match="same device"):
        x.index_select(0, i)


def _factory_in_child(t, q):
    try:
        torch.empty(1, device="trn")
        q.put("no error")
    except Exception as e:
        q.put(f"{type(e).__name__}: {e}")
    q.put((t + 1).sum().item())  # inherited host-backed tensors keep working


def test_a_factory_in_a_fork_after_first_use_raises_like_cuda():
    """Upstream's TestDeviceLazyInit.test_fork_poison_on_lazy_init (test_utils.py): after the
    first trn factory call, a forked child's factory call raises CUDA's error."""
    import multiprocessing

    t = torch.ones(3, device="trn")  # first use initializes (torch's device_lazy_init)
    assert torch.trn.is_initialized()
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_factory_in_child, args=(t, q))
    p.start()
    err, total = q.get(timeout=120), q.get(timeout=30)
    p.join(60)
    assert err == (
        "RuntimeError: Cannot re-initialize trn in forked subprocess. To use trn with "
        "multiprocessing, you must use the 'spawn' start method"
    )
    assert total == 6.0
    assert torch.empty(1, device="trn").device.type == "trn"  # the parent is unaffected


def test_a_cpu_output_next_to_trn_inputs_is_a_device_mismatch_even_0_dim():
    """CUDA allows cpu 0-dim tensors as scalar *inputs* only; an out= or in-place cpu tensor
    next to device inputs raises there, and on trn (it was written to silently)."""
    import pytest

    a = torch.randn(5, 4, device="trn")
    for call in (
        lambda: torch.add(a[0, 0], a[0, 0], out=torch.tensor(0.0)),
        lambda: torch.sum(a, dim=(0, 1), out=torch.tensor(0.0)),
        lambda: torch.tensor(1.0).add_(a[0, 0]),
        lambda: torch.mul(a, a, out=torch.empty(5, 4)),
    ):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            call()
    # cpu 0-dim inputs stay scalar operands, as on CUDA
    assert (a + torch.tensor(2.0)).device.type == "trn"
    assert torch.where(a > 0, a, torch.tensor(0.0)).device.type == "trn"


def test_cuda_device_checked_ops_come_from_the_installed_yaml():
    """The ops whose CUDA kernels check devices (torchgen's `check_and_update_common_device`),
    derived from torch's own native_functions.yaml: its own CUDA kernel or its structured
    delegate's, minus `device_check: NoCheck`."""
    from kernels.trn import device_check

    names = set(device_check.checked_ops())
    for checked in (
        "index_select",
        "clamp.Tensor",
        "searchsorted.Tensor",
        "threshold_backward",
        "take",
        "gather",
    ):
        assert checked in names, checked
    for free in (
        "add.Tensor",
        "mul.Tensor",
        "where.self",
        "lerp.Tensor",
        "index.Tensor",
        "copy_",
        "stack",
    ):
        assert free not in names, free
    entries = [
        {"func": "a(Tensor self) -> Tensor", "dispatch": {"CPU, CUDA": "a_impl"}},
        {"func": "b(Tensor self) -> Tensor", "device_check": "NoCheck", "dispatch": {"CUDA": "b"}},
        {"func": "c(Tensor self) -> Tensor", "dispatch": {"CompositeExplicitAutograd": "c"}},
        {"func": "d.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "dispatch": {"CUDA": "d"}},
        {"func": "d(Tensor self) -> Tensor", "structured_delegate": "d.out"},
        {"func": "e(Tensor self) -> Tensor", "dispatch": {"SparseCUDA": "e"}},
    ]
    assert device_check.derive(entries) == ["a", "d", "d.out"]


def test_cpu_0_dim_operands_are_refused_where_cudas_device_check_refuses_them():
    """A 0-dim cpu tensor beside trn tensors: a scalar operand for ops CUDA takes it in, the
    device-mismatch error for ops whose CUDA kernel checks devices (it was accepted on trn)."""
    import pytest

    a = torch.randn(5, 4, device="trn")
    refused = (
        lambda: a.index_select(0, torch.tensor(1)),
        lambda: torch.clamp(a, min=torch.tensor(0.0)),
        lambda: torch.searchsorted(a[0].sort().values, torch.tensor(0.5)),
        lambda: torch.take(a, torch.tensor(3)),
    )
    for call in refused:
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            call()
    c = a.cpu()
    taken = (  # (trn call, cpu reference)
        (
            lambda: torch.lerp(a, a * 2, torch.tensor(0.5)),
            lambda: torch.lerp(c, c * 2, torch.tensor(0.5)),
        ),
        (lambda: a[torch.tensor([0, 2])], lambda: c[torch.tensor([0, 2])]),
        (
            lambda: a.index_select(0, torch.tensor([1]).to("trn")),
            lambda: c.index_select(0, torch.tensor([1])),
        ),
        (
            lambda: a.masked_fill(a > 0, torch.tensor(1.0)),
            lambda: c.masked_fill(c > 0, torch.tensor(1.0)),
        ),
    )
    for on_trn, on_cpu in taken:
        out = on_trn()
        assert out.device.type == "trn"
        torch.testing.assert_close(out.cpu(), on_cpu())


def test_cuda_device_checked_list_is_cached_per_torch_build(tmp_path, monkeypatch):
    from kernels.trn import device_check

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = device_check.checked_ops()
    (cache,) = (tmp_path / "hwneutral").glob("cuda-device-checked-*.txt")
    assert cache.read_text().split() == first
    cache.write_text("only_this\n")  # read back as it is: no second parse
    assert device_check.checked_ops() == ["only_this"]


def _sparse_example():
    i = torch.tensor([[0, 1, 1, 3], [2, 0, 2, 1]])
    v = torch.tensor([3.0, 4.0, 5.0, -1.0])
    return torch.sparse_coo_tensor(i, v, (4, 3))


def test_sparse_coo_tensors_live_on_trn():
    # upstream test_embedding's sparse=True variants: SparsePrivateUse1 had no kernels at all
    # ("Could not run '_sparse_coo_tensor_with_dims_and_tensors' ... 'Sparsetrn' backend")
    s = _sparse_example()
    t = s.to("trn")
    assert t.device.type == "trn" and t.layout == torch.sparse_coo and t.shape == s.shape
    assert t._indices().device.type == "trn" and t._values().device.type == "trn"
    assert t._nnz() == 4 and t.sparse_dim() == 2 and t.dense_dim() == 0
    assert not t.is_coalesced() and t.coalesce().is_coalesced()
    torch.testing.assert_close(t.to_dense().cpu(), s.to_dense())
    assert t.to_dense().device.type == "trn"
    back = t.cpu()
    assert back.is_sparse and back.device.type == "cpu"
    torch.testing.assert_close(back.to_dense(), s.to_dense())
    made = torch.sparse_coo_tensor(s._indices(), s._values(), (4, 3), device="trn")
    assert made.device.type == "trn" and made.is_sparse
    from_trn = torch.sparse_coo_tensor(s._indices().to("trn"), s._values().to("trn"), (4, 3))
    assert from_trn.device.type == "trn"
    torch.testing.assert_close(from_trn.to_dense().cpu(), s.to_dense())


def test_sparse_trn_ops_in_place_and_mixed_with_dense():
    s = _sparse_example()
    t = s.to("trn")
    d = torch.ones(4, 3)
    dt = d.to("trn")
    dt.add_(t)  # dense += sparse: the SparseCPU kernel writes the trn dense tensor
    torch.testing.assert_close(dt.cpu(), d + s.to_dense())
    torch.testing.assert_close((t + t).to_dense().cpu(), (s + s).to_dense())
    torch.testing.assert_close((t * 2).to_dense().cpu(), (s * 2).to_dense())
    c = t.clone()
    assert c.device.type == "trn" and c.is_sparse
    c.zero_()  # new (empty) indices/values given to the trn tensor in place
    assert c._nnz() == 0 and c._indices().device.type == "trn"
    assert torch.count_nonzero(c.to_dense()).item() == 0
    acc = t.clone()
    acc.add_(t)  # sparse += sparse: the result's new indices/values come back to the trn tensor
    torch.testing.assert_close(acc.to_dense().cpu(), 2 * s.to_dense())


def test_sparse_embedding_gradients_on_trn_match_cpu():
    torch.manual_seed(0)
    weight = torch.randn(10, 4)
    idx = torch.tensor([[1, 2, 2], [9, 0, 1]])
    offsets = torch.tensor([0, 2, 3])
    grads = {}
    for device in ("cpu", "trn"):
        w = weight.clone().to(device).requires_grad_()
        emb = torch.nn.functional.embedding(idx.to(device), w, sparse=True)
        bag = torch.nn.functional.embedding_bag(
            idx.flatten().to(device), w, offsets.to(device), mode="sum", sparse=True
        )
        (emb.sum() + bag.pow(2).sum()).backward()
        assert w.grad.is_sparse and w.grad.device.type == device
        grads[device] = w.grad.coalesce().to_dense()
        # an SGD step applies the sparse gradient to the dense weight on the device
        opt = torch.optim.SGD([w], lr=0.1)
        opt.step()
        grads[device + "_w"] = w.detach()
    torch.testing.assert_close(grads["trn"].cpu(), grads["cpu"])
    torch.testing.assert_close(grads["trn_w"].cpu(), grads["cpu_w"])


def test_ldexp_of_float16_is_computed_like_cpu_not_through_a_float16_power():
    # upstream test_binary_ufuncs::test_ldexp: ldexp's composite is fused only for is_cpu();
    # elsewhere it computed pow(2, e) in float16, giving [-0., inf] instead of [-2**-24, 2**10]
    m = torch.tensor([-2, 2**-10], dtype=torch.half)
    e = torch.tensor([-25, 20])
    expected = torch.ldexp(m, e)
    assert expected.tolist() == [-(2**-24), 2**10]
    got = torch.ldexp(m.to("trn"), e.to("trn"))
    assert got.device.type == "trn" and got.dtype == torch.half
    torch.testing.assert_close(got.cpu(), expected, atol=0, rtol=0)
    out = torch.empty(2, dtype=torch.half, device="trn")
    torch.ldexp(m.to("trn"), e.to("trn"), out=out)
    torch.testing.assert_close(out.cpu(), expected, atol=0, rtol=0)
    inplace = m.to("trn")
    inplace.ldexp_(e.to("trn"))
    torch.testing.assert_close(inplace.cpu(), expected, atol=0, rtol=0)

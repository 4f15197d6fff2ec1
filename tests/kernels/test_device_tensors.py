"""Tensors on trn: factories, transfers, aliasing, out=, printing, copy/serialise, pinning,
multiple devices, autograd and module training."""

import copy
import io

import pytest
import torch

DEV = torch.device("trn", 0)


def test_factories_land_on_the_requested_device():
    for spec, idx in (("trn", 0), ("trn:3", 3), (torch.device("trn", 5), 5)):
        for t in (
            torch.empty(2, 3, device=spec),
            torch.zeros(4, device=spec),
            torch.ones(2, device=spec),
            torch.full((2,), 7.0, device=spec),
            torch.arange(5, device=spec),
            torch.randn(3, device=spec),
            torch.eye(3, device=spec),
            torch.tensor([1, 2], device=spec),
        ):
            assert t.device == torch.device("trn", idx)
    assert torch.zeros(3, device="trn:3").cpu().tolist() == [0, 0, 0]
    assert torch.full((2,), 7.0, device="trn").cpu().tolist() == [7.0, 7.0]


def test_to_cpu_trn_round_trip_keeps_values_and_dtype():
    x = torch.randn(5, 7)
    for dst in ("trn", "trn:2"):
        y = x.to(dst)
        assert y.is_trn and y.dtype == torch.float32
        torch.testing.assert_close(y.cpu(), x, rtol=0, atol=0)
    assert x.trn().device == DEV and x.trn(4).device == torch.device("trn", 4)
    assert x.to("trn", torch.bfloat16).dtype == torch.bfloat16
    assert torch.equal(x.trn().to(torch.int32).cpu(), x.to(torch.int32))


def test_views_alias_device_memory():
    a = torch.zeros(4, 4, device="trn")
    col, row, t = a[:, 1], a[2], a.t()
    col.fill_(1.0)
    row.add_(2.0)
    t[0, 3] = 5.0  # a[3, 0]
    b = a.view(16)
    b[15] = 9.0
    ref = torch.zeros(4, 4)
    ref[:, 1] = 1
    ref[2] += 2
    ref[3, 0] = 5
    ref[3, 3] = 9
    assert torch.equal(a.cpu(), ref)
    assert b.data_ptr() == a.data_ptr() and col.data_ptr() == a.data_ptr() + 4
    assert torch.equal(a.unfold(0, 2, 1).cpu(), ref.unfold(0, 2, 1))  # view op through the fallback
    u = a.unfold(0, 2, 2)
    u.zero_()
    assert a.abs().sum().item() == 0


def test_view_keeps_storage_alive():
    v = torch.arange(10.0, device="trn")[2:5]
    import gc

    gc.collect()
    assert v.cpu().tolist() == [2.0, 3.0, 4.0]


def test_out_and_in_place_with_resize():
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    out = torch.empty(0, device="trn")
    r = torch.add(a.trn(), b.trn(), out=out)
    assert r is out and out.shape == (3, 4)
    torch.testing.assert_close(out.cpu(), a + b)
    x = a.trn()
    ptr = x.data_ptr()
    x.mul_(2).add_(b.trn())
    assert x.data_ptr() == ptr
    torch.testing.assert_close(x.cpu(), a * 2 + b)
    s = torch.empty(0, device="trn:1")
    torch.sum(a.to("trn:1"), dim=0, out=s)
    assert s.device == torch.device("trn", 1)
    torch.testing.assert_close(s.cpu(), a.sum(0))


def test_conj_and_neg_views():
    z = torch.randn(3, dtype=torch.complex64)
    zt = z.trn()
    c = zt.conj()
    assert c.is_conj()
    torch.testing.assert_close(c.cpu(), z.conj())
    torch.testing.assert_close((c * 2).cpu(), z.conj() * 2)
    torch.testing.assert_close(c.clone().cpu().resolve_conj(), z.conj().resolve_conj())
    n = torch._neg_view(zt)
    torch.testing.assert_close(n.cpu().resolve_neg(), -z)


def test_printing_integer_tensors():
    assert repr(torch.tensor([1, 2], device="trn:2")) == "tensor([1, 2], device='trn:2')"
    assert "device='trn:0'" in str(torch.zeros(2, 2, dtype=torch.int64, device="trn"))


def test_printing_float_tensors():
    assert (
        repr(torch.tensor([1.0, 2.5], device="trn:2")) == "tensor([1.0000, 2.5000], device='trn:2')"
    )


def test_deepcopy_is_a_distinct_device_copy():
    x = torch.randn(4, device="trn:1")
    y = copy.deepcopy(x)
    assert y.device == x.device and y.data_ptr() != x.data_ptr()
    assert torch.equal(y.cpu(), x.cpu())


def test_save_and_load_with_and_without_map_location():
    x = torch.randn(3, 3).to("trn:2")
    buf = io.BytesIO()
    torch.save({"x": x, "v": x[1]}, buf)
    buf.seek(0)
    back = torch.load(buf)
    assert back["x"].device == torch.device("trn", 2)
    assert torch.equal(back["x"].cpu(), x.cpu())
    assert back["v"].data_ptr() == back["x"].data_ptr() + 3 * 4  # shared storage survives
    buf.seek(0)
    cpu = torch.load(buf, map_location="cpu")
    assert cpu["x"].device.type == "cpu" and torch.equal(cpu["x"], x.cpu())
    buf.seek(0)
    moved = torch.load(buf, map_location="trn:5")
    assert moved["x"].device == torch.device("trn", 5)


def test_pin_memory_and_non_blocking_copies():
    x = torch.randn(64)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned()
    y = p.to("trn", non_blocking=True)
    torch.trn.synchronize()
    assert torch.equal(y.cpu(), x)
    back = torch.empty(64).pin_memory()
    back.copy_(y, non_blocking=True)
    torch.accelerator.synchronize()
    assert torch.equal(back, x)
    # any pointer into pinned memory is pinned, as on CUDA: slices of the tensor and the storage
    assert p[10:].is_pinned() and p.untyped_storage()[8:].is_pinned()
    assert not torch.randn(64)[10:].is_pinned()


def test_eight_devices_and_cross_device_copies():
    assert torch.trn.device_count() == 8
    x = torch.arange(6.0).reshape(2, 3)
    cur = x.to("trn:0")
    for i in range(1, 8):
        cur = cur.to(f"trn:{i}") + 1
        assert cur.device == torch.device("trn", i)
    assert torch.equal(cur.cpu(), x + 7)
    dst = torch.empty(2, 3, device="trn:6")
    dst.copy_(cur)
    assert torch.equal(dst.cpu(), x + 7)


def test_mixed_devices_raise_a_clear_error():
    a, b = torch.ones(2, device="trn:0"), torch.ones(2, device="trn:1")
    with pytest.raises(RuntimeError, match="same device.*trn:0 and trn:1"):
        a + b
    with pytest.raises(RuntimeError, match="same device.*cpu"):
        a + torch.ones(2)
    assert (a + torch.tensor(2.0)).cpu().tolist() == [
        3.0,
        3.0,
    ]  # 0-dim cpu scalars are fine, as on CUDA
    with pytest.raises(torch.AcceleratorError, match="invalid device ordinal: device index 8"):
        torch.empty(1, device="trn:8")


@pytest.mark.parametrize("idx", range(8))
def test_autograd_on_every_device(idx):
    dev = f"trn:{idx}"
    w = torch.randn(4, 3, device=dev, requires_grad=True)
    x = torch.randn(5, 4, device=dev)
    loss = (x @ w).tanh().pow(2).sum()
    loss.backward()
    assert w.grad.device == torch.device("trn", idx)
    wc = w.detach().cpu().requires_grad_()
    (x.cpu() @ wc).tanh().pow(2).sum().backward()
    torch.testing.assert_close(w.grad.cpu(), wc.grad)


@pytest.mark.parametrize(
    "opt",
    [
        lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, foreach=False),
        lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, foreach=True),
        lambda p: torch.optim.Adam(p, lr=0.01, foreach=True),
        lambda p: torch.optim.AdamW(p, lr=0.01, fused=True),
        lambda p: torch.optim.Adam(p, lr=0.01, fused=True),
    ],
    ids=["sgd", "sgd-foreach", "adam-foreach", "adamw-fused", "adam-fused"],
)
def test_module_to_trn_and_optimizer_step_match_cpu(opt):
    torch.manual_seed(0)
    cpu = torch.nn.Sequential(
        torch.nn.Linear(8, 16), torch.nn.LayerNorm(16), torch.nn.ReLU(), torch.nn.Linear(16, 2)
    )
    dev = copy.deepcopy(cpu).to("trn")
    assert all(p.device == DEV for p in dev.parameters())
    x, y = torch.randn(4, 8), torch.randn(4, 2)
    for model, xx, yy in ((cpu, x, y), (dev, x.trn(), y.trn())):
        o = opt(model.parameters())
        for _ in range(3):
            o.zero_grad()
            torch.nn.functional.mse_loss(model(xx), yy).backward()
            o.step()
    for pc, pd in zip(cpu.parameters(), dev.parameters()):
        torch.testing.assert_close(pd.cpu(), pc, rtol=1e-5, atol=1e-6)


def test_module_trn_method_and_storage():
    m = torch.nn.Linear(2, 2).trn()
    assert m.weight.is_trn
    s = torch.UntypedStorage(16, device="trn")
    assert s.device == DEV and s.is_trn
    s.resize_(32)
    assert s.nbytes() == 32

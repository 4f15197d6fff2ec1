"""The trn runtime through torch's generic APIs: torch.accelerator, streams/events, memory
statistics, RNG, autocast, GradScaler and torch.compile."""

import pytest
import torch


def test_accelerator_runtime_calls():
    acc = torch.accelerator.current_accelerator()
    assert acc.type == "trn" and torch.accelerator.is_available()
    assert torch.accelerator.device_count() == torch.trn.device_count() >= 2
    prev = torch.accelerator.current_device_index()
    try:
        torch.accelerator.set_device_index(1)
        assert torch.accelerator.current_device_index() == 1 == torch.trn.current_device()
        assert torch.empty(1, device="trn").device == torch.device("trn", 1)  # "trn" means current
        with torch.accelerator.device_index(0):
            assert torch.accelerator.current_device_index() == 0
        assert torch.accelerator.current_device_index() == 1
        with torch.trn.device(3):
            assert torch.trn.current_device() == 3
        torch.accelerator.synchronize()
        torch.accelerator.synchronize(2)
    finally:
        torch.accelerator.set_device_index(prev)
    with pytest.raises(torch.AcceleratorError, match="invalid device ordinal"):
        torch.accelerator.set_device_index(torch.trn.device_count())


def test_streams_are_distinct_and_settable():
    s0 = torch.accelerator.current_stream()
    assert s0.device.type == "trn" and s0.stream_id == 0
    s1, s2 = torch.Stream(device="trn"), torch.trn.Stream()
    assert len({s0.stream_id, s1.stream_id, s2.stream_id}) == 3
    torch.accelerator.set_stream(s1)
    try:
        assert torch.accelerator.current_stream() == s1
        with torch.trn.stream(s2):
            assert torch.trn.current_stream() == s2
        assert torch.accelerator.current_stream() == s1
    finally:
        torch.accelerator.set_stream(s0)
    s3 = torch.Stream(device="trn:2")
    assert s3.device_index == 2 and s3.query()
    s3.synchronize()


def test_events_record_wait_query_and_time():
    s = torch.Stream(device="trn")
    start, end = (
        torch.Event(device="trn", enable_timing=True),
        torch.Event(device="trn", enable_timing=True),
    )
    start.record(s)
    x = torch.randn(256, 256, device="trn")
    for _ in range(5):
        x = x @ x / 256
    end.record(s)
    other = torch.Stream(device="trn")
    other.wait_event(end)
    end.synchronize()
    assert start.query() and end.query()
    assert start.elapsed_time(end) > 0
    with pytest.raises(ValueError, match="enable_timing"):
        a, b = torch.Event(device="trn"), torch.Event(device="trn")
        a.record(), b.record()
        a.elapsed_time(b)


def test_memory_stats_track_real_allocations():
    dev = 4
    torch.accelerator.reset_peak_memory_stats(dev)
    before = torch.accelerator.memory_allocated(dev)
    free0, total = torch.accelerator.get_memory_info(dev)
    x = torch.empty(1 << 20, dtype=torch.uint8, device=f"trn:{dev}")
    assert torch.accelerator.memory_allocated(dev) == before + (1 << 20)
    free1, total1 = torch.accelerator.get_memory_info(dev)
    assert total1 == total and free0 - free1 == 1 << 20
    y = x.float()  # output of a CPU kernel, adopted as device memory: counted too
    assert torch.accelerator.memory_allocated(dev) == before + 5 * (1 << 20)
    del x, y
    assert torch.accelerator.memory_allocated(dev) == before
    assert torch.accelerator.max_memory_allocated(dev) >= before + 5 * (1 << 20)
    stats = torch.accelerator.memory_stats(dev)
    assert stats["allocation.all.allocated"] >= 2
    assert torch.trn.memory_allocated(dev) == before


def test_capacity_hook_raises_out_of_memory():
    dev = 7
    old = torch.trn.capacity(dev)
    torch.trn.set_capacity(dev, 4096)
    try:
        torch.empty(1024, dtype=torch.uint8, device=f"trn:{dev}")
        with pytest.raises(torch.OutOfMemoryError, match="trn:7 out of memory"):
            torch.empty(8192, dtype=torch.uint8, device=f"trn:{dev}")
    finally:
        torch.trn.set_capacity(dev, old)


def test_manual_seed_reproduces_and_draws_from_the_trn_generator():
    torch.manual_seed(123)
    a = torch.randn(8, device="trn")
    torch.manual_seed(123)
    b = torch.randn(8, device="trn")
    assert torch.equal(a.cpu(), b.cpu())
    # The trn default generator is separate from the CPU one: drawing on trn leaves CPU state alone.
    torch.manual_seed(7)
    cpu_first = torch.rand(4)
    torch.manual_seed(7)
    torch.rand(100, device="trn")
    assert torch.equal(torch.rand(4), cpu_first)
    state = torch.trn.get_rng_state()
    u = torch.rand(5, device="trn")
    torch.trn.set_rng_state(state)
    assert torch.equal(torch.rand(5, device="trn").cpu(), u.cpu())


def test_generator_on_trn():
    g = torch.Generator(device="trn")
    assert g.device.type == "trn"
    g.manual_seed(42)
    a = torch.randn(6, device="trn", generator=g)
    g.manual_seed(42)
    b = torch.randn(6, device="trn", generator=g)
    assert torch.equal(a.cpu(), b.cpu())
    assert torch.Generator(device="trn:3").device == torch.device("trn", 3)
    d = torch.empty(1000, device="trn").uniform_(generator=g.manual_seed(1))
    assert 0 <= d.min().item() and d.max().item() < 1


def test_autocast_lowers_matmuls_and_keeps_reductions_in_float32():
    assert torch.bfloat16 in torch.trn.get_amp_supported_dtype() and torch.trn.is_bf16_supported()
    a, b = torch.randn(8, 8, device="trn"), torch.randn(8, 8, device="trn")
    with torch.amp.autocast("trn", dtype=torch.bfloat16):
        mm = a @ b
        lin = torch.nn.functional.linear(a, b)
        sm = torch.softmax(mm, dim=-1)
        added = a + b
    assert mm.dtype == torch.bfloat16 and lin.dtype == torch.bfloat16
    assert sm.dtype == torch.float32 and added.dtype == torch.float32
    torch.testing.assert_close(mm.float().cpu(), (a.cpu().bfloat16() @ b.cpu().bfloat16()).float())
    assert (a @ b).dtype == torch.float32  # outside the region


def test_autocast_backward_reaches_float32_leaves():
    w = torch.randn(4, 4, device="trn", requires_grad=True)
    with torch.amp.autocast("trn"):
        out = (torch.randn(2, 4, device="trn") @ w).sum()
    out.backward()
    assert w.grad.dtype == torch.float32 and w.grad.device.type == "trn"


def _scaler_step(bad: bool):
    model = torch.nn.Linear(4, 1).to("trn")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("trn", init_scale=1024.0)
    before = [p.detach().cpu().clone() for p in model.parameters()]
    with torch.amp.autocast("trn"):
        loss = model(torch.randn(3, 4, device="trn")).float().sum()
    scaler.scale(loss).backward()
    if bad:
        model.weight.grad[0, 0] = float("inf")
    scaler.step(opt)
    scaler.update()
    after = [p.detach().cpu() for p in model.parameters()]
    return before, after, scaler.get_scale()


def test_grad_scaler_steps_on_finite_grads():
    before, after, scale = _scaler_step(bad=False)
    assert any(not torch.equal(b, a) for b, a in zip(before, after))
    assert scale == 1024.0


def test_grad_scaler_skips_step_on_inf_and_backs_off():
    before, after, scale = _scaler_step(bad=True)
    assert all(torch.equal(b, a) for b, a in zip(before, after))
    assert scale == 512.0


def test_grad_scaler_unscales_like_cpu_and_float64_stays_refused():
    # strict policy (the default): unscale_ must not need float64 on trn, user float64 still fails
    torch.manual_seed(0)
    grads = [torch.randn(5, 3), torch.randn(7)]
    results = {}
    for dev in ("cpu", "trn"):
        params = [torch.nn.Parameter(torch.zeros_like(g, device=dev)) for g in grads]
        for p, g in zip(params, grads):
            p.grad = g.to(dev) * 4096.0
        opt = torch.optim.SGD(params, lr=1.0)
        scaler = torch.amp.GradScaler(dev, init_scale=4096.0)
        scaler.scale(torch.ones((), device=dev))  # creates the scale tensor on the device
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="already been called"):
            scaler.unscale_(opt)
        results[dev] = [p.grad.cpu() for p in params]
    for a, b in zip(results["trn"], results["cpu"]):
        assert torch.equal(a, b)
    with pytest.raises(TypeError, match="float64 is not supported on trn"):
        torch.ones(2, device="trn").double()


def test_grad_scaler_inverse_scale_is_bitwise_the_float64_route():
    # kernels/trn/grad_scaler.py: float32 reciprocal == float64 reciprocal rounded to float32
    g = torch.Generator().manual_seed(0)
    bits = torch.randint(0x01000000, 0x7E800000, (200_000,), generator=g, dtype=torch.int64).to(
        torch.int32
    )
    scales = bits.view(torch.float32)
    on_trn = scales.to("trn").reciprocal().cpu()
    upstream = scales.double().reciprocal().float()
    assert torch.equal(on_trn.view(torch.int32), upstream.view(torch.int32))
    assert torch.equal(
        torch.tensor(2.0**16, device="trn").reciprocal().cpu(), torch.tensor(2.0**-16)
    )


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_torch_compile(backend):
    torch._dynamo.reset()

    def f(x, w):
        return torch.relu(x @ w + 1).sum(dim=0)

    x, w = torch.randn(4, 3, device="trn"), torch.randn(3, 5, device="trn")
    compiled = torch.compile(f, backend=backend, fullgraph=True)
    out = compiled(x, w)
    assert out.device.type == "trn"
    torch.testing.assert_close(out.cpu(), f(x.cpu(), w.cpu()))
    wg = w.clone().requires_grad_()
    compiled(x, wg).sum().backward()
    wc = w.cpu().requires_grad_()
    f(x.cpu(), wc).sum().backward()
    torch.testing.assert_close(wg.grad.cpu(), wc.grad)

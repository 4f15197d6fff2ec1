"""Trainium behaviour of the live trn device in this process (default env: trn2, strict dtypes).

Other presets, permissive mode, stochastic rounding and the sanitizer need a different
environment at registration: tests/kernels/test_trainium_env.py runs those in subprocesses.
"""

import gc

import pytest
import torch
import torch.nn.functional as F

from kernels.trainium.topology import GiB

DEV = "trn"


def test_default_topology_is_two_trn2_chips_of_four_logical_cores():
    assert torch.trn.device_count() == 8
    p = torch.trn.get_device_properties(5)
    assert p.name == "Trainium2 NeuronCore-v3 (LNC=2)" and torch.trn.get_device_name(5) == p.name
    assert p.total_memory == 24 * GiB and p.physical_cores == 2 and p.logical_cores_per_chip == 4
    assert p.core_version == "NeuronCore-v3" and p.neuron_core_id == 5
    assert torch.trn.mem_get_info(5)[1] == 24 * GiB


@pytest.fixture
def small_hbm():
    old = torch.trn.capacity(1)
    torch.trn.set_capacity(1, 1 << 20)
    yield
    torch.trn.set_capacity(1, old)


def test_hbm_capacity_raises_oom_with_device_requested_and_free(small_hbm):
    gc.collect()  # an earlier test's trn:1 tensor held by a reference cycle is not ours
    keep = torch.empty(1 << 18, dtype=torch.uint8, device="trn:1")  # 256 KiB more in use
    used = torch.trn.memory_allocated(1)
    assert used >= keep.numel()
    with pytest.raises(torch.OutOfMemoryError) as info:
        torch.empty(1 << 20, dtype=torch.uint8, device="trn:1")
    msg = str(info.value)
    assert (
        "trn:1 out of memory: tried to allocate 1048576 bytes; "
        f"{(1 << 20) - used} bytes free of 1048576" in msg
    )
    with pytest.raises(torch.OutOfMemoryError):  # op outputs count too
        torch.ones(1 << 17, device="trn:1") * 2
    # the device stays usable and nothing leaked from the failed attempts
    assert torch.trn.memory_allocated(1) == used
    y = torch.arange(4.0, device="trn:1") + 1
    assert y.cpu().tolist() == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize(
    "make, op",
    [
        (lambda: torch.ones(3, dtype=torch.float64).to(DEV), "aten::_to_copy (Tensor.to): float64"),
        (lambda: torch.ones(3, device=DEV).double(), "aten::_to_copy (Tensor.to): float64"),
        (lambda: torch.zeros(3, dtype=torch.float64, device=DEV), "aten::empty: float64"),
        (
            lambda: torch.tensor([1.0], dtype=torch.float64, device=DEV),
            "float64 is not supported on trn",
        ),
        (lambda: torch.ones(3, device=DEV).sum(dtype=torch.float64), "aten::sum: float64"),
        (lambda: torch.ones(2, dtype=torch.complex128).to(DEV), "complex128 is not supported"),
    ],
)
def test_strict_float64_is_a_type_error_naming_op_and_fix(make, op):
    before = torch.trn.memory_allocated(0)
    with pytest.raises(TypeError) as info:
        make()
    assert op in str(info.value)
    assert ".float()" in str(info.value) or "complex64" in str(info.value)
    assert torch.trn.memory_allocated(0) == before


def test_float64_stays_available_off_device():
    x = torch.ones(2, device=DEV)
    assert x.to("cpu", torch.float64).dtype == torch.float64
    assert x.cpu().double().sum().item() == 2.0
    assert torch.ones(2, dtype=torch.int64, device=DEV).sum().item() == 2  # int64 is kept


@pytest.mark.parametrize("dtype, small", [(torch.bfloat16, 2.0**-9), (torch.float16, 2.0**-12)])
def test_matmul_class_ops_accumulate_in_fp32(dtype, small):
    exact = 1.0 + 256 * small  # low-precision accumulation would return 1.0
    a = torch.tensor([[1.0] + [small] * 256], dtype=dtype, device=DEV)
    b = torch.ones(257, 1, dtype=dtype, device=DEV)
    results = {
        "mm": torch.mm(a, b),
        "matmul": a @ b,
        "linear": F.linear(a, b.t()),
        "bmm": torch.bmm(a[None], b[None]),
        "baddbmm": torch.baddbmm(torch.zeros(1, 1, 1, dtype=dtype, device=DEV), a[None], b[None]),
        "addmm": torch.addmm(torch.zeros(1, dtype=dtype, device=DEV), a, b),
        "conv2d": F.conv2d(a.reshape(1, 257, 1, 1), b.reshape(1, 257, 1, 1)),
    }
    for name, out in results.items():
        assert out.dtype == dtype and out.device.type == "trn", name
        assert out.item() == exact, name


def test_bias_and_product_round_once():
    a = torch.tensor([[1.0, 2.0**-8]], dtype=torch.bfloat16, device=DEV)
    b = torch.ones(2, 1, dtype=torch.bfloat16, device=DEV)
    bias = torch.tensor([2.0**-8], dtype=torch.bfloat16, device=DEV)
    # fp32: 1 + 2^-8 + 2^-8 = 1 + 2^-7 exactly; rounding the product first would give 1.0
    assert torch.addmm(bias, a, b).item() == 1.0 + 2.0**-7
    assert F.linear(a, b.t(), bias).item() == 1.0 + 2.0**-7


def test_autocast_defaults_to_bf16_with_fp32_ops_kept():
    assert torch.get_autocast_dtype("trn") == torch.bfloat16
    x, w = torch.randn(4, 8, device=DEV), torch.randn(8, 3, device=DEV)
    with torch.autocast("trn"):
        y = x @ w
        s = torch.softmax(y, dim=-1)
    assert y.dtype == torch.bfloat16 and s.dtype == torch.float32


def test_stream_order_after_wait_sees_the_write():
    a, b = torch.Stream(device=DEV), torch.Stream(device=DEV)
    x = torch.zeros(1000, device=DEV)
    with (
        torch.accelerator.use_stream(a)
        if hasattr(torch.accelerator, "use_stream")
        else torch.trn.stream(a)
    ):
        x.fill_(3.0)
    b.wait_stream(a)
    with torch.trn.stream(b):
        y = x * 2
    b.synchronize()
    assert y.cpu().unique().tolist() == [6.0]


def test_rounding_is_rne_and_fp32_matmul_plain_by_default():
    x = torch.full((1000,), 1.0 + 2.0**-9)
    assert x.to(DEV).to(torch.bfloat16).float().unique().tolist() == [1.0]
    f, g = torch.randn(8, 16), torch.randn(16, 4)
    assert torch.equal((f.to(DEV) @ g.to(DEV)).cpu(), f @ g)


@pytest.fixture
def sanitizer():
    from kernels.trainium import sanitizer_mode

    san = sanitizer_mode.enable()
    yield san
    sanitizer_mode.disable()


def test_sanitizer_reports_races_and_accepts_each_sync(sanitizer):
    from kernels.trainium.sanitizer import SynchronizationError

    a, b = torch.Stream(device=DEV), torch.Stream(device=DEV)

    def race(sync):
        x = torch.zeros(8, device=DEV)  # written on the default stream
        a.wait_stream(torch.trn.current_stream())
        with torch.trn.stream(a):
            x.add_(1)
        sync(x)
        with torch.trn.stream(b):
            try:
                (x * 2).sum()
            except SynchronizationError as e:
                return str(e)
        return ""

    ev = torch.Event(device=DEV)

    def by_event(x):
        ev.record(a)
        b.wait_event(ev)

    msg = race(lambda x: None)
    assert "data race on storage" in msg and "read by aten::mul.Tensor on stream (0, " in msg
    assert "is not ordered after the write by aten::add_.Tensor" in msg
    assert "Current access" in msg and "Previous access" in msg and msg.count("in race") == 2
    for sync in (
        lambda x: b.wait_stream(a),
        by_event,
        lambda x: x.record_stream(b),
        lambda x: torch.accelerator.synchronize(),
    ):
        assert race(sync) == ""


def test_printing_works_without_float64():
    assert (
        repr(torch.tensor([1.0, 2.5], device="trn:2")) == "tensor([1.0000, 2.5000], device='trn:2')"
    )

"""autoport installed in this pytest process (target: CPU, the only device here)."""

import os
import sys

import pytest
import torch

import accelerator_api as A
from accelerator_api import runtime
from accelerator_api._port import RECORDER, install, installed, uninstall


def _line_above():
    """The caller's previous line: the statement under test sits right above the call."""
    return sys._getframe(1).f_lineno - 1


def _sites(rec):
    return {(s["line"], s["api"]): s for s in rec.as_dict()["sites"] if s["file"] == __file__}


def test_redirects_and_records_each_site_once(ported):
    for _ in range(3):
        t = torch.zeros(2, device="cuda")
        l1 = _line_above()
    m = torch.nn.Linear(2, 2).cuda()
    l2 = _line_above()
    y = m(t.to("cuda:0"))
    l3 = _line_above()
    torch.cuda.synchronize()
    l4 = _line_above()
    assert y.device.type == "cpu" and torch.cuda.is_available()
    sites = _sites(ported)
    assert sites[(l1, "torch.zeros(device='cuda')")]["count"] == 3
    assert sites[(l2, "Module.cuda()")]["action"] == "Module.to(torch.device('cpu'))"
    assert (l3, "Tensor.to('cuda:0')") in sites
    assert sites[(l4, "torch.cuda.synchronize")]["action"] == "accelerator_api.synchronize"
    assert ported.as_dict()["target"] == "cpu"


def test_torch_internals_keep_real_cuda(ported):
    # A call made from a file inside torch sees the real torch.cuda (False on this machine)...
    code = compile(
        "r = torch.cuda.is_available()",
        os.path.join(os.path.dirname(torch.__file__), "x.py"),
        "exec",
    )
    ns = {"torch": torch}
    exec(code, ns)
    assert ns["r"] is False and torch.cuda.is_available() is True
    # ...so torch's own CUDA paths stay off: fork_rng asks torch.cuda.device_count() internally.
    with torch.random.fork_rng():
        torch.rand(1)
    assert not any("device_count" in s["api"] for s in ported.as_dict()["sites"])


def test_uninstall_restores_torch_exactly():
    watched = [
        (torch, "zeros"),
        (torch, "load"),
        (torch, "Generator"),
        (torch, "autocast"),
        (torch.amp, "GradScaler"),
        (torch.cuda, "is_available"),
        (torch.cuda, "Event"),
        (torch.cuda.amp, "autocast"),
        (torch.nn.Module, "to"),
        (type(torch.backends.cudnn), "benchmark"),
        (torch, "set_default_tensor_type"),
        (torch.UntypedStorage, "cuda"),
        (torch.nn.DataParallel, "__init__"),
    ]
    before = [getattr(o, n) if not isinstance(o, type) else o.__dict__.get(n) for o, n in watched]
    tensor_own = set(torch.Tensor.__dict__)
    install(quiet=True)
    assert installed() and torch.zeros is not before[0]
    uninstall()
    after = [getattr(o, n) if not isinstance(o, type) else o.__dict__.get(n) for o, n in watched]
    assert all(a is b for a, b in zip(before, after))
    assert set(torch.Tensor.__dict__) == tensor_own
    RECORDER.clear()
    os.environ.pop("HN_AUTOPORT_QUIET", None)


def test_nothing_changes_when_the_accelerator_is_cuda(monkeypatch):
    monkeypatch.setattr(runtime, "accelerator", lambda: torch.device("cuda"))
    monkeypatch.setenv("HN_AUTOPORT_QUIET", "1")
    real = (torch.zeros, torch.cuda.is_available, torch.Tensor.to)
    rec = install()
    try:
        assert not installed() and not rec.changed
        assert (torch.zeros, torch.cuda.is_available, torch.Tensor.to) == real
        assert "nothing was changed" in rec.text()
    finally:
        rec.changed, rec.target = True, "cpu"


def test_no_equivalent_raises_naming_the_call(ported):
    with pytest.raises(
        A.Unsupported, match=r"torch\.cuda\.get_device_capability .*compute capability"
    ):
        torch.cuda.get_device_capability()
    with pytest.raises(A.Unsupported, match=r"torch\.cuda\.CUDAGraph .*replay\(\) silently"):
        torch.cuda.CUDAGraph()
    with pytest.raises(A.Unsupported, match=r"torch\.cuda\.get_arch_list"):
        torch.cuda.get_arch_list()
    props = torch.cuda.get_device_properties(0)
    assert props.total_memory > 0
    with pytest.raises(A.Unsupported, match="multi_processor_count"):
        props.multi_processor_count
    with pytest.raises(A.Unsupported, match=r"autocast.*float64"):
        torch.autocast("cuda", dtype=torch.float64)
    # a private memory pool is the device allocator's: the CPU has none to stand in with
    with pytest.raises(A.Unsupported, match=r"torch\.cuda\.MemPool .*no MemPool"):
        torch.cuda.MemPool()
    with pytest.raises(A.Unsupported, match=r"torch\.cuda\.use_mem_pool .*no use_mem_pool"):
        torch.cuda.use_mem_pool(None)


def test_legacy_types_keep_their_dtype(ported, monkeypatch):
    t = torch.cuda.FloatTensor(2, 3)
    assert t.dtype == torch.float32 and isinstance(t, torch.cuda.FloatTensor)
    assert torch.ones(2).type(torch.cuda.DoubleTensor).dtype == torch.float64
    assert torch.ones(2).type("torch.cuda.HalfTensor").dtype == torch.float16
    # A device without fp64 gets an error, never the silent DoubleTensor -> FloatTensor swap.
    from accelerator_api import properties

    monkeypatch.setattr(properties, "supports_dtype", lambda dt, dev=None: dt != torch.float64)
    with pytest.raises(A.Unsupported, match="never changes a dtype silently"):
        torch.cuda.DoubleTensor(2)
    with pytest.raises(A.Unsupported, match="float64"):
        torch.ones(2).type(torch.cuda.DoubleTensor)


def test_amp_generator_load_and_flags(ported, tmp_path):
    x = torch.randn(4, 4)
    with torch.cuda.amp.autocast():
        assert (
            x @ x
        ).dtype == torch.bfloat16  # the target's default, CUDA's fp16 was not asked for
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        assert (x @ x).dtype == torch.float16  # an explicit, supported dtype is kept
    assert torch.cuda.amp.GradScaler()._device == "cpu" and torch.amp.GradScaler()._device == "cpu"
    g = torch.Generator(device="cuda")
    assert isinstance(g, torch.Generator) and g.device.type == "cpu"
    path = tmp_path / "t.pt"
    torch.save({"w": torch.arange(3)}, path)
    assert torch.equal(torch.load(path, map_location="cuda:0")["w"], torch.arange(3))
    old = torch.backends.cudnn.benchmark
    # Upstream's test harness, imported by other tests in this process, freezes the global flags.
    with torch.backends.__allow_nonbracketed_mutation():
        torch.backends.cudnn.benchmark = True
        line = _line_above()
        torch.backends.cudnn.benchmark = old
    assert torch.backends.cudnn.benchmark == old
    assert (
        "no effect on cpu"
        in _sites(ported)[(line, "torch.backends.cudnn.benchmark = True")]["action"]
    )


def test_nccl_becomes_the_devices_backend(ported):
    import torch.distributed as dist

    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    try:
        assert dist.get_backend() == "gloo"
        t = torch.ones(2)
        dist.all_reduce(t)
        assert t.tolist() == [1.0, 1.0]
    finally:
        dist.destroy_process_group()
    assert any(
        s["api"] == "init_process_group('nccl')" and s["action"] == "backend 'gloo'"
        for s in ported.as_dict()["sites"]
    )


def test_torch_compile_still_works(ported):
    m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()).cuda()

    def f(x):
        return (m(x.to("cuda")) + torch.ones(8, device="cuda")).sum()

    x = torch.randn(4, 8)
    compiled = torch.compile(f, backend="eager", fullgraph=True)
    assert torch.allclose(compiled(x), f(x))


def test_device_contexts_reach_the_factories(ported):
    # torch fills in device= inside a device context only for the factories it lists; under
    # autoport those are still the functions torch dispatches, so the context is honoured.
    with torch.device("meta"):
        made = [torch.zeros(2), torch.randn(2), torch.tensor([1.0]), torch.nn.Linear(2, 2).weight]
    assert {t.device.type for t in made} == {"meta"}
    assert torch.zeros(2, device="cuda").device.type == "cpu"  # factories are still ported
    with torch.device("cuda"):
        t = torch.ones(2)
        line = _line_above()
    assert t.device.type == "cpu"
    assert _sites(ported)[(line - 1, "with torch.device('cuda')")]["action"] == (
        "with torch.device('cpu')"
    )
    torch.set_default_device("meta")
    try:
        assert torch.empty(1).device.type == "meta"
    finally:
        torch.set_default_device(None)


def test_device_contexts_after_reinstall():
    # The factory list torch caches is the real functions whichever install/uninstall came first.
    for _ in range(2):
        install(quiet=True)
        uninstall()
    with torch.device("meta"):
        assert torch.zeros(1).device.type == "meta"
    install(quiet=True)
    try:
        with torch.device("meta"):
            assert torch.arange(3).device.type == "meta"
    finally:
        uninstall()
        RECORDER.clear()
        os.environ.pop("HN_AUTOPORT_QUIET", None)


def test_ddp_device_ids_follow_the_target(ported):
    # The DDP tutorials' `DDP(model, device_ids=[rank])`: a CPU module takes no device ids.
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    model = None
    try:
        model = DDP(torch.nn.Linear(2, 2).cuda(), device_ids=[0], output_device=0)
        line = _line_above()
        model(torch.ones(1, 2).cuda()).sum().backward()
        assert model.device_ids is None
    finally:
        # DDP's Reducer must go before the group: freed after destroy_process_group() it
        # destroys ProcessGroupGloo with the GIL held, against gloo's thread (a hang, docs/ci.md)
        model = None
        dist.destroy_process_group()
    assert _sites(ported)[(line, "DistributedDataParallel(device_ids=[0], output_device=0)")][
        "action"
    ] == ("device_ids=None, output_device=None")


def test_data_parallel_is_the_module_itself(ported):
    # ImageNet's `nn.DataParallel(model).cuda()`: its scatter is CUDA's, so on any other target
    # the wrap holds the module and calls it, as DataParallel does on a machine without CUDA
    inner = torch.nn.Linear(2, 2)
    model = torch.nn.DataParallel(inner).cuda()
    line = _line_above()
    x = torch.ones(3, 2).cuda()
    assert model.module is inner and model.device_ids == []
    assert torch.equal(model(x), inner(x)) and set(model.state_dict()) == {
        "module.weight",
        "module.bias",
    }
    assert _sites(ported)[(line, "nn.DataParallel(module)")]["count"] == 1


def test_the_prefetchers_stream_calls_run_without_an_accelerator(ported):
    # the ImageNet examples' prefetcher: a side stream, the wait, the batch recorded on the main
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        batch = torch.ones(2).cuda(non_blocking=True)
    torch.cuda.current_stream().wait_stream(side)
    batch.record_stream(torch.cuda.current_stream())
    line = _line_above()
    assert _sites(ported)[(line, "Tensor.record_stream()")]["count"] == 1
    uninstall()
    with pytest.raises(NotImplementedError):
        batch.record_stream(torch.Stream("cpu"))  # torch's own answer for a CPU tensor
    install()


def test_pin_memory_is_the_tensor_without_an_accelerator(ported):
    # nanoGPT's get_batch: x.pin_memory().to(device, non_blocking=True) on the CUDA path.
    x = torch.arange(4)
    y = x.pin_memory()
    line = _line_above()
    assert y is x and not y.is_pinned()
    assert _sites(ported)[(line, "Tensor.pin_memory()")]["count"] == 1
    uninstall()
    with pytest.raises(RuntimeError):
        x.pin_memory()  # torch's own answer on a CPU-only machine
    install()


def test_a_storage_moved_in_map_location_and_the_default_type(ported, tmp_path):
    """``lambda storage, loc: storage.cuda()`` and the deprecated CUDA default tensor type."""
    path = tmp_path / "m.pt"
    torch.save(torch.nn.Linear(2, 2).state_dict(), path)
    state = torch.load(path, map_location=lambda storage, loc: storage.cuda())
    line = _line_above()
    assert sorted(state) == ["bias", "weight"] and state["weight"].device.type == "cpu"
    assert _sites(ported)[(line, "UntypedStorage.cuda()")]["count"] == 2
    dtype = torch.get_default_dtype()
    try:
        torch.set_default_tensor_type("torch.cuda.DoubleTensor")
        line = _line_above()
        x = torch.ones(2)
        assert x.dtype == torch.float64 and x.device.type == "cpu"
        action = _sites(ported)[(line, "torch.set_default_tensor_type(torch.cuda.DoubleTensor)")]
        assert "torch.set_default_dtype(torch.float64)" in action["action"]
    finally:
        torch.set_default_dtype(dtype)
    torch.set_default_tensor_type("torch.FloatTensor")  # a CPU type: torch's own call
    assert torch.get_default_dtype() == torch.float32

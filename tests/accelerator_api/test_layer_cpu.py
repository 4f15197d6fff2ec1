"""The neutral layer in a process without an accelerator, and on a simulated older torch.

On a machine with a GPU, each test marked ``cpu_only_process`` runs in a child pytest whose GPUs
are hidden (``CUDA_VISIBLE_DEVICES=""``), so the same assertions are checked there, not skipped.
"""

import functools
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import accelerator_api as A

HIDE_GPUS = {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "", "HN_CPU_ONLY_CHILD": "1"}


def _accelerator():
    acc = getattr(torch, "accelerator", None)
    return acc.current_accelerator() if acc is not None else None


def cpu_only_process(test):
    """Run ``test`` here when this process sees no accelerator, else in a child that sees none."""
    if _accelerator() is None:
        return test
    if os.environ.get("HN_CPU_ONLY_CHILD"):
        raise RuntimeError(f"cannot hide the {_accelerator()} accelerator from a child process")

    @functools.wraps(test)
    def in_child(*args, **kwargs):
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
            + [f"{__file__}::{test.__name__}"],
            env={**os.environ, **HIDE_GPUS},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]

    return in_child


@cpu_only_process
def test_runtime_falls_back_to_cpu():
    assert A.accelerator() is None and not A.is_available()
    assert A.device() == torch.device("cpu") and A.device_type() == "cpu"
    assert A.device_count() == 0 and A.current_device_index() == 0
    A.synchronize()
    A.set_device_index(0)
    with pytest.raises(A.Unsupported, match="set_device_index"):
        A.set_device_index(1)


@cpu_only_process
def test_memory_on_cpu_is_zero_not_an_error():
    # torch.accelerator.memory_allocated raises here; the layer answers like torch.cuda does.
    with pytest.raises(RuntimeError):
        torch.accelerator.memory_allocated()
    assert A.memory_allocated() == A.max_memory_allocated() == A.memory_reserved() == 0
    assert A.memory_stats() == {}
    A.reset_peak_memory_stats()
    A.empty_cache()
    free, total = A.get_memory_info()
    assert 0 < free <= total


@cpu_only_process
def test_host_event_times_real_work():
    with pytest.raises(RuntimeError, match="events"):
        torch.Event(enable_timing=True).record()  # the gap this fills
    e1, e2 = A.Event(enable_timing=True), A.Event(enable_timing=True)
    e1.record()
    time.sleep(0.03)
    e2.record()
    e2.synchronize()
    assert 25 <= e1.elapsed_time(e2) < 1000
    with pytest.raises(ValueError):
        A.Event().elapsed_time(A.Event())
    assert A.Stream().device.type == "cpu" and A.current_stream().device.type == "cpu"
    with A.stream(None) as s:
        assert s is None


def test_host_stream_waits_for_nothing():
    """A data prefetcher's calls on CPU streams: torch's CPU stream raises on each (the gap)."""
    side, main = torch.Stream("cpu"), torch.Stream("cpu")
    with pytest.raises(RuntimeError, match="events"):
        main.wait_stream(side)
    side, main = A.Stream(), A.current_stream()
    assert isinstance(main, torch.Stream) and main.device.type == "cpu"
    with side:  # still a torch.Stream: a context manager
        batch = torch.ones(2)
    batch.add_(1)
    main.wait_stream(side)
    main.wait_event(side.record_event())
    assert main.query() and side.record_event().query()
    # torch.cuda.Stream's callers name the device by keyword (`Stream(device=d)`), as torch's does
    assert A.Stream(device="cpu").device.type == A.Stream("cpu", priority=0).device.type == "cpu"


@cpu_only_process
def test_rng_state_round_trip_and_fork():
    A.manual_seed_all(123)
    state = A.get_rng_state()
    a = torch.rand(5)
    A.set_rng_state(state)
    assert torch.equal(a, torch.rand(5))
    before = A.get_rng_state()
    with A.fork_rng():
        torch.rand(100)
    assert torch.equal(before, A.get_rng_state())


@cpu_only_process
def test_autocast_picks_device_dtype_and_rejects_unsupported():
    x = torch.randn(4, 4)
    with A.autocast():
        assert (x @ x).dtype == A.preferred_dtype() == torch.bfloat16
    with A.autocast(dtype=torch.float16):
        assert (x @ x).dtype == torch.float16
    with pytest.raises(A.Unsupported, match="autocast supports only"):
        A.autocast(dtype=torch.float64)
    assert A.GradScaler()._device == "cpu"  # torch's own default would be "cuda"


@cpu_only_process
def test_properties_dtypes_distributed_pinning():
    assert A.supports_dtype(torch.float64) and A.is_bf16_supported()
    p = A.device_properties()
    assert p.type == "cpu" and p.name and p.total_memory > 0 and p.device_count == 1
    assert A.distributed_backend() == "gloo"
    t = torch.ones(3)
    assert A.pin_memory(t) is t and A.loader_kwargs() == {"pin_memory": False}


def test_no_pinning_on_mps(monkeypatch):
    """MPS has no pinned memory (torch's DataLoader turns it off there): the helpers say so
    (the device queries answer as a Mac's would; MPS itself does not run here)."""
    from accelerator_api import pinning

    monkeypatch.setattr(pinning._dev, "is_available", lambda: True)
    monkeypatch.setattr(pinning._dev, "device_type", lambda: "mps")
    t = torch.ones(3)
    assert not A.can_pin_memory() and A.pin_memory(t) is t
    assert A.loader_kwargs() == {"pin_memory": False}


@cpu_only_process
def test_graph_runs_eagerly_without_capture():
    calls = []
    with A.graph() as g:
        calls.append(1)
    assert calls == [1] and not g.captured
    with pytest.raises(A.Unsupported, match="capture"):
        g.replay()
    step = A.capture(lambda x: calls.append(x) or len(calls), 7)
    assert not step.captured and step() == 2 and step() == 3


@cpu_only_process
def test_older_torch_without_accelerator_namespace(monkeypatch):
    monkeypatch.delattr(torch, "accelerator")
    monkeypatch.delattr(torch, "get_device_module")
    monkeypatch.delattr(torch.distributed, "get_default_backend_for_device")
    assert A.accelerator() is None and not A.is_available() and A.device_type() == "cpu"
    assert A.device_count() == 0 and A.memory_allocated() == 0
    A.synchronize()
    assert A.device_module("cpu") is torch.cpu
    assert A.distributed_backend() == "gloo"  # from Backend.default_device_backend_map
    assert A.current_stream().device.type == "cpu"


def test_older_torch_probe_finds_a_backend_module(monkeypatch):
    # Without torch.accelerator the layer probes device modules; simulate one that reports devices.
    monkeypatch.delattr(torch, "accelerator")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert A.device_type() == "cuda" and A.is_available()


def test_layer_names_no_device_of_ours():
    src = "\n".join(p.read_text() for p in Path(A.__file__).parent.rglob("*.py"))
    assert not re.search(r"\b(trn|neuron)\b", src, re.I)

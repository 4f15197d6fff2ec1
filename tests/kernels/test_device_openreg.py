"""What PyTorch's OpenReg backend tests expect of a device, where trn once failed them: a spawned
child that imports no plugin still finds the device; autograd's device threads are named when the
first backward returns; a legacy numpy-backed checkpoint written by numpy 1.x loads with
weights_only (kernels/trn/register.py, kernels/csrc/guard.cpp, docs/device.md "OpenReg")."""

from __future__ import annotations

import _codecs
import io
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import torch
from torch.serialization import safe_globals

import kernels.trn  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]

# A script whose spawned worker imports only torch: the device reaches the child through the
# environment its parent's registration exported (the OpenReg test's worker lives in a test module
# that never imports the plugin).
SPAWN = textwrap.dedent(
    """
    import multiprocessing, sys
    import torch

    def worker(index, q):
        try:
            torch.accelerator.set_device_index(index)
            x = torch.randn(10, 10, device="trn")
            q.put(("success", str(torch.matmul(x, x).device)))
        except Exception as e:
            q.put(("error", str(e)))

    if __name__ == "__main__":
        import kernels.trn  # explicit registration, in the parent only
        ctx = multiprocessing.get_context("spawn")
        q = ctx.Queue()
        p = ctx.Process(target=worker, args=(1, q))
        p.start(); p.join()
        print(*q.get())
    """
)


def _clean_env(**kw) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HN_TRN")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(kw)
    return env


def test_a_spawned_child_without_a_plugin_import_finds_the_device(tmp_path):
    script = tmp_path / "spawn_child.py"
    script.write_text(SPAWN)
    r = subprocess.run([sys.executable, str(script)], env=_clean_env(), capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["success", "trn:1"], r.stdout + r.stderr
    # an explicit HN_TRN=0 in the parent's environment is respected: the child has no device
    r = subprocess.run([sys.executable, str(script)], env=_clean_env(HN_TRN="0"),
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.stdout.startswith("error"), r.stdout + r.stderr


def test_registration_exports_the_autoload_to_child_processes():
    assert os.environ.get("HN_TRN") == "1"
    code = "import torch; print(torch._C._get_privateuse1_backend_name())"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    assert r.stdout.strip() == "trn", r.stderr


# Every autograd device thread must carry its name once the first backward has returned. The
# race is made likely: a Python thread spins with a long switch interval, so the device threads
# (which name themselves only after taking the GIL) wait behind it; without the guard's wait at
# the first backward they were still unnamed when the main thread looked.
THREADS = textwrap.dedent(
    """
    import os, sys, threading
    import torch, kernels.trn

    stop = False
    def spin():
        while not stop:
            pass
    sys.setswitchinterval(0.02)
    threading.Thread(target=spin, daemon=True).start()
    torch.ones(2, requires_grad=True, device="trn").sum().backward()
    names = set()
    task = f"/proc/{os.getpid()}/task"
    for tid in os.listdir(task):
        with open(f"{task}/{tid}/comm") as f:
            names.add(f.read().strip())
    stop = True
    n = torch.accelerator.device_count()
    print(n, sorted(i for i in range(n) if f"pt_autograd_{i}" not in names))
    """
)


def test_autograd_device_threads_are_named_when_the_first_backward_returns():
    if not Path("/proc/self/task").is_dir():
        return  # thread names are read from /proc (Linux), as in OpenReg's test_autograd_init
    r = subprocess.run([sys.executable, "-c", THREADS], env=_clean_env(HN_TRN_DEVICES="4"),
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().split(maxsplit=1) == ["4", "[]"], r.stdout


def _numpy1_archive(t: torch.Tensor) -> bytes:
    """A checkpoint as numpy 1.x-era torch wrote it for storage-less backends: the legacy
    `_rebuild_device_tensor_from_numpy` reducer, numpy's array global under its 1.x module name
    `numpy.core.multiarray`. data.pkl is rewritten and the archive re-zipped (a byte-level edit
    of a zip breaks its sizes and checksums: "PytorchStreamReader failed reading zip archive")."""

    class Legacy:
        def __reduce__(self):
            return (
                torch._utils._rebuild_device_tensor_from_numpy,
                (t.detach().cpu().numpy(), t.dtype, str(t.device), t.requires_grad),
            )

    buf = io.BytesIO()
    torch.save({"x": Legacy()}, buf, pickle_protocol=2)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith("/data.pkl"):
                assert b"cnumpy._core.multiarray\n_reconstruct\n" in data
                data = data.replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n")
            dst.writestr(info.filename, data)
    return out.getvalue()


def test_a_numpy1_legacy_checkpoint_loads_with_weights_only_on_trn_and_cpu():
    expected = torch.tensor([[1.0, 2, 3], [4, 5, 6]], device="trn:1")
    raw = _numpy1_archive(expected)
    assert b"numpy.core.multiarray" in raw and b"numpy._core" not in raw
    reconstruct = np._core.multiarray._reconstruct
    allowed = [
        (reconstruct, "numpy.core.multiarray._reconstruct"),  # the 1.x name, as OpenReg allows it
        np.ndarray,
        np.dtype,
        _codecs.encode,
        type(np.dtype(np.float32)),
    ]
    with safe_globals(allowed):
        on_dev = torch.load(io.BytesIO(raw), weights_only=True)["x"]
        on_cpu = torch.load(io.BytesIO(raw), weights_only=True, map_location="cpu")["x"]
    assert on_dev.device == expected.device and torch.equal(on_dev.cpu(), expected.cpu())
    assert on_cpu.is_cpu and torch.equal(on_cpu, expected.cpu())

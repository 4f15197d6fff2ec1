"""Unmodified CUDA apps under autoport, each in its own process: on CPU, on the `trn` plugin, and
on a PrivateUse1 backend nobody named; the one-line import and the env-var forms."""

import json
import sys

import pytest
import torch
import torch.nn as nn
from aa_helpers import APPS, PLUGIN_MISSING, last_json, run_py
from hn_skip import skip_environment

APP = APPS / "cuda_train.py"
STEPS = 30

# Every CUDA use in cuda_train.py: (api as reported, a snippet of the line it is on).
EXPECTED = [
    ("torch.cuda.is_available", "assert torch.cuda.is_available()"),
    ("torch.backends.cudnn.benchmark = True", "cudnn.benchmark = True"),
    ("torch.backends.cudnn.deterministic = True", "cudnn.deterministic = True"),
    ("torch.cuda.manual_seed_all", "torch.cuda.manual_seed_all(0)"),
    ("Tensor.cuda()", "x, y = x.cuda()"),
    ("Tensor.to('cuda:0')", "x, y = x.cuda()"),
    ("Module.cuda()", "model = make_model().cuda()"),
    ("torch.cuda.amp.GradScaler", "scaler = torch.cuda.amp.GradScaler()"),
    ("torch.zeros(device=torch.device('cuda'))", "running = torch.zeros"),
    ("torch.Generator(device='cuda')", "noise_gen = torch.Generator"),
    ("torch.randn(device='cuda')", 'torch.randn(4, device="cuda"'),
    ("torch.cuda.reset_peak_memory_stats", "torch.cuda.reset_peak_memory_stats()"),
    ("torch.cuda.Event", "start, end = torch.cuda.Event"),
    ("torch.cuda.amp.autocast", "with torch.cuda.amp.autocast()"),
    ("torch.cuda.synchronize", "torch.cuda.synchronize()"),
    ("torch.load(map_location='cuda')", "torch.load(ckpt"),
    ("Tensor.is_cuda", '"is_cuda": x.is_cuda'),
    ("torch.cuda.max_memory_allocated", "torch.cuda.max_memory_allocated()"),
    ("torch.cuda.memory_allocated", "torch.cuda.memory_allocated()"),
    ("torch.cuda.get_device_name", "torch.cuda.get_device_name(0)"),
]


def expected_sites():
    lines = APP.read_text().splitlines()
    return {
        (next(i + 1 for i, text in enumerate(lines) if snippet in text), api)
        for api, snippet in EXPECTED
    }


def reference_loss():
    """The same model, data and steps trained plainly on CPU in float32."""
    sys.path.insert(0, str(APPS))
    try:
        import cuda_train
    finally:
        sys.path.remove(str(APPS))
    x, y = cuda_train.make_data()
    model = cuda_train.make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(STEPS):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    with torch.no_grad():
        return nn.functional.mse_loss(model(x), y).item()


def run_app(tmp_path, *runner_args):
    out, report = tmp_path / "out.json", tmp_path / "report.json"
    proc = run_py(
        [
            "-m",
            "accelerator_api.autoport",
            *runner_args,
            "--report",
            str(report),
            str(APP),
            str(out),
            str(STEPS),
        ]
    )
    return proc, out, report


def check_run(out, report, target):
    result, rep = json.loads(out.read_text()), json.loads(report.read_text())
    assert rep["target"] == target and rep["changed"]
    sites = {(s["line"], s["api"]) for s in rep["sites"] if s["file"].endswith("cuda_train.py")}
    assert sites == expected_sites()
    counts = {s["api"]: s["count"] for s in rep["sites"]}
    assert counts["torch.cuda.amp.autocast"] == STEPS and counts["torch.cuda.Event"] == 2
    assert result["final_loss"] == pytest.approx(reference_loss(), rel=1e-2)
    assert result["final_loss"] < result["mean_loss"]  # it trained
    assert result["is_cuda"] is True
    return result


def test_cuda_app_runs_unmodified_on_cpu(tmp_path):
    proc, out, report = run_app(tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = check_run(out, report, "cpu")
    assert result["param_device"] == "cpu" and result["elapsed_ms"] > 0
    assert "20 CUDA call site(s) redirected to 'cpu'" in proc.stderr
    assert "cuda_train.py:" in proc.stderr


def test_cuda_app_runs_unmodified_on_trn(tmp_path):
    proc, out, report = run_app(tmp_path, "--import", "kernels.trn")
    if proc.returncode == PLUGIN_MISSING:
        skip_environment(f"kernels.trn could not be imported/built: {proc.stderr.strip()[-500:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = check_run(out, report, "trn")
    assert result["param_device"].startswith("trn")
    assert result["peak_bytes"] > 0  # real allocator statistics from the device


def test_one_line_import_form(tmp_path):
    report = tmp_path / "r.json"
    proc = run_py([str(APPS / "import_form.py")], env={"HN_AUTOPORT_REPORT": str(report)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert last_json(proc.stdout) == {"device": "cpu", "available": True}
    apis = {(s["line"], s["api"]) for s in json.loads(report.read_text())["sites"]}
    assert apis == {(6, "torch.ones(device='cuda')"), (7, "torch.cuda.is_available")}
    assert "import_form.py:6: torch.ones(device='cuda') -> device='cpu'" in proc.stderr


def test_env_var_form():
    code = "import accelerator_api, torch; print(torch.zeros(1, device='cuda').device)"
    on = run_py(["-c", code], env={"HN_AUTOPORT": "1"})
    assert on.returncode == 0 and on.stdout.strip() == "cpu", on.stderr[-3000:]
    assert "<string>:1: torch.zeros(device='cuda')" in on.stderr


def test_importing_the_layer_alone_patches_nothing():
    import accelerator_api  # noqa: F401  (already imported by other tests: the point is it stays inert)

    assert torch.cuda.is_available.__module__ == "torch.cuda" and not torch.cuda.is_available()
    assert torch.zeros.__module__ in (None, "torch")


def test_any_privateuse1_backend():
    # torch's pure-Python PrivateUse1 stand-in, registered as "npx": a backend nobody named.
    proc = run_py(
        [
            "-m",
            "accelerator_api.autoport",
            "--quiet",
            "--import",
            "npx_backend",
            str(APPS / "layer_probe.py"),
            "--cuda-queries",
        ],
        env={"PYTHONPATH": str(APPS)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = last_json(proc.stdout)
    assert (got["device_type"], got["device"], got["device_count"]) == ("npx", "npx:0", 1)
    assert got["stream"] == "npx:0" and got["capture"] == [False, True]
    # What the stand-in backend lacks is a clear Unsupported error, not a wrong answer.
    for key in ("memory_before", "rng_roundtrip", "dist_backend"):
        assert got[key].startswith("ERR:Unsupported:"), (key, got[key])
    assert got["cuda"] == [1, 0, "npx", "npx:0", True]


def test_device_contexts_on_trn():
    app = str(APPS / "device_context.py")
    proc = run_py(
        ["-m", "accelerator_api.autoport", "--quiet", "--import", "kernels.trn", app, "trn:0"]
    )
    if proc.returncode == PLUGIN_MISSING:
        skip_environment(f"kernels.trn could not be imported/built: {proc.stderr.strip()[-500:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert last_json(proc.stdout) == {
        "explicit": ["trn:0"],
        "cuda_context": "trn:0",
        "default": "trn:0",
        "after": "cpu",
    }

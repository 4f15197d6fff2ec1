"""A public module-level flag that says CUDA and that another file imports stays CUDA's (intent
kind ``cuda-name``, round 35: verl's device module exports ``is_cuda_available``, and its readers
guard nvtx and CUDA-only patches with it); the same flag no other file reads, and a flag whose
name does not say CUDA, are rewritten."""

from __future__ import annotations

from patches.generate import pipeline
from patches.generate.state import Settings

DEVICE = """\
import torch

is_cuda_available = torch.cuda.is_available()
has_accel = torch.cuda.is_available()
"""

LOCAL = """\
import torch

use_cuda = torch.cuda.is_available()


def pick():
    return "cuda" if use_cuda else "cpu"
"""

READER = """\
from pkg.device import is_cuda_available


def profile():
    if is_cuda_available:
        import nvtx

        return nvtx.annotate("step")
    return None
"""


def test_an_exported_cuda_flag_stays(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/device.py").write_text(DEVICE)
    (tmp_path / "pkg/local.py").write_text(LOCAL)
    (tmp_path / "pkg/reader.py").write_text(READER)
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    after = run.plan.finals["pkg/device.py"]
    assert "is_cuda_available = torch.cuda.is_available()" in after
    assert "has_accel = torch.accelerator.is_available()" in after
    left = [x for x in run.plan.left if x.finding.path == "pkg/device.py"]
    assert any("flag is_cuda_available, read elsewhere" in x.reason for x in left), left
    assert "use_cuda = torch.accelerator.is_available()" in run.plan.finals["pkg/local.py"]

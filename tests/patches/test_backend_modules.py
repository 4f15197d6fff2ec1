"""``cuda-owned-path`` read from the tree: a module named for CUDA beside its twin named for
another backend is CUDA's own implementation (one module per backend); the same code without
the twin is judged by its unit."""

from __future__ import annotations

import pytest

from patches.generate.cli import main

CUDA_MODULE = """import torch


def clear_memory():
    torch.cuda.empty_cache()


def probe(index):
    return torch.tensor(0, device=torch.device("cuda", index))
"""
MPS_MODULE = "import torch\n\n\ndef clear_memory():\n    torch.mps.empty_cache()\n"


def _diff(tmp_path, capsys, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    main([str(tmp_path), "--diff", "--unsafe-fixes"])
    return capsys.readouterr().out


@pytest.mark.parametrize(
    "cuda, twin",
    [
        ("pkg/accelerators/cuda.py", "pkg/accelerators/mps.py"),  # Lightning's layout
        ("pkg/accel/cuda_accelerator.py", "pkg/accel/xpu_accelerator.py"),  # DeepSpeed's
        ("pkg/cuda/memory.py", "pkg/xpu/memory.py"),  # torch's: a package per backend
    ],
)
def test_a_module_beside_its_twin_stays(tmp_path, capsys, cuda, twin):
    out = _diff(tmp_path, capsys, {cuda: CUDA_MODULE, twin: MPS_MODULE})
    assert "torch.accelerator" not in out and "current_accelerator" not in out


@pytest.mark.parametrize(
    "cuda, other",
    [
        ("pkg/accelerators/cuda.py", None),  # no twin
        ("pkg/accelerators/cuda.py", "pkg/accelerators/mps_utils.py"),  # not the same name
        ("pkg/cudagraphs.py", "pkg/xpugraphs.py"),  # CUDA is no word of the name
    ],
)
def test_without_a_twin_the_unit_decides(tmp_path, capsys, cuda, other):
    files = {cuda: CUDA_MODULE, **({other: MPS_MODULE} if other else {})}
    out = _diff(tmp_path, capsys, files)
    assert "+    if torch.accelerator.is_available():" in out
    assert "current_accelerator().type, index" in out


def test_explain_names_the_twin(tmp_path, capsys):
    _diff(tmp_path, capsys, {"pkg/cuda.py": CUDA_MODULE, "pkg/cpu.py": MPS_MODULE})
    main([str(tmp_path), "--unsafe-fixes", "--explain", "pkg/cuda.py:5"])
    out = capsys.readouterr().out
    assert "cuda-owned-path" in out and "pkg/cuda beside cpu: one module per backend" in out

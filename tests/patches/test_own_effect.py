"""HN116 in a script: CUDA's own profiling and allocator calls stay CUDA's, under
``torch.cuda.is_available()``, and an explicit ``pin_memory()`` before ``.cuda()`` pins only with
an accelerator. The ported script runs on the CPU where the original stops, computes what the
original computes on the CPU (the same losses), and runs on trn, where the checks are false."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from patches.common import gitutil
from patches.generate.cli import main

SCRIPT = Path(__file__).with_name("fixtures") / "script_idioms" / "profiled_script.py"
ROOT = Path(__file__).resolve().parents[2]


def _run(script: Path, **env) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600
    )


def _losses(out: str) -> list[str]:
    return re.findall(r"loss -?\d+\.\d+", out)


def test_the_profiled_script_runs_on_the_cpu_and_on_trn(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(SCRIPT, src / "train.py")
    repo = gitutil.init_copy(src, tmp_path / "repo")
    assert main([str(repo), "--apply", "--unsafe-fixes"]) in (0, 1)
    ported = (repo / "train.py").read_text()
    assert ported.count("if torch.cuda.is_available():") == 5, ported
    flat = " ".join(ported.replace("(", "( ").replace(")", " )").split())
    pinned = "torch.randn( 4, 8 ).pin_memory( ) if torch.accelerator.is_available( ) else"
    assert pinned in flat, ported
    assert "torch.cuda.nvtx.range_push" in ported  # kept: CUDA's own, checked

    assert _run(SCRIPT).returncode != 0
    cpu = _run(repo / "train.py")
    assert cpu.returncode == 0, cpu.stderr[-2000:]
    # the CPU reference: the original with its CUDA-only lines dropped and .cuda() a no-op
    plain = re.sub(
        r"^\s*torch\.cuda\..*$|^print\(torch\.cuda.*$", "", SCRIPT.read_text(), flags=re.M
    )
    plain = plain.replace(".pin_memory().cuda(non_blocking=True)", "").replace(".cuda()", "")
    (tmp_path / "plain.py").write_text(plain)
    ref = _run(tmp_path / "plain.py")
    assert ref.returncode == 0, ref.stderr[-2000:]
    assert _losses(cpu.stdout) == _losses(ref.stdout) and len(_losses(ref.stdout)) == 3

    trn = _run(repo / "train.py", HN_TRN="1")
    assert trn.returncode == 0, trn.stderr[-2000:]
    assert len(_losses(trn.stdout)) == 3


def test_rerun_adds_nothing(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(SCRIPT, src / "train.py")
    repo = gitutil.init_copy(src, tmp_path / "repo")
    main([str(repo), "--apply", "--unsafe-fixes"])
    gitutil.git("commit", "-qam", "ported", cwd=repo)
    once = (repo / "train.py").read_text()
    main([str(repo), "--apply", "--unsafe-fixes", "--force"])
    assert (repo / "train.py").read_text() == once

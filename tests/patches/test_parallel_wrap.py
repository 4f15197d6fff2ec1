"""``nn.DataParallel(model).cuda()`` in a script: the wrap stays CUDA's
(``method_to_device.parallel_form``). DataParallel's scatter is CUDA's alone, so a port that
wrapped the model everywhere would stop in its first forward on trn (8 devices); the port runs
on the CPU and on trn with the losses of the CPU run, and so does the original under autoport,
which makes the wrap the module itself on any target but CUDA."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from patches.common import gitutil
from patches.generate.cli import main

SCRIPT = Path(__file__).with_name("fixtures") / "script_idioms" / "data_parallel_wrap.py"
ROOT = Path(__file__).resolve().parents[2]


def _run(*cmd, **env) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        [sys.executable, *map(str, cmd)], env=env, capture_output=True, text=True, timeout=600
    )


def _port(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(SCRIPT, src / "train.py")
    repo = gitutil.init_copy(src, tmp_path / "repo")
    assert main([str(repo), "--apply", "--unsafe-fixes"]) in (0, 1)
    return repo


def test_the_wrap_stays_cudas_and_the_port_runs_on_cpu_and_trn(tmp_path):
    repo = _port(tmp_path)
    ported = (repo / "train.py").read_text()
    wrap = "(torch.nn.DataParallel(model) if torch.cuda.is_available() else model).to(device)"
    assert re.sub(r"\s+", "", wrap) in re.sub(r"\s+", "", ported), ported
    assert ".cuda(" not in ported

    cpu = _run(repo / "train.py")
    assert cpu.returncode == 0, cpu.stderr[-2000:]
    losses = re.findall(r"loss -?\d+\.\d+", cpu.stdout)
    assert len(losses) == 3

    trn = _run(repo / "train.py", HN_TRN="1")
    assert trn.returncode == 0, trn.stderr[-2000:]
    assert re.findall(r"loss -?\d+\.\d+", trn.stdout) == losses
    # the original, run on trn as it is (autoport): the wrap is the module itself there, as in
    # the port (DataParallel's scatter is CUDA's: without that, its first forward stops)
    orig = _run("-m", "accelerator_api.autoport", SCRIPT, HN_TRN="1")
    assert orig.returncode == 0, orig.stderr[-2000:]
    assert re.findall(r"loss -?\d+\.\d+", orig.stdout) == losses
    assert "nn.DataParallel(module) -> the module itself" in orig.stderr


def test_rerun_leaves_the_wraps_check(tmp_path):
    repo = _port(tmp_path)
    gitutil.git("commit", "-qam", "ported", cwd=repo)
    once = (repo / "train.py").read_text()
    main([str(repo), "--apply", "--unsafe-fixes", "--force"])
    assert (repo / "train.py").read_text() == once

"""HN116 in a script: CUDA's own profiling and allocator calls stay CUDA's, under
``torch.cuda.is_available()``, and an explicit ``pin_memory()`` before ``.cuda()`` pins only with
an accelerator. The ported script runs on the CPU where the original stops, computes what the
original computes on the CPU (the same losses), and runs on trn, where the checks are false.

CUDA's own values and contexts (``own_values_script.py``): the SM version (HN109, ``(0, 0)``
without CUDA), NVTX ranges and the CUDA profiler as ``with`` contexts (HN116, a null context
without CUDA), the device's name and a field of its properties, a peak reset, a generator of the
device: the port runs on the CPU and on trn with the losses of a CPU re-creation."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from patches.common import gitutil
from patches.generate.cli import main

SCRIPT = Path(__file__).with_name("fixtures") / "script_idioms" / "profiled_script.py"
VALUES = SCRIPT.with_name("own_values_script.py")
# the CUDA-only contexts of VALUES, a null context in its CPU re-creation
_CONTEXTS = r"torch\.cuda\.nvtx\.range\([^)]*\)|torch\.cuda\.profiler\.profile\(\)|"
_CONTEXTS += r"torch\.autograd\.profiler\.emit_nvtx\(\)"
ROOT = Path(__file__).resolve().parents[2]


def _run(script: Path, **env) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600
    )


def _losses(out: str) -> list[str]:
    return re.findall(r"loss -?\d+\.\d+", out)


def _port(script: Path, tmp_path: Path) -> tuple[Path, str]:
    """(the repository, the ported train.py) of ``script`` ported in a copy."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(script, src / "train.py")
    repo = gitutil.init_copy(src, tmp_path / "repo")
    assert main([str(repo), "--apply", "--unsafe-fixes"]) in (0, 1)
    return repo, (repo / "train.py").read_text()


def test_the_profiled_script_runs_on_the_cpu_and_on_trn(tmp_path):
    repo, ported = _port(SCRIPT, tmp_path)
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
    repo, _ = _port(SCRIPT, tmp_path)
    gitutil.git("commit", "-qam", "ported", cwd=repo)
    once = (repo / "train.py").read_text()
    main([str(repo), "--apply", "--unsafe-fixes", "--force"])
    assert (repo / "train.py").read_text() == once


def _cpu_recreation(source: str) -> str:
    """VALUES as one would write it for the CPU: no SM version, name or properties, null
    contexts, the CPU's generator and tensors."""
    plain = re.sub(_CONTEXTS, "contextlib.nullcontext()", source)
    plain = re.sub(r"^(total = |print\(f\"memory|torch\.cuda\.reset).*$", "", plain, flags=re.M)
    plain = plain.replace("torch.cuda.get_device_capability()", "(0, 0)")
    plain = plain.replace("torch.cuda.get_device_name(0)", "'cpu'")
    plain = plain.replace('device="cuda"', 'device="cpu"').replace(".cuda()", "")
    return "import contextlib\n" + plain


def test_cuda_s_own_values_and_contexts_run_on_the_cpu_and_on_trn(tmp_path):
    repo, ported = _port(VALUES, tmp_path)
    assert ported.count("contextlib.nullcontext()") == 3, ported
    assert "else (0, 0)" in ported and "torch.cuda.nvtx.range" in ported, ported

    assert _run(VALUES).returncode != 0
    cpu = _run(repo / "train.py")
    assert cpu.returncode == 0, cpu.stderr[-2000:]
    (tmp_path / "plain.py").write_text(_cpu_recreation(VALUES.read_text()))
    ref = _run(tmp_path / "plain.py")
    assert ref.returncode == 0, ref.stderr[-2000:]
    assert cpu.stdout == ref.stdout and len(_losses(ref.stdout)) == 3
    assert "tf32: False" in cpu.stdout and "GPU: cpu" in cpu.stdout

    trn = _run(repo / "train.py", HN_TRN="1")
    assert trn.returncode == 0, trn.stderr[-2000:]
    assert _losses(trn.stdout) == _losses(ref.stdout)
    assert "tf32: False" in trn.stdout and "GPU: Trainium" in trn.stdout, trn.stdout

    gitutil.git("commit", "-qam", "ported", cwd=repo)
    main([str(repo), "--apply", "--unsafe-fixes", "--force"])
    assert (repo / "train.py").read_text() == ported  # a rerun adds nothing

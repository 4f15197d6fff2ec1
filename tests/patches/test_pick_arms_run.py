"""The accelerator pick over several backends (``pick_arms``), ported and run: the Quickstart's
expression and a get_device() function (tests/patches/fixtures/probes/threeway*.py). The
originals already run on a CPU-only machine (their last arm is the CPU); the ports print the
same there, and on trn (``HN_TRN=1``), which the originals never pick, they pick trn and compute
what the originals compute under autoport. The script's own ``device == "cuda"`` branch stays
CUDA's: on trn it is skipped (autoport's original, which believes it is on CUDA, runs it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from codemod_helpers import FIXTURES, fix

ROOT = Path(__file__).resolve().parents[2]
PROBES = ["threeway.py", "threeway_fn.py"]


def _env(trn: bool) -> dict:
    env = {"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT)}
    return {**env, "HN_TRN": "1"} if trn else env


def _run(args: list[str], cwd: Path, trn: bool = False) -> subprocess.CompletedProcess:
    cmd = [sys.executable, *args]
    r = subprocess.run(cmd, cwd=cwd, env=_env(trn), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return r


@pytest.fixture(scope="module")
def ports(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pick_arms")
    for name in PROBES:
        src = (FIXTURES / "probes" / name).read_text()
        result, _ = fix(src, name)
        assert not result.error, result.error
        assert "torch.cuda.is_available" not in result.after, result.after
        (out / name).write_text(result.after)
    return out


@pytest.mark.parametrize("name", PROBES)
def test_on_the_cpu_the_port_prints_what_the_original_prints(ports, name):
    orig = _run([str(FIXTURES / "probes" / name)], ports)
    port = _run([name], ports)
    assert port.stdout == orig.stdout
    assert "Using cpu device" in port.stdout


@pytest.mark.parametrize("name", PROBES)
def test_on_trn_the_port_picks_trn(ports, name):
    port = _run([name], ports, trn=True).stdout.splitlines()
    orig = _run(
        ["-m", "accelerator_api.autoport", "--quiet", str(FIXTURES / "probes" / name)],
        ports,
        trn=True,
    )
    orig_lines = orig.stdout.splitlines()
    assert port[0] == "Using trn device"
    assert orig_lines[0] == "Using cuda device"  # autoport's original believes it is on CUDA
    assert port[1:] == orig_lines[1 : len(port)]  # the same computation, on trn

"""Scripts whose original stops on a CPU-only machine at lines the port must make safe there.
Round 17's: a device fact reported, ``set_device``, the process group's backend, a sync of the
script's device, a bare sync, devices of an index, a device context, the current index as a
device. Round 18's: the current index shown, a model beside a checkpoint's CUDA entry, a storage
moved in a ``map_location`` lambda, the deprecated default tensor type. Round 19's: two DDP
scripts (``device_ids`` of a CPU module, the device of a local rank; gloo, world size 1, each
run on a free ``MASTER_PORT``). Round 21's: a peak read by ``memory_stats()``'s key (a KeyError
on the CPU's ``{}``). Round 22's: a tensor-parallel script's ``init_device_mesh("cuda", ...)``.
Generate's series is
applied patch by patch with ``git am``: every prefix compiles, and no availability check ends up
inside another (the counters a fact unit reads fall to other rules and patches). Then each port
runs here, where each original fails."""

from __future__ import annotations

import ast
import re
import shutil
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from patches.common import gitutil
from patches.generate.cli import main

FIXTURES = Path(__file__).with_name("fixtures")
# outputs that differ between two runs of the same script: their numbers are not compared
VOLATILE = {
    "examples/mem_info.py": "free memory, and an unseeded tensor on trn",
    "examples/timed.py": "a wall time",
}
# a number as Python prints it (a short wall time is printed in exponent form: 1.5e-05)
NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
# what a port prints on trn only where its accelerator branch ran (the CPU run prints otherwise)
ON_DEVICE = {
    "examples/mem_info.py": "device='trn:0'",
    "examples/gpu_info.py": "Trainium",
    "examples/current_index.py": "device 0",
    "examples/ddp_rank.py": "on trn",
}
SCRIPTS = {  # path in the tree -> fixture
    "examples/gpu_info.py": FIXTURES / "fact_guard" / "script_properties.py",
    "examples/mem_info.py": FIXTURES / "fact_guard" / "script_memory_info.py",
    "examples/set_device.py": FIXTURES / "script_idioms" / "set_device_script.py",
    "examples/ddp_setup.py": FIXTURES / "script_idioms" / "backend_script.py",
    "examples/timed.py": FIXTURES / "script_idioms" / "sync_script.py",
    "examples/indexed.py": FIXTURES / "script_idioms" / "indexed_places.py",
    "examples/device_context.py": FIXTURES / "script_idioms" / "device_context_script.py",
    "examples/current_index.py": FIXTURES / "script_idioms" / "current_index_script.py",
    "examples/checkpoint.py": FIXTURES / "script_idioms" / "rng_checkpoint_script.py",
    "examples/load.py": FIXTURES / "script_idioms" / "map_location_script.py",
    "examples/default_type.py": FIXTURES / "script_idioms" / "default_type_script.py",
    "examples/ddp.py": FIXTURES / "script_ddp" / "ddp_script.py",
    "examples/ddp_rank.py": FIXTURES / "script_ddp" / "rank_device.py",
    "examples/memory_stats.py": FIXTURES / "script_idioms" / "memory_stats_script.py",
    "examples/device_mesh.py": FIXTURES / "script_ddp" / "device_mesh_script.py",
}


def _nested_checks(source: str) -> list[int]:
    """Lines of an ``is_available()`` inside the body of an ``if ...is_available():``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and "is_available" in ast.unparse(node.test):
            for stmt in node.body:
                out += [
                    n.lineno
                    for n in ast.walk(stmt)
                    if isinstance(n, ast.Attribute) and n.attr == "is_available"
                ]
    return out


def free_port() -> str:
    """A free TCP port for a DDP script's ``MASTER_PORT`` (world size 1, gloo on the CPU)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def _run(script: Path, cwd: Path, gpu: bool = False) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "MASTER_PORT": free_port()}
    if not gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return subprocess.run(
        [sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def series(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("facts")
    src = tmp / "src"
    for rel, fixture in SCRIPTS.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(fixture, src / rel)
    repo = gitutil.init_copy(src, tmp / "repo")
    assert main([str(repo), "--out", str(tmp / "series"), "--unsafe-fixes"]) == 0
    return repo, sorted((tmp / "series").glob("*.patch"))


@pytest.fixture(scope="module")
def ported(series, tmp_path_factory) -> Path:
    """A second copy of the scripts with the whole series applied: the run tests do not depend
    on the prefix test having applied it to ``series``' copy first (or on the same worker)."""
    repo, patches = series
    copy = gitutil.init_copy(repo.parent / "src", tmp_path_factory.mktemp("ported") / "repo")
    gitutil.am(copy, patches)
    return copy


def test_series_prefixes_compile_and_check_once(series):
    repo, patches = series
    assert len(patches) >= 3
    for patch in patches:
        gitutil.am(repo, [patch])
        for rel in SCRIPTS:
            compile((repo / rel).read_text(), rel, "exec")
    for rel in SCRIPTS:
        assert _nested_checks((repo / rel).read_text()) == [], rel


def _each_script(tmp_path: Path, pair) -> dict:
    """``pair(rel, fixture, cwd)`` for every script, two at a time (each script in a directory
    of its own: scripts write checkpoints): the runs are separate processes, and a second core
    left idle by the other test worker near the end of the suite takes half of them."""

    def one(item):
        rel, fixture = item
        cwd = tmp_path / rel.replace("/", "_")
        cwd.mkdir()
        return rel, pair(rel, fixture, cwd)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, SCRIPTS.items()))


def test_the_ports_run_where_the_originals_cannot(ported, tmp_path):
    repo = ported
    runs = _each_script(tmp_path, lambda rel, f, cwd: (_run(f, cwd), _run(repo / rel, cwd)))
    for rel, (orig, port) in runs.items():
        assert orig.returncode != 0, rel
        assert port.returncode == 0, f"{rel}: {port.stderr[-2000:]}"


def _trn_env() -> dict:
    root = str(Path(__file__).resolve().parents[2])
    return {
        "PATH": "/usr/bin:/bin",
        "HN_TRN": "1",
        "CUDA_VISIBLE_DEVICES": "",
        "PYTHONPATH": root,
        "MASTER_PORT": free_port(),
    }


@pytest.fixture(scope="module")
def trn_built():
    """Build (or find) the trn native core once, before the runs."""
    r = subprocess.run(
        [sys.executable, "-c", "import kernels.trn"],
        env=_trn_env(),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert r.returncode == 0, r.stderr[-3000:]


def test_on_trn_each_port_prints_what_its_original_prints_under_autoport(
    ported, tmp_path, trn_built
):
    """On an accelerator that is not CUDA (trn, 8 devices), where every availability check of
    the ports is true, each port prints what its original prints when autoport runs it there:
    the branches the CPU run skips are checked, not only run."""
    repo = ported

    def pair(rel, fixture, cwd):
        cmd = [sys.executable, "-m", "accelerator_api.autoport", "--quiet", str(fixture)]
        orig = subprocess.run(cmd, cwd=cwd, env=_trn_env(), capture_output=True, text=True)
        port = subprocess.run(
            [sys.executable, str(repo / rel)],
            cwd=cwd,
            env=_trn_env(),
            capture_output=True,
            text=True,
        )
        return orig, port

    for rel, (orig, port) in _each_script(tmp_path, pair).items():
        assert orig.returncode == port.returncode == 0, f"{rel}: {orig.stderr}{port.stderr}"
        out = [orig.stdout, port.stdout]
        if rel in VOLATILE:
            out = [NUMBER.sub("N", o) for o in out]
        assert out[0] == out[1], rel
        assert ON_DEVICE.get(rel, "") in port.stdout, rel


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the cuda column needs a CUDA device")
def test_on_cuda_each_port_prints_what_its_original_prints(ported, tmp_path):
    """On CUDA, where the checks are true, each port does what its original does (the cuda column,
    tests/benchmarks/cuda_column.sh)."""
    repo = ported
    for rel, fixture in SCRIPTS.items():
        orig, port = _run(fixture, tmp_path, gpu=True), _run(repo / rel, tmp_path, gpu=True)
        assert orig.returncode == port.returncode == 0, f"{rel}: {orig.stderr}{port.stderr}"
        out = [orig.stdout, port.stdout]
        if rel in VOLATILE:
            out = [NUMBER.sub("N", o) for o in out]
        assert out[0] == out[1], rel

"""A script's one ``device`` line (``script_plan``) through the whole pipeline: generate's series
on scripts whose places fall to several rules (HN401, HN501, HN502, HN503: one patch each), applied
patch by patch with ``git am``. Every prefix compiles and binds ``device`` wherever it reads it
(the line lands with the first patch that uses it); the ported script runs on this CPU-only
machine, which the original cannot."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from patches.common import gitutil
from patches.generate.cli import main

FIXTURES = Path(__file__).with_name("fixtures") / "script_idioms"
CORPUS = Path(__file__).with_name("fixtures") / "corpus"
# with two corpus scripts whose other families write `device` too (the legacy type aliases,
# CUDA's AMP entry points)
PATHS = [
    *(
        FIXTURES / n
        for n in (
            "places_all.py",
            "to_cuda_mixed.py",
            "factory_mixed.py",
            "amp_alias.py",
            "indexed_places.py",
        )
    ),
    CORPUS / "gan_style.py",
    CORPUS / "finetune_cls.py",
]
SCRIPTS = [p.name for p in PATHS]


def _reads_unbound_device(source: str) -> bool:
    """The module reads ``device`` and binds it nowhere."""
    tree = ast.parse(source)
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "device"]
    return any(isinstance(n.ctx, ast.Load) for n in names) and not any(
        isinstance(n.ctx, ast.Store) for n in names
    )


@pytest.fixture(scope="module")
def series(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("device_line")
    src = tmp / "src"
    src.mkdir()
    for path in PATHS:
        shutil.copy(path, src / path.name)
    repo = gitutil.init_copy(src, tmp / "repo")
    assert main([str(repo), "--out", str(tmp / "series"), "--unsafe-fixes"]) == 0
    return repo, sorted((tmp / "series").glob("*.patch"))


def test_every_prefix_binds_the_device_it_reads(series):
    repo, patches = series
    assert len(patches) >= 4  # the places fall to several rules: several steps
    for patch in patches:
        gitutil.am(repo, [patch])
        for name in SCRIPTS:
            text = (repo / name).read_text()
            compile(text, name, "exec")
            assert not _reads_unbound_device(text), f"{patch.name}: {name} reads an unbound device"
    for name in SCRIPTS:  # one device line per script
        top = [s for s in ast.parse((repo / name).read_text()).body if isinstance(s, ast.Assign)]
        assert [ast.unparse(s.targets[0]) for s in top].count("device") == 1, name
    final = (repo / "places_all.py").read_text()
    nodes = list(ast.walk(ast.parse(final)))
    assert not [n for n in nodes if isinstance(n, ast.Constant) and n.value == "cuda"]
    assert not [n for n in nodes if isinstance(n, ast.Attribute) and n.attr == "cuda"]


def _run(script: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_port_runs_where_the_original_cannot(series, tmp_path):
    repo, _ = series
    # CUDA's own device on a machine without one
    assert _run(FIXTURES / "places_all.py", tmp_path).returncode != 0
    ported = _run(repo / "places_all.py", tmp_path)
    assert ported.returncode == 0, ported.stderr[-2000:]

"""The ``families/fact_guard.py`` rewrite family: a device fact a script only reports, checked
with its readers (tests/patches/fixtures/fact_guard/); and the series on such scripts, applied
patch by patch, whose ports run on this CPU-only machine where the originals stop."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from patches.common import gitutil
from patches.generate.cli import main
from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("fact_guard"))
def test_fixture(case):
    check("fact_guard", case)


FIXTURES = Path(__file__).with_name("fixtures")
SCRIPTS = {  # path in the tree -> fixture
    "examples/gpu_info.py": FIXTURES / "fact_guard" / "script_properties.py",
    "examples/mem_info.py": FIXTURES / "fact_guard" / "script_memory_info.py",
    "examples/set_device.py": FIXTURES / "script_idioms" / "set_device_script.py",
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


def _run(script: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin"}
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


def test_series_prefixes_compile_and_check_once(series):
    """The unit's query and the counters it reads fall to different rules (HN107/HN108,
    HN301/HN303): whatever patch lands first, every prefix compiles, and the end holds no check
    inside another."""
    repo, patches = series
    assert len(patches) >= 3
    for patch in patches:
        gitutil.am(repo, [patch])
        for rel in SCRIPTS:
            compile((repo / rel).read_text(), rel, "exec")
    for rel in SCRIPTS:
        assert _nested_checks((repo / rel).read_text()) == [], rel


def test_the_ports_run_where_the_originals_cannot(series, tmp_path):
    repo, _ = series
    for rel, fixture in SCRIPTS.items():
        assert _run(fixture, tmp_path).returncode != 0, rel
        ported = _run(repo / rel, tmp_path)
        assert ported.returncode == 0, f"{rel}: {ported.stderr[-2000:]}"

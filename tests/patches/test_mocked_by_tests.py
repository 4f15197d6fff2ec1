"""A library call of CUDA's API that the tree's own tests replace while they test that module
stays (intent kind ``cuda-mocked``, round 32: sahi's tests set ``torch.cuda.is_available`` to
steer its backend pick); the same call in a module no such test imports is rewritten."""

from __future__ import annotations

import textwrap

from patches.generate import pipeline
from patches.generate.state import Settings

LIBRARY = """\
import torch


def pick() -> str:
    if torch.cuda.is_available():
        return "fast"
    return "slow"
"""

TEST = """\
import torch


def test_pick(monkeypatch):
    from pkg.backend import pick

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert pick() == "fast"
"""


def test_a_call_the_tests_replace_stays(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/backend.py").write_text(LIBRARY)
    (tmp_path / "pkg/other.py").write_text(LIBRARY)  # no test imports it
    (tmp_path / "tests/test_backend.py").write_text(textwrap.dedent(TEST))
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    assert not run.plan.unaccounted(run.report.findings)
    finals = run.plan.finals
    assert "torch.accelerator.is_available()" in finals["pkg/other.py"]
    assert finals.get("pkg/backend.py", LIBRARY) == LIBRARY
    left = [x for x in run.plan.left if x.finding.path == "pkg/backend.py"]
    assert any("tests/test_backend.py replaces torch.cuda.is_available" in x.reason for x in left)

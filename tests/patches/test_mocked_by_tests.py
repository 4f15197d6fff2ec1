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


FAKE_TORCH_TEST = """\
import sys
import types
from unittest.mock import patch

from pkg import cli


def test_cli_on_cpu():
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: False))
    with patch.dict(sys.modules, {"torch": fake}):
        assert cli.main() == "cpu"
"""

CLI = """\
def main():
    import torch

    return "cuda:0" if torch.cuda.is_available() else "cpu"
"""

SET_UP_TEST = """\
import unittest
from unittest.mock import patch

import torch


class TestPlacement(unittest.TestCase):
    def setUp(self):
        p = patch("torch.cuda.is_available", return_value=True)
        p.start()
        self.addCleanup(p.stop)

    def test_picks_the_index(self):
        assert pick(device="cuda:7") is not None


class TestOther(unittest.TestCase):
    def test_places(self):
        assert pick(device="cuda:7") is not None
"""


def test_a_fake_torch_module_stands_in_for_every_cuda_call(tmp_path):
    """A test that swaps ``torch`` itself in ``sys.modules`` for a fake with only ``cuda``
    tests the CUDA calls of the modules it imports: they stay (funasr's CLI, round 33)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/cli.py").write_text(CLI)
    (tmp_path / "pkg/other.py").write_text(CLI)  # no test imports it
    (tmp_path / "tests/test_cli.py").write_text(FAKE_TORCH_TEST)
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    finals = run.plan.finals
    assert "torch.accelerator.is_available()" in finals["pkg/other.py"]
    assert finals.get("pkg/cli.py", CLI) == CLI
    left = [x for x in run.plan.left if x.finding.path == "pkg/cli.py"]
    assert any("tests/test_cli.py replaces torch while" in x.reason for x in left)


def test_a_patch_started_in_set_up_stands_in_for_the_class(tmp_path):
    """A ``torch.cuda`` patch a test class starts in ``setUp`` covers each of its tests; a class
    with no such set-up is ported (funasr's submodel-device tests, round 33)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_place.py").write_text(SET_UP_TEST)
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    final = run.plan.finals["tests/test_place.py"].splitlines()
    assert final[13] == '        assert pick(device="cuda:7") is not None', final[13]
    assert final[18] != '        assert pick(device="cuda:7") is not None', final[18]

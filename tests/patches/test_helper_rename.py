"""The private helper rename (``patches/generate/helper_rename.py``): a tree-level unit. The
fixtures (tests/patches/fixtures/helper_rename/) form one tree in torch's own shape: a base class
with a private CUDA-named method and a module helper, two subclasses in other files calling them,
and look-alike negatives (a private helper whose body stays CUDA, a public ``cuda_*`` name, members
defined outside the tree)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patches.generate import pipeline
from patches.generate.explain import explain
from patches.generate.helper_rename import candidate, new_name
from patches.generate.state import Settings
from tests.patches.codemod_helpers import FIXTURES, diff
from tests.patches.family_fixtures import tree_cases, write_tree

FOLDER = FIXTURES / "helper_rename"
PACKAGES = ("torch", "torch/optim", "torch/utils")


def _cases() -> list[Path]:
    return tree_cases("helper_rename")


def _tree(root: Path, cases: list[Path]) -> dict[str, Path]:
    return write_tree(root, cases, PACKAGES)


def _generate(root: Path, unsafe: bool = True):
    run = pipeline.generate(Settings(root, unsafe_fixes=unsafe))
    assert not run.plan.unaccounted(run.report.findings)
    return run


def test_names():
    assert candidate("_cuda_graph_capture_health_check")
    assert candidate("_sync_cuda") and candidate("_is_cuda_ready")
    assert not candidate("cuda_sync")  # public
    assert not candidate("__cuda__")
    assert not candidate("_cudnn_check") and not candidate("_cudagraph_trees")
    assert new_name("_cuda_graph_capture_health_check") == "_accelerator_graph_capture_health_check"
    assert new_name("_sync_CUDA") == "_sync_ACCELERATOR"


def test_tree(tmp_path):
    """Every fixture as generate leaves it: the expected file, or unchanged (negatives); the
    unit is the first patch; a rerun on the result adds nothing."""
    files = _tree(tmp_path, _cases())
    run = _generate(tmp_path)
    plan = run.plan
    assert plan.patches[0].subject.startswith("[hw-neutral] Rename _cuda_capture_health_check")
    for rel, p in files.items():
        expected = p.with_name(p.stem + ".expected.py")
        got = plan.finals.get(rel, p.read_text())
        want = expected.read_text() if expected.exists() else p.read_text()
        assert got == want, f"{p.name}\n" + diff(want, got)
        compile(got, rel, "exec")
        (tmp_path / rel).write_text(got)
    again = _generate(tmp_path)
    assert again.plan.patches == [], [x.subject for x in again.plan.patches]


def test_every_prefix_keeps_the_callers_working(tmp_path):
    """The definition and its alias land in the same patch as the callers (or before them)."""
    _tree(tmp_path, _cases())
    first = _generate(tmp_path).plan.patches[0]
    paths = [c.path for c in first.changes]
    assert paths[0] == "torch/optim/optimizer.py"
    assert {"torch/optim/lion.py", "torch/optim/adafactor.py"} <= set(paths)


def test_safe_mode_renames_nothing(tmp_path):
    files = _tree(tmp_path, _cases())
    plan = _generate(tmp_path, unsafe=False).plan
    for rel in files:
        assert plan.finals.get(rel, (tmp_path / rel).read_text()) == (tmp_path / rel).read_text()


def test_callers_alone_are_left(tmp_path):
    """Without the definition in the tree the call is a member defined elsewhere: left."""
    _tree(tmp_path, [FOLDER / "sub_adafactor.py"])
    plan = _generate(tmp_path).plan
    assert plan.patches == []
    assert any(x.finding.rule == "HN520" for x in plan.left)


def test_a_named_string_keeps_the_name(tmp_path):
    """A name a string holds (``getattr``, ``mock.patch``) would bypass the rename: left, and
    explain says why."""
    files = _tree(tmp_path, _cases())
    lion = tmp_path / "torch/optim/lion.py"
    lion.write_text(lion.read_text() + '\n\nHOOK = "_cuda_capture_health_check"\n')
    run = _generate(tmp_path)
    assert (
        "torch/optim/adafactor.py" not in run.plan.finals
        or run.plan.finals["torch/optim/adafactor.py"]
        == files["torch/optim/adafactor.py"].read_text()
    )
    out = explain(tmp_path / "torch/optim/adafactor.py", 10, tmp_path)
    assert "named in a string at torch/optim/lion.py" in out, out


@pytest.mark.parametrize("line", [10])
def test_explain_says_rewritten(tmp_path, line):
    _tree(tmp_path, _cases())
    out = explain(tmp_path / "torch/optim/lion.py", line, tmp_path)
    assert "REWRITTEN (private helper rename" in out, out
    assert "self._accelerator_capture_health_check()" in out, out
    out = explain(tmp_path / "torch/utils/_graph_warmup.py", 14, tmp_path)
    assert "not renamed: its body stays CUDA-specific: torch.cuda.CUDAGraph" in out, out


def test_safe_is_a_subset_and_explain_agrees(tmp_path):
    """The property of tests/patches/test_properties.py on this tree."""
    from tests.patches.test_properties import _check_tree

    _tree(tmp_path, _cases())
    safe, unsafe = _check_tree(tmp_path)
    assert not safe and any(rule == "HN520" for _, rule, _, _ in unsafe)


def _translated(src: str) -> str:
    import libcst as cst

    from patches.generate.helper_rename import translate

    func = cst.parse_module(src).body[0]
    new, hits = translate(func, "_accelerator_x")
    assert hits
    return cst.Module(body=[new]).code


def test_translations_need_their_guard():
    """A query that raises without an accelerator is translated only in the body of the
    availability check: not in its ``else``, not before it."""
    from patches.generate.helper_rename import _Untranslatable

    guarded = (
        "def _cuda_x():\n"
        "    if torch.backends.cuda.is_built() and torch.cuda.is_available():\n"
        "        torch.cuda.synchronize()\n"
    )
    assert _translated(guarded) == (
        "def _accelerator_x():\n"
        "    if torch.accelerator.is_available():\n"
        "        torch.accelerator.synchronize()\n"
    )
    # a step before may have made the check neutral already: still the guard
    assert "torch.accelerator.synchronize()" in _translated(
        "def _cuda_x():\n    if torch.accelerator.is_available():\n        torch.cuda.synchronize()\n"
    )
    for src in (
        "def _cuda_x():\n    if torch.cuda.is_available():\n        pass\n"
        "    else:\n        torch.cuda.synchronize()\n",
        "def _cuda_x():\n    torch.cuda.synchronize()\n",
        "def _cuda_x():\n    if not torch.cuda.is_available():\n        torch.cuda.synchronize()\n",
    ):
        with pytest.raises(_Untranslatable):
            _translated(src)


def test_messages_only_in_prose():
    """``CUDA`` in a sentence reads ``accelerator``; a bare word (compared, looked up) stays."""
    src = (
        "def _cuda_x(kind):\n"
        "    if torch.cuda.is_available() and kind != 'CUDA':\n"
        "        raise RuntimeError('no CUDA graph here')\n"
    )
    out = _translated(src)
    assert "kind != 'CUDA'" in out and "'no accelerator graph here'" in out, out


GATED_TEST = """import pytest
import torch


def _gpu_cuda():
    if not torch.cuda.is_available():
        return False
    return True


@pytest.mark.skipif(not _gpu_cuda(), reason="needs a GPU")
def test_sum():
    x = torch.ones(2).cuda()
    assert x.sum().item() == 2
"""


def test_a_test_module_s_gate_helper_is_renamed_without_an_alias_in_one_run(tmp_path):
    """A skip-gate helper of a test module renamed neutral: no alias (nothing outside the tree
    imports it), and the tests it gates are judged by its new name in the same run, so a rerun
    adds nothing (unsloth-zoo's ``_bnb_cuda``, round 38)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_gate.py").write_text(GATED_TEST)
    run = _generate(tmp_path)
    got = run.plan.finals["tests/test_gate.py"]
    assert "def _gpu_accelerator():" in got and "skipif(not _gpu_accelerator()" in got
    assert "_gpu_cuda" not in got and "deprecated" not in got
    assert ".cuda()" not in got, got
    (tmp_path / "tests" / "test_gate.py").write_text(got)
    assert _generate(tmp_path).plan.patches == []

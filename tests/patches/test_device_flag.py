"""The device-flag family (``families/device_flag.py``, HN510): a boolean CUDA switch becomes a
device type with every caller of the tree. The fixtures (tests/patches/fixtures/device_flag/)
form one tree in torch 2.4's shapes: inductor's C++ code cache (a private switch passed by
keyword, by position and through a ``*args, **kwargs`` forwarder, a dict and a call outside the
tree), its callers in another file, ``GraphLowering``'s ``self.cuda``; and look-alike negatives:
a caller passing ``**options``, a switch that selects ``.cuda()``, a public function, a script's
``use_cuda`` (the script families' own)."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from unittest import mock

import pytest

from patches.generate import pipeline
from patches.generate.codemods.families.device_flag import analyse
from patches.generate.codemods.tree_index import TreeIndex
from patches.generate.explain import explain
from patches.generate.state import Settings
from tests.patches.codemod_helpers import FIXTURES
from tests.patches.family_fixtures import tree_cases, write_tree

FOLDER = FIXTURES / "device_flag"
PACKAGES = ("torch", "torch/_inductor", "torch/utils", "torch/testing")


def _cases() -> list[Path]:
    return tree_cases("device_flag")


def _tree(root: Path, cases: list[Path]) -> dict[str, Path]:
    return write_tree(root, cases, PACKAGES)


def _generate(root: Path, unsafe: bool = True, ignore: tuple[str, ...] = ()):
    run = pipeline.generate(Settings(root, unsafe_fixes=unsafe, ignore=ignore))
    assert not run.plan.unaccounted(run.report.findings)
    return run


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("device_flag")
    files = _tree(root, _cases())
    return root, files, _generate(root)


def test_tree(tree):
    """Every file ends as its ``.expected.py`` (a negative: unchanged by this family)."""
    root, files, run = tree
    for rel, src in files.items():
        want = src.with_name(src.stem + ".expected.py")
        got = run.plan.finals.get(rel, src.read_text())
        if src.name.startswith("negative_"):
            assert "device_type" not in got, rel
        else:
            assert got == want.read_text(), rel


def test_a_second_run_changes_nothing(tree, tmp_path):
    """Idempotent: the rewritten tree gives no patch on the unit's files (the device-type tests
    it wrote are the callers' choice, which device-predicates keeps)."""
    _, files, run = tree
    for rel, text in run.plan.finals.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    for rel, src in files.items():
        if rel not in run.plan.finals:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(src.read_text())
    again = _generate(tmp_path)
    touched = {c.path for p in again.plan.patches for c in p.changes}
    assert not touched & {
        "torch/_inductor/codecache.py",
        "torch/_inductor/autotune_process.py",
        "torch/_inductor/graph.py",
    }


def test_one_patch_holds_the_unit(tree):
    """The parameter, its callers in another file and the attribute land in one patch."""
    _, _, run = tree
    flag = [p for p in run.plan.patches if "device_type" in p.subject]
    assert len(flag) == 1
    paths = {c.path for c in flag[0].changes}
    assert {
        "torch/_inductor/codecache.py",
        "torch/_inductor/autotune_process.py",
        "torch/_inductor/graph.py",
    } <= paths


def _module(text: str, name: str) -> types.ModuleType:
    """The fixture's text run as a module, with a stand-in for the one module it imports
    from outside the tree (``cpp_builder``: records the options it is given)."""
    m = types.ModuleType(name)
    fake = types.ModuleType("torch._inductor.cpp_builder")
    fake.CppTorchOptions = lambda **kw: sorted(kw.items())
    with mock.patch.dict(sys.modules, {"torch._inductor.cpp_builder": fake}):
        exec(compile(text, name, "exec"), m.__dict__)
    return m


def test_behaviour_is_the_same(tree):
    """The rewrite is exact: the old code with ``cuda=x`` and the new with the device type
    build the same commands."""
    root, _, run = tree
    rel = "torch/_inductor/codecache.py"
    old = _module(run.plan.originals[rel], "old_codecache")
    new = _module(run.plan.finals[rel], "new_codecache")
    for flag, dt in ((True, "cuda"), (False, "cpu")):
        assert old.CppCodeCache.load("src", cuda=flag) == new.CppCodeCache.load(
            "src", device_type=dt
        )
        assert old.CppCodeCache.load("src", flag) == new.CppCodeCache.load("src", dt)
        assert old.CppPythonBindingsCodeCache.load_pybinding([], "s", flag) == (
            new.CppPythonBindingsCodeCache.load_pybinding([], "s", dt)
        )
        graph = types.SimpleNamespace(aot_mode=True)
        assert old.AotCodeCompiler.compile(graph, "s", cuda=flag) == (
            new.AotCodeCompiler.compile(graph, "s", device_type=dt)
        )
    assert old.CppCodeCache.load("src") == new.CppCodeCache.load("src")


def test_negatives_say_why(tree):
    root, _, run = tree
    a = analyse(TreeIndex(root), ("cuda", "use_cuda"))
    why = {k: u.why for k, u in a.params.items()}
    assert "**options" in why[("_build", "cuda")]
    assert "CUDA device code" in why[("_test_broadcast_helper", "cuda")]
    assert "public API" in why[("include_paths", "cuda")]
    assert why[("train", "use_cuda")]  # a script's own (public here, and it selects .cuda())
    assert all(not why[k] for k in [("load", "cuda"), ("load_async", "cuda"), ("compile", "cuda")])
    assert a.attrs[("torch._inductor.graph.GraphLowering", "cuda")].ok
    # --explain gives the family's reason, as generate decides
    for rel, needle, why in (
        ("torch/_inductor/kernel_build.py", "def _build(", "a call passes `**options`"),
        ("torch/utils/ext_paths.py", "def include_paths(", "public API"),
        ("torch/_inductor/kernel_build.py", "return _build(source, cuda=False)", "**options"),
    ):
        lines = (root / rel).read_text().splitlines()
        line = next(i for i, t in enumerate(lines, 1) if needle in t)
        text = explain(root / rel, line, root)
        assert "HN510" in text and why in text, text


def test_script_flags_are_the_script_families(tree, tmp_path):
    """A script's ``use_cuda`` is left to the script families: the same text as a run without
    HN510."""
    root, _, run = tree
    rel = "examples/mnist/main.py"
    other = tmp_path / "t"
    _tree(other, _cases())
    without = _generate(other, ignore=("HN510",))
    assert run.plan.finals.get(rel) == without.plan.finals.get(rel)


def test_safe_mode_leaves_it(tmp_path):
    """A review rule: the safe-only run rewrites no switch."""
    _tree(tmp_path, _cases())
    run = _generate(tmp_path, unsafe=False)
    assert all("device_type" not in t for t in run.plan.finals.values())

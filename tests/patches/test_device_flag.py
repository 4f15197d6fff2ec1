"""The device-flag family (``families/device_flag.py``, HN510): a boolean CUDA switch becomes a
device type with every caller of the tree. The fixtures (tests/patches/fixtures/device_flag/)
form one tree in torch 2.4's shapes: inductor's C++ code cache (a private switch passed by
keyword, by position and through a ``*args, **kwargs`` forwarder, a dict and a call outside the
tree), its callers in another file, ``GraphLowering``'s ``self.cuda``; gpytorch's test shape (a
switch picking ``torch.device("cuda") if cuda else torch.device("cpu")``, which becomes
``torch.device(device_type)``) and a private class's ``self.cuda`` picking the same; and
look-alike negatives: a caller passing ``**options``, a switch that selects ``.cuda()`` (its pick
stays), a public function, a script's ``use_cuda`` (the script families' own), a test helper's
switch only handed on to another library's ``cuda=`` (torch-fidelity's)."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from unittest import mock

import pytest
import torch

from patches.generate import pipeline, recount
from patches.generate.codemods.families.device_flag import analyse
from patches.generate.codemods.tree_index import TreeIndex
from patches.generate.explain import TAKEN, explain
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
        "torch/_inductor/kernel_runner.py",
        "test/priors/test_gamma_prior.py",
    }


def test_one_patch_holds_the_unit(tree):
    """The parameter, its callers in another file and the attribute land in one patch."""
    _, _, run = tree
    flag = [
        p
        for p in run.plan.patches
        if "device_type" in p.subject and any(c.path.startswith("torch/") for c in p.changes)
    ]
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
    # only handed on to another library's `cuda=`: converting it would write the test back there
    assert "only handed on" in why[("_check_compiled", "cuda")]
    assert "public API" in why[("synth_batch", "cuda")]  # test_helpers.py holds no tests
    # a private module's function that a public package's __init__ imports is public too
    assert "public API" in why[("record_function", "use_cuda")]
    # handed on by position to a switch that stays (pfn-extras' record_function, round 31)
    assert "only handed on" in why[("traced", "use_cuda")]
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


PRIORS = "test/priors/test_gamma_prior.py"


def _plain(text: str, name: str) -> types.ModuleType:
    m = types.ModuleType(name)
    exec(compile(text, name, "exec"), m.__dict__)
    return m


def test_a_pick_of_the_switch_is_the_device_type(tree):
    """``torch.device("cuda") if cuda else torch.device("cpu")``, ``"cuda" if cuda else
    "cpu"``, ``"cpu" if not cuda else "cuda"`` (``torch.device`` through an alias too) become
    the device type: exact, as every value of the switch is "cuda" or "cpu"; the look-alikes
    (``"cuda:0"``, an index, the other order, mixed arms) give the same values as before too.
    An attribute's pick stays a test (the same value)."""
    _, _, run = tree
    old = _plain(run.plan.originals[PRIORS], "old_priors").TestGammaPrior()
    new = _plain(run.plan.finals[PRIORS], "new_priors").TestGammaPrior()
    assert "torch.device(device_type)" in run.plan.finals[PRIORS]
    for flag, dt in ((True, "cuda"), (False, "cpu")):
        assert old.test_gamma_prior_batch(cuda=flag) == new.test_gamma_prior_batch(device_type=dt)
        assert old.test_gamma_prior_to(cuda=flag) == new.test_gamma_prior_to(device_type=dt)
    assert old.test_gamma_prior_batch() == new.test_gamma_prior_batch()
    rel = "torch/_inductor/kernel_runner.py"
    assert 'if self.device_type == "cuda" else' in run.plan.finals[rel]
    runners = [_plain(run.plan.originals[rel], "old_kr"), _plain(run.plan.finals[rel], "new_kr")]
    a, b = (m._KernelRunner(None) for m in runners)
    assert a.target() == b.target() == torch.device("cpu")
    a.on_gpu(), b.on_gpu()
    assert a.target() == b.target() == torch.device("cuda")


def _line(root: Path, rel: str, needle: str) -> int:
    lines = (root / rel).read_text().splitlines()
    return next(i for i, t in enumerate(lines, 1) if needle in t)


def test_the_arms_findings_go_with_the_pick(tree):
    """The arms' findings (HN503 ``torch.device("cuda")``; HN509 ``"cuda"`` where the scan
    reports one) go with the pick: the summary counts them fixed and ``--explain`` says the
    series takes their line; a look-alike's stay left."""
    root, _, run = tree
    left = {(r, ln) for p, r, ln, _ in recount.counts(run).left_at if p == PRIORS}
    for needle in (
        'device = torch.device("cuda") if cuda',
        'name = "cuda" if cuda',
        'other = "cpu" if not cuda',
        'aliased = Device("cuda")',
    ):
        line = _line(root, PRIORS, needle)
        assert not {r for r, ln in left if ln == line}, needle
        text = explain(root / PRIORS, line, root)
        assert "no finding" in text or TAKEN in text, text
        assert "HN503" in text or "evice(" not in needle, text
    for needle in ("index = ", "ranked = ", "swapped = ", "mixed = "):
        assert {r for r, ln in left if ln == _line(root, PRIORS, needle)}, needle


def test_the_pick_is_accounted_as_explain_says(tmp_path):
    """safe ⊆ unsafe, and generate's summary and ``--explain`` agree on every finding of the
    picks' fixtures, in both modes."""
    from tests.patches.test_properties import _check_tree

    cases = [FOLDER / f"{c}.py" for c in ("test_priors", "kernel_runner", "negative_pick")]
    _tree(tmp_path, cases)
    safe, unsafe = _check_tree(tmp_path)
    assert not safe and unsafe

"""End to end on the minitrain project: scan -> generate -> git am -> rescan, plus the CLI's
--diff/--apply contracts, determinism and bad input. Real git, real scanner, real torch."""

import shutil
from pathlib import Path

import pytest

from patches.common import gitutil
from patches.generate import audit_io
from patches.generate.cli import main

PROJECT = Path(__file__).with_name("project")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A git copy of the project and the series generated for it (review rules included)."""
    tmp = tmp_path_factory.mktemp("e2e")
    repo = gitutil.init_copy(PROJECT, tmp / "minitrain")
    rc = main([str(repo), "--out", str(tmp / "series"), "--unsafe-fixes", "--max-files", "1"])
    assert rc == 0
    return tmp, repo


def test_series_applies_with_git_am_and_rescan_is_clean(generated, tmp_path):
    tmp, repo = generated
    rules = audit_io.load_rules()
    before = audit_io.scan_tree(repo, list(rules.values()))
    names = (tmp / "series" / "series").read_text().split()
    assert names and all((tmp / "series" / n).is_file() for n in names)
    work = gitutil.init_copy(repo, tmp_path / "work", ignore=shutil.ignore_patterns(".git"))
    gitutil.am(work, [tmp / "series" / n for n in names])
    subjects = gitutil.log_subjects(work, len(names))
    assert all(s.startswith("[hw-neutral] Use ") for s in subjects)
    assert "[hw-neutral] Use torch.accelerator.synchronize in minitrain (part 1/2)" in subjects
    after = audit_io.scan_tree(work, list(rules.values()))
    fixed = {"HN105", "HN202", "HN301", "HN401", "HN501"}
    assert fixed <= set(before.counts("rule"))
    assert not fixed & set(after.counts("rule")), after.counts("rule")
    # What has no mechanical fix is still reported, and so is the gate that guards CUDA-only
    # code: test_time still moves its tensor to "cuda" after its TEST_CUDA gate, so both stay.
    assert {"HN402", "HN502"} <= set(after.counts("rule"))
    # empty_cache() is a no-op without CUDA where the neutral one raises: the bare statement
    # becomes the neutral call under an is_available() check (guarded-cache), so a CPU-only
    # run still passes through it.
    assert "HN302" in before.counts("rule") and "HN302" not in after.counts("rule")
    runtime = (work / "minitrain" / "runtime.py").read_text()
    assert (
        "    if torch.accelerator.is_available():\n        torch.accelerator.empty_cache()\n"
        in (runtime)
    )
    # (line 25: the test module is under PyTorch's formatter, so its rewritten import is
    # wrapped as ruff wraps it, pytorch_style.conform)
    assert [f.line for f in after.findings if f.rule == "HN704"] == [25]
    # A unit is neutral as a whole or stays CUDA: no line hands a CUDA value to a neutral API.
    for p in work.rglob("*.py"):
        for ln in p.read_text().splitlines():
            assert not ("torch.accelerator" in ln and ("torch.cuda" in ln or '"cuda' in ln)), ln
    # pick_device's unit (is_available, set_device, device_count, torch.device("cuda", i)) has
    # a neutral form as a whole, so it is rewritten as a whole.
    assert (before.counts("rule")["HN101"], after.counts("rule")["HN101"]) == (2, 0)
    for p in work.rglob("*.py"):
        compile(p.read_text(), str(p), "exec")
    # Idempotent: the rewritten tree yields an empty series.
    assert main([str(work), "--out", str(tmp_path / "again"), "--unsafe-fixes"]) == 0
    assert (tmp_path / "again" / "series").read_text() == ""


def test_commit_message_carries_why_rules_sites_and_test_plan(generated):
    tmp, _ = generated
    sync = sorted((tmp / "series").glob("*synchronize-in-mini*.patch"))[0].read_text()
    assert "Rule: HN105 (cuda-synchronize)" in sync
    # line 23 of the text the patch applies to: pick_device's patch before it wrapped its
    # rewritten `return torch.device(...)` at the file's own limit (project_style: 88, as no
    # line of runtime.py is longer), three lines more than the original's line 20
    assert "  minitrain/runtime.py:23: torch.cuda.synchronize(device=device)" in sync
    assert (
        f"Test Plan:\npython -m patches.validate --tree {tmp / 'minitrain'} "
        f"--series {tmp / 'series'} --devices cpu,trn\n" in sync
    )


def test_rerun_is_byte_identical_and_max_files_caps(generated):
    tmp, repo = generated
    first = {p.name: p.read_bytes() for p in (tmp / "series").iterdir()}
    rerun = tmp / "rerun"
    (tmp / "series").rename(rerun)  # same --out path again: the Test Plan names it
    try:
        assert (
            main([str(repo), "--out", str(tmp / "series"), "--unsafe-fixes", "--max-files", "1"])
            == 0
        )
        second = {p.name: p.read_bytes() for p in (tmp / "series").iterdir()}
    finally:
        shutil.rmtree(tmp / "series", ignore_errors=True)
        rerun.rename(tmp / "series")
    assert first == second
    assert all(b.count(b"\ndiff --git ") <= 1 for n, b in first.items() if n.endswith(".patch"))


def test_safe_only_by_default(tmp_path, capsys):
    repo = gitutil.init_copy(PROJECT, tmp_path / "p")
    assert main([str(repo), "--out", str(tmp_path / "s")]) == 0
    text = "".join(p.read_text() for p in sorted((tmp_path / "s").glob("*.patch")))
    assert "+    torch.accelerator.synchronize(device)" in text
    assert "+    torch.accelerator.empty_cache()" not in text
    assert "review rule: rerun with --unsafe-fixes" in capsys.readouterr().err


def test_diff_exit_code_and_apply_refuses_dirty_tree(tmp_path, capsys):
    repo = gitutil.init_copy(PROJECT, tmp_path / "p")
    assert main([str(repo), "--diff"]) == 1
    out = capsys.readouterr().out
    assert (
        "-    torch.cuda.synchronize(device=device)\n+    torch.accelerator.synchronize(device)\n"
        in out
    )
    (repo / "minitrain" / "runtime.py").write_text(
        (repo / "minitrain" / "runtime.py").read_text() + "\n"
    )
    orig = (repo / "minitrain" / "timing.py").read_text()
    assert main([str(repo), "--apply"]) == 2
    assert "refusing --apply on a dirty git tree" in capsys.readouterr().err
    assert (repo / "minitrain" / "timing.py").read_text() == orig
    assert main([str(repo), "--apply", "--force"]) == 0
    assert "torch.accelerator.synchronize()" in (repo / "minitrain" / "timing.py").read_text()
    assert main([str(repo), "--diff"]) == 0


def test_unparseable_and_undecodable_files_are_reported_and_skipped(tmp_path, capsys):
    root = tmp_path / "t"
    root.mkdir()
    (root / "bad.py").write_text("import torch\ntorch.cuda.synchronize(\n")
    (root / "latin.py").write_bytes(b"import torch\nx = '\xe9'\ntorch.cuda.synchronize()\n")
    (root / "good.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    assert main([str(root), "--out", str(tmp_path / "s")]) == 0
    err = capsys.readouterr().err
    assert "error bad.py: syntax" in err and "error latin.py: encoding" in err
    patch = "".join(p.read_text() for p in (tmp_path / "s").glob("*.patch"))
    assert "good.py" in patch and "bad.py" not in patch and "latin.py" not in patch
    assert (root / "bad.py").read_text() == "import torch\ntorch.cuda.synchronize(\n"


def test_bad_arguments_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path)])  # no --out/--diff/--apply
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path), "--diff", "--author", "nobody"])
    assert e.value.code == 2
    assert main([str(tmp_path / "missing"), "--diff"]) == 2


def test_scan_is_the_audits_own_driver_with_its_config_excludes(tmp_path, capsys):
    root = tmp_path / "t"
    (root / "vendored").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.hwneutral]\nexclude = ["vendored"]\n')
    for rel in ("a.py", "vendored/b.py"):
        (root / rel).write_text("import torch\ntorch.cuda.synchronize()\n")
    report = audit_io.scan_tree(root, list(audit_io.load_rules().values()))
    assert {f.path for f in report.findings} == {"a.py"}
    assert main([str(root), "--diff"]) == 1
    out = capsys.readouterr().out
    assert "a/a.py" in out and "vendored" not in out
    (root / "pyproject.toml").write_text("[tool.hwneutral\n")
    assert main([str(root), "--diff"]) == 2
    assert "error:" in capsys.readouterr().err

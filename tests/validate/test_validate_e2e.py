"""End to end: a git project with CUDA-only tests, a series, `python -m patches.validate`."""
from __future__ import annotations

import pytest

from validate_helpers import WRONG_EDITS, generate_series, make_repo, run_validate, \
    series_from_edit


@pytest.fixture(scope="module")
def neutral_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e")
    repo = make_repo(tmp / "repo")
    series, origin = generate_series(repo, tmp / "series")
    head = (repo / ".git" / "HEAD").read_text()
    rc, report, err = run_validate("--tree", str(repo), "--series", str(series),
                                   "--devices", "cpu,trn,cuda")
    return repo, head, origin, rc, report, err


def _by(report, device):
    return {c["test"]: c for c in report["comparisons"] if c["device"] == device}


def test_neutral_series_has_no_cpu_regression(neutral_run):
    repo, _, origin, rc, report, err = neutral_run
    assert rc == 0, err
    assert report["summary"]["regression"] == 0, (origin, report["summary"])
    cpu = _by(report, "cpu")
    # the CPU column ran and kept passing what passed before
    assert cpu["tests.test_scale_device.TestScaleCPU::test_pick_device_allocates_cpu"][
        "after"] == "pass"
    assert cpu["tests.test_scale_device.TestScaleCPU::test_scale_stays_on_device_cpu"][
        "after"] == "skip"
    # selection: touched tests plus importers of devlib, not the unrelated file
    sel = report["selection"]["tests"]
    assert set(sel) == {"tests/test_scale_device.py", "tests/test_move.py"}, sel
    assert not (repo / "tests" / "__pycache__").exists()  # the user's tree was not run in


def test_unavailable_cuda_is_an_absent_column(neutral_run):
    _, _, _, rc, report, _ = neutral_run
    cuda = report["devices"]["cuda"]
    if cuda["available"]:
        pytest.skip("a GPU is present here")
    assert "cuda" in cuda["detail"]
    assert not _by(report, "cuda") and rc == 0


def test_neutral_series_gains_trn_tests(neutral_run):
    _, _, origin, _, report, _ = neutral_run
    trn = report["devices"]["trn"]
    if not trn["available"]:
        pytest.skip(f"trn cannot boot in this checkout: {trn['detail']}")
    gains = {c["test"] for c in report["comparisons"]
             if c["device"] == "trn" and c["change"] == "gain"}
    assert any("test_scale_stays_on_device" in t for t in gains), (origin, gains)
    assert "tests.test_move.TestMove::test_roundtrip" in gains, (origin, gains)


def test_user_tree_untouched(neutral_run):
    repo, head, *_ = neutral_run
    assert (repo / ".git" / "HEAD").read_text() == head
    assert "onlyCUDA" in (repo / "tests" / "test_scale_device.py").read_text()
    assert not (repo / ".git" / "worktrees").exists()


def test_wrong_patch_regression_is_caught(tmp_path):
    repo = make_repo(tmp_path / "repo")
    series = series_from_edit(repo, tmp_path / "series", WRONG_EDITS, "Drop the CPU fallback")
    rc, report, err = run_validate("--tree", str(repo), "--series", str(series),
                                   "--devices", "cpu")
    assert rc == 1, err
    regs = [c for c in report["comparisons"] if c["change"] == "regression"]
    assert [c["test"] for c in regs] == [
        "tests.test_scale_device.TestScaleCPU::test_pick_device_allocates_cpu"]
    assert regs[0]["before"] == "pass" and regs[0]["after"] in ("fail", "error")
    assert "AttributeError" in regs[0]["message"]
    assert "REGRESSION cpu: tests.test_scale_device.TestScaleCPU::test_pick_device_allocates_cpu" \
        in err


def test_series_that_does_not_apply_exits_2(tmp_path):
    repo = make_repo(tmp_path / "repo")
    series = series_from_edit(repo, tmp_path / "series", WRONG_EDITS, "x")
    (repo / "devlib" / "ops.py").write_text("import torch\n")
    from validate_helpers import git
    git(repo, "commit", "-qam", "diverge")
    rc, report, err = run_validate("--tree", str(repo), "--series", str(series),
                                   "--devices", "cpu")
    assert rc == 2 and "does not apply" in err and not report

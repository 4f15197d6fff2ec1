"""End to end: a git project with CUDA-only tests, a series, `python -m patches.validate`."""

from __future__ import annotations

import pytest
from hn_skip import skip_environment
from validate_helpers import (
    NEUTRAL_EDITS,
    WRONG_EDITS,
    generate_series,
    make_repo,
    run_validate,
    series_from_edit,
)


def _by(report, device):
    return {c["test"]: c for c in report["comparisons"] if c["device"] == device}


def _trn_or_skip(report):
    trn = report["devices"]["trn"]
    if not trn["available"]:
        skip_environment(f"trn cannot boot in this checkout: {trn['detail']}")


@pytest.fixture(scope="module")
def generated_run(tmp_path_factory):
    """The series patches.generate writes for project/, validated on cpu and trn."""
    tmp = tmp_path_factory.mktemp("gen")
    repo = make_repo(tmp / "repo")
    series, origin = generate_series(repo, tmp / "series")
    assert series is not None, origin  # a crash of patches.generate is a bug, never a skip
    head = (repo / ".git" / "HEAD").read_text()
    rc, report, err = run_validate(
        "--tree", str(repo), "--series", str(series), "--devices", "cpu,trn"
    )
    assert rc in (0, 1), err
    return repo, head, rc, report, err


@pytest.fixture(scope="module")
def neutral_run(tmp_path_factory):
    """The hand-written reference change, validated on trn and (absent here) cuda."""
    tmp = tmp_path_factory.mktemp("ref")
    repo = make_repo(tmp / "repo")
    series = series_from_edit(repo, tmp / "series", NEUTRAL_EDITS, "Make devlib device-generic")
    rc, report, err = run_validate(
        "--tree", str(repo), "--series", str(series), "--devices", "trn,cuda"
    )
    return rc, report, err


def test_generated_series_has_no_cpu_regression(generated_run):
    repo, _, rc, report, err = generated_run
    assert report["summary"]["by_device"]["cpu"]["regression"] == 0, err
    cpu = _by(report, "cpu")
    assert (
        cpu["tests.test_scale_device.TestScaleCPU::test_pick_device_allocates_cpu"]["after"]
        == "pass"
    )
    assert (
        cpu["tests.test_scale_device.TestScaleCPU::test_scale_stays_on_device_cpu"]["after"]
        == "skip"
    )
    # selection: touched tests plus importers of devlib, not the unrelated file; test_move.py
    # is touched since round 21 (a user's `.cuda()` with no device goes to the current
    # accelerator, and its CUDA gate with it)
    sel = report["selection"]["tests"]
    assert set(sel) == {"tests/test_scale_device.py", "tests/test_move.py"}, sel
    assert not (repo / "tests" / "__pycache__").exists()  # the user's tree was not run in


def test_generated_series_gains_trn_tests_without_regression(generated_run):
    """No regression on any device (the HN101 device pick once kept "cuda" and failed on trn),
    and the gains the hand-written reference change also gets: test_scale_device's and
    test_move's roundtrip (its `.cuda()` and skip ported since round 21)."""
    _, _, rc, report, err = generated_run
    _trn_or_skip(report)
    assert rc == 0, err
    by_device = report["summary"]["by_device"]
    assert by_device["cpu"]["regression"] == by_device["trn"]["regression"] == 0, err
    trn = _by(report, "trn")
    gains = {t for t, c in trn.items() if c["change"] == "gain"}
    assert gains == {
        "tests.test_scale_device.TestScalePRIVATEUSE1::test_scale_stays_on_device_trn",
        "tests.test_move.TestMove::test_roundtrip",
    }, (gains, err)
    pick = trn["tests.test_scale_device.TestScalePRIVATEUSE1::test_pick_device_allocates_trn"]
    assert (pick["before"], pick["after"]) == ("pass", "pass"), pick


def test_reference_change_gains_on_trn_without_regression(neutral_run):
    rc, report, err = neutral_run
    _trn_or_skip(report)
    assert rc == 0, err
    gains = {
        c["test"] for c in report["comparisons"] if c["device"] == "trn" and c["change"] == "gain"
    }
    assert any("test_scale_stays_on_device" in t for t in gains), gains
    assert "tests.test_move.TestMove::test_roundtrip" in gains, gains


def test_cuda_column_is_absent_without_a_gpu_and_filled_with_one(neutral_run):
    rc, report, _ = neutral_run
    cuda = report["devices"]["cuda"]
    if cuda["available"]:  # a GPU here: the column has outcomes like any device's
        assert _by(report, "cuda"), cuda
        return
    assert "cuda" in cuda["detail"]
    assert not _by(report, "cuda")


def test_user_tree_untouched(generated_run):
    repo, head, *_ = generated_run
    assert (repo / ".git" / "HEAD").read_text() == head
    assert "onlyCUDA" in (repo / "tests" / "test_scale_device.py").read_text()
    assert not (repo / ".git" / "worktrees").exists()


def test_wrong_patch_regression_is_caught(tmp_path):
    repo = make_repo(tmp_path / "repo")
    series = series_from_edit(repo, tmp_path / "series", WRONG_EDITS, "Drop the CPU fallback")
    rc, report, err = run_validate("--tree", str(repo), "--series", str(series), "--devices", "cpu")
    assert rc == 1, err
    regs = [c for c in report["comparisons"] if c["change"] == "regression"]
    assert [c["test"] for c in regs] == [
        "tests.test_scale_device.TestScaleCPU::test_pick_device_allocates_cpu"
    ]
    assert regs[0]["before"] == "pass" and regs[0]["after"] in ("fail", "error")
    assert "AttributeError" in regs[0]["message"]
    assert (
        "REGRESSION cpu: tests.test_scale_device.TestScaleCPU::test_pick_device_allocates_cpu"
        in err
    )


def test_series_that_does_not_apply_exits_2(tmp_path):
    repo = make_repo(tmp_path / "repo")
    series = series_from_edit(repo, tmp_path / "series", WRONG_EDITS, "x")
    (repo / "devlib" / "ops.py").write_text("import torch\n")
    from validate_helpers import git

    git(repo, "commit", "-qam", "diverge")
    rc, report, err = run_validate("--tree", str(repo), "--series", str(series), "--devices", "cpu")
    assert rc == 2 and "does not apply" in err and not report

"""A run that does not finish is no verdict: validate and prove must not call it a pass."""

from __future__ import annotations

from validate_helpers import git, run_validate

from patches.validate.report.markdown import render_markdown


def _repo(tmp_path):
    """A project whose test hangs before the change and passes after it."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "mod.py").write_text("HANG = True\n")
    (repo / "tests" / "test_m.py").write_text(
        "import time\n\nimport mod\n\n\n"
        "def test_a_hangs_before():\n    if mod.HANG:\n        time.sleep(300)\n\n\n"
        "def test_b_never_reached_before():\n    assert not mod.HANG\n"
    )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "mod.py").write_text("HANG = False\n")
    git(repo, "commit", "-q", "-am", "Stop hanging")
    out = tmp_path / "series"
    names = git(repo, "format-patch", "-1", "-o", str(out)).split()
    (out / "series").write_text("".join(n.rsplit("/", 1)[-1] + "\n" for n in names))
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    return repo, out


def test_a_before_run_that_times_out_is_incomplete_not_gains(tmp_path):
    repo, series = _repo(tmp_path)
    rc, report, err = run_validate(
        "--tree", str(repo), "--series", str(series), "--devices", "cpu", "--timeout", "20",
        "--tests", "tests/test_m.py", "--no-coverage",
    )  # fmt: skip
    s = report["summary"]
    # before: test_a killed (error), test_b never ran; after: both pass. Read naively that is
    # two "gains"; a regression in test_b could not have been seen, so there is no verdict.
    assert rc == 1, err
    assert s["incomplete"] == ["cpu before: timed out in tests.test_m::test_a_hangs_before"], s
    assert "INCOMPLETE cpu before: timed out" in err
    assert [r["incomplete"] for r in report["runs"]] == [
        "timed out in tests.test_m::test_a_hangs_before",
        "",
    ]
    assert "**Incomplete** (no verdict" in render_markdown(report)  # the PR's test plan too

"""The format-patch writer against real git: git am / git apply accept it, byte-identical reruns."""

import subprocess

import pytest

from patches.common import gitutil
from patches.generate.series import (
    FileChange,
    Patch,
    blob_id,
    patch_filename,
    resolve_date,
    write_series,
)

BEFORE = "import torch\n\n\ndef f():\n    torch.cuda.synchronize()\n    return 1\n"
AFTER = BEFORE.replace("torch.cuda.synchronize", "torch.accelerator.synchronize")
NO_EOL = "x = 1\ny = 'cuda'"


def _tree(tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text(BEFORE)
    (src / "pkg" / "b.py").write_text(NO_EOL)
    (src / "pkg" / "crlf.py").write_bytes(b"a = 1\r\nb = 'cuda'\r\n")
    return src


def _series():
    return [
        Patch(
            "[hw-neutral] Use torch.accelerator.synchronize in pkg",
            "Why.\n\nTest Plan:\nrun it\n",
            [FileChange("pkg/a.py", BEFORE, AFTER)],
        ),
        Patch(
            "[hw-neutral] Second",
            "Body.\n",
            [
                FileChange("pkg/b.py", NO_EOL, NO_EOL.replace("cuda", "xpu")),
                FileChange("pkg/crlf.py", "a = 1\r\nb = 'cuda'\r\n", "a = 1\r\nb = 'xpu'\r\n"),
            ],
        ),
        Patch(
            "[hw-neutral] Third on top of the first",
            "Body.\n",
            [FileChange("pkg/a.py", AFTER, AFTER.replace("return 1", "return 2"))],
        ),
    ]


def test_git_am_applies_series_in_order_and_keeps_subjects(tmp_path):
    repo = gitutil.init_copy(_tree(tmp_path), tmp_path / "repo")
    paths = write_series(_series(), tmp_path / "out", date="2026-02-03T04:05:06+00:00")
    assert (tmp_path / "out" / "series").read_text().split() == [p.name for p in paths]
    gitutil.am(repo, paths)
    assert gitutil.log_subjects(repo, 3) == [p.subject for p in _series()]
    assert (repo / "pkg" / "a.py").read_text() == AFTER.replace("return 1", "return 2")
    assert (repo / "pkg" / "b.py").read_text() == "x = 1\ny = 'xpu'"
    assert (repo / "pkg" / "crlf.py").read_bytes() == b"a = 1\r\nb = 'xpu'\r\n"
    show = gitutil.git("log", "-1", "--format=%an <%ae>|%aI", "HEAD~2", cwd=repo).stdout.strip()
    assert show == "hwneutral <hwneutral@users.noreply.github.com>|2026-02-03T04:05:06+00:00"


def test_index_lines_are_real_blob_ids(tmp_path):
    (tmp_path / "f").write_text(BEFORE)
    real = subprocess.run(
        ["git", "hash-object", str(tmp_path / "f")], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert blob_id(BEFORE) == real


def test_rerun_is_byte_identical_and_refuses_stale_dir(tmp_path):
    a = write_series(_series(), tmp_path / "a")
    b = write_series(_series(), tmp_path / "b")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    with pytest.raises(FileExistsError):
        write_series(_series(), tmp_path / "a")


def test_git_apply_check_accepts_it_and_stat_counts_match_git(tmp_path):
    repo = gitutil.init_copy(_tree(tmp_path), tmp_path / "repo")
    p = write_series(_series()[1:2], tmp_path / "out")[0]
    gitutil.git("apply", "--check", str(p), cwd=repo)
    numstat = gitutil.git("apply", "--numstat", str(p), cwd=repo).stdout.split("\n")
    assert numstat[:2] == ["1\t1\tpkg/b.py", "1\t1\tpkg/crlf.py"]
    assert " 2 files changed, 2 insertions(+), 2 deletions(-)\n" in p.read_text()


def test_filename_and_dates():
    assert (
        patch_filename(7, "[hw-neutral] Use torch.accelerator.synchronize in torch/utils")
        == "0007-hw-neutral-Use-torch.accelerator.synchronize-in-torc.patch"
    )  # what git names it
    assert resolve_date("0").year == 1970
    with pytest.raises(ValueError):
        resolve_date("yesterday")

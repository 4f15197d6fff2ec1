"""One availability check for neighbouring guarded statements (``patches/generate/guard_merge``)."""

from __future__ import annotations

import shutil

from patches.common import gitutil
from patches.generate import guard_merge
from patches.generate.cli import main

ACC = "if torch.accelerator.is_available():\n"


def test_two_written_guards_become_one():
    before = "def flush():\n    gc.collect()\n    torch.cuda.empty_cache()\n    x()\n"
    after = (
        f"def flush():\n    gc.collect()\n    {ACC}        torch.accelerator.empty_cache()\n"
        f"\n    {ACC}        torch.accelerator.reset_peak_memory_stats()\n    x()\n"
    )
    assert guard_merge.merge(before, after) == (
        f"def flush():\n    gc.collect()\n    {ACC}        torch.accelerator.empty_cache()\n"
        "        torch.accelerator.reset_peak_memory_stats()\n    x()\n"
    )


def test_three_in_a_row_and_a_user_guard_beside_a_written_one():
    user = f"{ACC}    a()\n"
    after = user + f"{ACC}    b()\n{ACC}    c()\n"
    assert guard_merge.merge(user, after) == f"{ACC}    a()\n    b()\n    c()\n"


def test_what_stays_apart():
    # both the user's own (the series wrote a line elsewhere): not the series' to touch
    user = f"{ACC}    a()\n{ACC}    b()\n"
    assert guard_merge.merge(user, user + "z = 1\n") == user + "z = 1\n"
    written = [  # every line new, yet apart:
        f"{ACC}    a()\n# why\n{ACC}    b()\n",  # a comment between
        f"{ACC}    a()\nelse:\n    z()\n{ACC}    b()\n",  # an else
        f"{ACC}    a()\nif torch.cuda.is_available():\n    b()\n",  # another question
        f"{ACC}    a()\ny = 1\n{ACC}    b()\n",  # not neighbours
        "if torch.accelerator.is_available(): a()\n" + f"{ACC}    b()\n",  # one line
    ]
    for text in written:
        assert guard_merge.merge("", text) == text, text


def test_an_else_holding_only_a_written_guard_is_an_elif():
    before = "if mps():\n    a()\nelse:\n    torch.cuda.empty_cache()\n"
    after = f"if mps():\n    a()\nelse:\n    {ACC}        torch.accelerator.empty_cache()\n"
    assert guard_merge.merge(before, after) == (
        f"if mps():\n    a()\nel{ACC}    torch.accelerator.empty_cache()\n"
    )
    user = f"if mps():\n    a()\nelse:\n    {ACC}        b()\n"
    kept = [  # the user's own else-if, a comment on the else, more than the guard in it
        (user, user + "z = 1\n"),
        (before, f"if mps():\n    a()\nelse:  # why\n    {ACC}        b()\n"),
        (before, f"if mps():\n    a()\nelse:\n    {ACC}        b()\n    c()\n"),
    ]
    for old, text in kept:
        assert guard_merge.merge(old, text) == text, text


FLUSH = '''"""A benchmark's flush between runs."""
import gc

import torch


def flush():
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


if __name__ == "__main__":
    flush()
    print("peak", torch.cuda.max_memory_allocated())
'''


def test_a_flush_helper_gets_one_check_and_every_patch_applies(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "bench.py").write_text(FLUSH)
    repo = gitutil.init_copy(src, tmp_path / "repo")
    assert main([str(repo), "--out", str(tmp_path / "series"), "--unsafe-fixes"]) == 0
    names = (tmp_path / "series" / "series").read_text().split()
    assert len(names) >= 2  # empty_cache's and the reset's rules: two patches
    work = gitutil.init_copy(repo, tmp_path / "work", ignore=shutil.ignore_patterns(".git"))
    for name in names:
        gitutil.am(work, [tmp_path / "series" / name])
        compile((work / "bench.py").read_text(), "bench.py", "exec")
    text = (work / "bench.py").read_text()
    assert text.count("torch.accelerator.is_available():") == 1, text
    assert (
        f"    {ACC}        torch.accelerator.empty_cache()\n"
        "        torch.accelerator.reset_peak_memory_stats()\n" in text
    )
    subjects = gitutil.log_subjects(work, len(names))
    assert all(s.endswith("in bench.py") for s in subjects), subjects  # not "in ."

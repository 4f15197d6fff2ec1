"""Per-hunk coverage bookkeeping, sharding, merging, and the run-level failure reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from patches.common.runner import PytestRun, run_tests
from patches.validate import hunks as hk
from patches.validate import merge as merging
from patches.validate.report.junit import render_junit
from patches.validate.selection import shard_tests
from patches.validate.workspace import failed_hunk

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "patches" / "common" / "pytest_plugin"))
from hn_validate_plugin import junit_id  # noqa: E402

PATCH_1 = """From 1 Mon Sep 17 00:00:00 2001
Subject: [PATCH 1/2] one

---
diff --git a/pkg/m.py b/pkg/m.py
--- a/pkg/m.py
+++ b/pkg/m.py
@@ -2,3 +2,4 @@ def f():
 a = 1
-b = 2
+b = 3
+c = 4
 d = 5
@@ -10,2 +11,2 @@
 x = 1
-y = 2
+y = 3
-- 
hwneutral
"""
PATCH_2 = """--- a/pkg/m.py
+++ b/pkg/m.py
@@ -1,2 +1,3 @@
+import os
 first = 0
 a = 1
@@ -4,1 +4,0 @@
-c = 4
"""


def test_parse_reads_bodies_by_count_not_the_signature():
    hs = hk.parse_patch(PATCH_1)
    assert [(h.path, h.old_start, h.new_start) for h in hs] == [
        ("pkg/m.py", 2, 2),
        ("pkg/m.py", 10, 11),
    ]
    assert hs[0].added() == [3, 4]
    assert hs[1].added() == [12]
    assert hs[0].header == "@@ -2,3 +2,4 @@ def f():"
    assert hs[1].kinds == [" ", "-", "+"]  # "-- " of the signature is not a removed line


def test_lines_follow_later_patches_and_vanish_when_removed(tmp_path):
    (tmp_path / "0001.patch").write_text(PATCH_1)
    (tmp_path / "0002.patch").write_text(PATCH_2)
    hs = hk.series_hunks([tmp_path / "0001.patch", tmp_path / "0002.patch"])
    # patch 2 inserts a line at the top (+1) and removes "c = 4" (line 4 after patch 1)
    assert [(h.key(), h.added) for h in hs] == [
        ("0001.patch#1", [4]),
        ("0001.patch#2", [12]),
        ("0002.patch#1", [1]),
        ("0002.patch#2", []),
    ]


def test_map_line_pure_insertion_and_deletion():
    ins = hk.parse_patch("--- a/f\n+++ b/f\n@@ -3,0 +4,2 @@\n+x\n+y\n")
    assert [hk.map_line(n, ins) for n in (1, 3, 4, 10)] == [1, 3, 6, 12]
    dele = hk.parse_patch("--- a/f\n+++ b/f\n@@ -3,2 +2,0 @@\n-x\n-y\n")
    assert [hk.map_line(n, dele) for n in (2, 3, 4, 5)] == [2, None, None, 3]


def test_statements_and_coverage_cells(tmp_path):
    src = "def f(x):\n    y = g(\n        x,\n    )\n    # note\n    return y\n"
    (tmp_path / "m.py").write_text(src)
    h = hk.Hunk("0001.patch", 1, "m.py", "@@ -1,6 +1,6 @@", added=[3, 5])
    hk.attach_statements([h], tmp_path)
    assert h.statements == [3]  # the argument's line owns bytecode; the comment does not
    contexts = {"cpu": {"m.py": {3: {"t::a", "t::b"}}}, "trn": {"m.py": {6: {"t::c"}}}}
    entries = hk.hunk_coverage(
        [h],
        contexts,
        {"cpu": {"t::a"}, "trn": {"t::c"}},
        {"cpu": "measured", "trn": "measured", "cuda": "absent: no GPU"},
    )
    e = entries[0]
    assert e["proven_on"] == ["cpu"]
    assert hk.cell(e, "cpu") == "2 tests (1 passing, 1/1 lines)"
    assert hk.cell(e, "trn") == "**unexercised**"
    assert hk.cell(e, "cuda") == "absent"
    merged = hk.merge_entries(
        [
            entries,
            hk.hunk_coverage(
                [h],
                {"trn": {"m.py": {3: {"t::d"}}}},
                {"trn": {"t::d"}},
                {"cpu": "measured", "trn": "measured"},
            ),
        ]
    )
    assert merged[0]["proven_on"] == ["cpu", "trn"]
    assert merged[0]["devices"]["trn"]["tests"] == ["t::d"]


def test_junit_id_matches_pytest_junitxml():
    assert junit_id("test/test_x.py::TestA::test_b[1-2]") == "test.test_x.TestA::test_b[1-2]"
    assert junit_id("test_x.py::test_f") == "test_x::test_f"


def test_failed_hunk_names_file_and_hunk():
    out = "error: patch failed: pkg/m.py:10\nerror: pkg/m.py: patch does not apply"
    assert failed_hunk(PATCH_1, out) == " at pkg/m.py hunk #2 (@@ -10,2 +11,2 @@)"
    assert "file not found" in failed_hunk(PATCH_1, "error: pkg/n.py: No such file or directory")


def test_shards_are_deterministic_balanced_and_complete(tmp_path):
    sizes = {"a.py": 900, "b.py": 500, "c.py": 400, "d.py": 100}
    for n, size in sizes.items():
        (tmp_path / n).write_text("x" * size)
    tests = sorted(sizes)
    parts = [shard_tests(tests, (i, 2), tmp_path) for i in (1, 2)]
    assert parts == [["a.py", "d.py"], ["b.py", "c.py"]]
    # the input order does not change the assignment
    assert [sorted(shard_tests(tests[::-1], (i, 2), tmp_path)) for i in (1, 2)] == parts
    assert sorted(parts[0] + parts[1]) == tests


def _report(shard, tests, comps, hunks):
    return {
        "tool": "patches.validate",
        "series": ["s/0001.patch"],
        "touched": ["pkg/m.py"],
        "devices": {"cpu": {"name": "cpu", "available": True, "detail": "cpu"}},
        "selection": {"tests": tests, "reasons": {}, "unreadable": {}, "shard": shard},
        "coverage": {"enabled": True, "devices": {"cpu": "measured"}},
        "hunks": hunks,
        "warnings": [],
        "summary": {},
        "comparisons": comps,
        "outcomes": [],
        "runs": [],
        "duration_s": 1.0,
    }


def test_merge_joins_shards_and_refuses_incomplete_sets():
    h = {
        "key": "0001.patch#1",
        "patch": "0001.patch",
        "hunk": 1,
        "path": "pkg/m.py",
        "header": "@@",
        "added_lines": [3],
        "statements": [3],
        "proven_on": [],
    }
    d1 = {
        **h,
        "devices": {
            "cpu": {"state": "measured", "statements_run": [], "tests": [], "passing_tests": []}
        },
    }
    d2 = {
        **h,
        "devices": {
            "cpu": {
                "state": "measured",
                "statements_run": [3],
                "tests": ["t::b"],
                "passing_tests": ["t::b"],
            }
        },
        "proven_on": ["cpu"],
    }
    c1 = {
        "test": "t::a",
        "device": "cpu",
        "before": "pass",
        "after": "pass",
        "change": "unchanged",
        "message": "",
    }
    c2 = {
        "test": "t::b",
        "device": "cpu",
        "before": "fail",
        "after": "pass",
        "change": "gain",
        "message": "",
    }
    r1, r2 = _report("1/2", ["a.py"], [c1], [d1]), _report("2/2", ["b.py"], [c2], [d2])
    m = merging.merge([r1, r2])
    assert m["summary"]["gain"] == 1 and m["summary"]["unchanged"] == 1
    assert m["summary"]["hunks_proven"] == {"cpu": 1}
    assert m["selection"]["tests"] == ["a.py", "b.py"]
    xml = render_junit(m)
    assert 'name="validate.cpu"' in xml and 'name="t::b"' not in xml and 'name="b"' in xml
    with pytest.raises(merging.MergeError, match="need shards 1..2"):
        merging.merge([r1, r1])


def test_timeout_names_the_running_test_and_keeps_finished_ones(tmp_path):
    (tmp_path / "test_hang.py").write_text(
        "import time\n\ndef test_quick():\n    pass\n\ndef test_zhangs():\n    time.sleep(300)\n"
    )
    r = run_tests(
        tmp_path, ["test_hang.py"], "cpu", "after", PytestRun(tmp_path / "runs", timeout=20)
    )
    by = {o.test: o for o in r.outcomes}
    assert r.rc is None and r.running == ["test_hang::test_zhangs"]
    assert by["test_hang::test_quick"].status == "pass"
    assert by["test_hang::test_zhangs"].status == "error"
    assert "timed out after 20s while running this test" in by["test_hang::test_zhangs"].message


def test_collection_error_is_a_row_and_the_other_files_still_run(tmp_path):
    (tmp_path / "test_ok.py").write_text("def test_fine():\n    pass\n")
    (tmp_path / "test_broken.py").write_text("import not_a_module_anywhere_hn\n")
    r = run_tests(
        tmp_path, ["test_broken.py", "test_ok.py"], "cpu", "after", PytestRun(tmp_path / "runs")
    )
    by = {o.test: o.status for o in r.outcomes}
    assert by == {"test_broken::<collection>": "error", "test_ok::test_fine": "pass"}, by


def test_merge_cli_writes_junit_and_markdown(tmp_path):
    h = {
        "key": "0001.patch#1",
        "patch": "0001.patch",
        "hunk": 1,
        "path": "pkg/m.py",
        "header": "@@ -1 +1 @@",
        "added_lines": [1],
        "statements": [1],
        "proven_on": [],
        "devices": {
            "cpu": {"state": "measured", "statements_run": [], "tests": [], "passing_tests": []}
        },
    }
    c = {
        "test": "t::a",
        "device": "cpu",
        "before": "pass",
        "after": "fail",
        "change": "regression",
        "message": "boom",
    }
    for i in (1, 2):
        (tmp_path / f"r{i}.json").write_text(
            json.dumps(_report(f"{i}/2", [f"{i}.py"], [c] if i == 1 else [], [h]))
        )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "patches.validate",
            "merge",
            str(tmp_path / "r1.json"),
            str(tmp_path / "r2.json"),
            "--json",
            str(tmp_path / "m.json"),
            "--junit",
            str(tmp_path / "m.xml"),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr  # the merged report holds a regression
    assert "**unexercised**" in proc.stdout and "1 regression(s)" in proc.stdout
    assert "<failure" in (tmp_path / "m.xml").read_text()
    assert json.loads((tmp_path / "m.json").read_text())["summary"]["regression"] == 1


def test_short_circuited_operand_counts_only_when_evaluated(tmp_path):
    """Real coverage.py on a real file: the added `and` operand never ran, so it is unexercised."""
    import coverage

    src = 'def f(dev, x):\n    if (\n        dev == "cuda"\n        and x.index != 3\n    ):\n        return 0\n    return 1\n'
    (tmp_path / "m.py").write_text(src)
    h = hk.Hunk("0001.patch", 1, "m.py", "@@", added=[4])
    hk.attach_statements([h], tmp_path)
    assert h.statements == [4]
    cov_dir = tmp_path / "cov"
    cov_dir.mkdir()
    cov = coverage.Coverage(data_file=str(cov_dir / "cov-main"), include=[str(tmp_path / "m.py")])
    cov.start()
    sys.path.insert(0, str(tmp_path))
    try:
        import m

        cov.switch_context("t::cpu_call")
        m.f("cpu", None)
        cov.switch_context("t::cuda_call")
        m.f("cuda", type("X", (), {"index": 0}))
        cov.switch_context("")
    finally:
        cov.stop()
        sys.path.remove(str(tmp_path))
        sys.modules.pop("m", None)
    cov.save()
    ctx = {"cpu": hk.read_contexts(cov_dir, tmp_path, {"m.py"})}
    e = hk.hunk_coverage([h], ctx, {"cpu": {"t::cpu_call"}}, {"cpu": "measured"})[0]
    assert e["devices"]["cpu"]["tests"] == ["t::cuda_call"]  # the cpu call never evaluated line 4
    assert e["proven_on"] == []  # ... and the one test that did is not a passing one here

"""Fast checks of the pieces: outcomes, selection, series reading, shadow, CLI input errors."""

from __future__ import annotations

import difflib
import hashlib
import subprocess
import sys

import pytest
from validate_helpers import REPO_ROOT, run_validate

from patches.common.outcome import Outcome, classify, compare, generic_id
from patches.common.runner import parse_junit
from patches.validate import selection, shadow


def test_classify_and_absent_sides():
    assert classify("pass", "fail") == "regression"
    assert classify("pass", "absent") == "regression"
    assert classify("skip", "pass") == "gain" and classify("absent", "pass") == "gain"
    assert classify("skip", "skip") == "unchanged"
    comps = compare(
        [Outcome("t::a", "cpu", "before", "pass"), Outcome("t::b", "cpu", "after", "pass")]
    )
    assert [(c.test, c.before, c.after, c.change) for c in comps] == [
        ("t::a", "pass", "absent", "regression"),
        ("t::b", "absent", "pass", "gain"),
    ]
    with pytest.raises(ValueError):
        Outcome("t", "cpu", "before", "passed")


def test_generic_id_strips_only_device_instantiation_suffixes():
    assert generic_id("m.TestXCPU::test_a_cpu_float32", "cpu") == "m.TestX::test_a_float32"
    assert generic_id("m.TestXPRIVATEUSE1::test_a_privateuse1", "trn") == "m.TestX::test_a"
    assert generic_id("m.TestXTRN::test_cpu_copy_trn", "trn") == "m.TestX::test_cpu_copy"
    assert generic_id("m.TestPlain::test_on_cpu", "cpu") == "m.TestPlain::test_on_cpu"


PATCH = """From 1 Mon Sep 17 00:00:00 2001
Subject: [PATCH] x

diff --git a/pkg/ops.py b/pkg/ops.py
--- a/pkg/ops.py
+++ b/pkg/ops.py
@@ -1 +1 @@
-a
+b
diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1 @@
+x = 1
"""


def test_touched_and_created_paths():
    assert selection.touched_paths(PATCH) == ["pkg/ops.py", "tests/test_new.py"]
    assert selection.created_paths(PATCH) == ["tests/test_new.py"]


def test_selection_by_imports_reexports_and_relative(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .ops import f\n")
    (tmp_path / "pkg" / "ops.py").write_text("def f(): pass\n")
    t = tmp_path / "tests"
    t.mkdir()
    (t / "test_direct.py").write_text("from pkg.ops import f\n")
    (t / "test_reexport.py").write_text("from pkg import f\n")
    (t / "test_other.py").write_text("import os\n")
    (t / "test_broken.py").write_text("def (:\n")
    (tmp_path / "pkg" / "test_rel.py").write_text("from . import ops\n")
    sel = selection.select_tests([tmp_path], ["pkg/ops.py", "tests/test_new.py"])
    assert set(sel.tests) == {
        "tests/test_new.py",
        "tests/test_direct.py",
        "tests/test_reexport.py",
        "pkg/test_rel.py",
    }
    assert "re-exported" in sel.reasons["tests/test_reexport.py"]
    assert "tests/test_broken.py" in sel.unreadable
    assert selection.select_tests([tmp_path], ["pkg/ops.py"], ["tests/test_other.py"]).tests == [
        "tests/test_other.py"
    ]


def test_series_reading_errors(tmp_path):
    with pytest.raises(selection.SeriesError, match="not found"):
        selection.series_files(tmp_path / "nope")
    with pytest.raises(selection.SeriesError, match="no patches"):
        selection.series_files(tmp_path)
    (tmp_path / "series").write_text("0001-a.patch\n# comment\n")
    with pytest.raises(selection.SeriesError, match="missing"):
        selection.series_files(tmp_path)
    (tmp_path / "0001-a.patch").write_text(PATCH)
    assert selection.series_files(tmp_path) == [tmp_path / "0001-a.patch"]


def test_parse_junit_statuses(tmp_path):
    xml = tmp_path / "j.xml"
    xml.write_text("""<?xml version="1.0"?><testsuites><testsuite>
<testcase classname="m.T" name="ok" time="0.1"/>
<testcase classname="m.T" name="bad"><failure message="AssertionError: 1 != 2">tb</failure></testcase>
<testcase classname="m.T" name="skp"><skipped type="pytest.skip" message="no cuda"/></testcase>
<testcase classname="m.T" name="xf"><skipped type="pytest.xfail" message="known"/></testcase>
<testcase classname="m.T" name="ok"><error message="teardown boom"/></testcase>
<testcase classname="" name="tests.test_x"><error message="collection failure"/></testcase>
</testsuite></testsuites>""")
    got = {o.test: (o.status, o.message) for o in parse_junit(xml, "cpu", "after")}
    assert got == {
        "m.T::ok": ("error", "teardown boom"),
        "m.T::bad": ("fail", "AssertionError: 1 != 2"),
        "m.T::skp": ("skip", "no cuda"),
        "m.T::xf": ("xfail", "known"),
        "tests.test_x::<collection>": ("error", "collection failure"),
    }


def test_shadow_imports_patched_file_and_leaves_install_alone(tmp_path):
    site = shadow.installed_site()
    rel = "torch/accelerator/__init__.py"
    digest = hashlib.sha1((site / rel).read_bytes()).hexdigest()
    copied = shadow.build_shadow(site, tmp_path, [rel])
    assert copied == [rel] and not (tmp_path / rel).is_symlink()
    assert (tmp_path / "torch" / "lib").is_symlink()
    (tmp_path / rel).write_text((site / rel).read_text() + "\nHN_SHADOW = 1\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import torch, torch.accelerator as a;"
            "print(a.HN_SHADOW, torch.ones(2).sum().item(), torch.__file__)",
        ],
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:2] == ["1", "2.0"]
    assert proc.stdout.split()[2].startswith(str(tmp_path))
    assert hashlib.sha1((site / rel).read_bytes()).hexdigest() == digest
    with pytest.raises(shadow.ShadowError):
        shadow.build_shadow(site, tmp_path / "x", ["../etc/passwd"])


def test_installed_torch_validated_through_the_shadow(tmp_path):
    site = shadow.installed_site()
    rel = "torch/accelerator/__init__.py"
    old = (site / rel).read_text()
    new = old + "\n\ndef hn_probe():\n    return 'shadow'\n"
    diff = "".join(
        difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{rel}", f"b/{rel}")
    )
    series = tmp_path / "s"
    series.mkdir()
    (series / "0001-probe.patch").write_text(f"diff --git a/{rel} b/{rel}\n" + diff)
    tdir = tmp_path / "up" / "test"
    tdir.mkdir(parents=True)
    (tdir / "test_probe.py").write_text(
        "import torch.accelerator as a\n\n"
        "def test_probe():\n    assert a.hn_probe() == 'shadow'\n\n"
        "def test_torch_still_works():\n    import torch\n    assert torch.ones(3).sum() == 3\n"
    )
    rc, report, err = run_validate(
        "--tree",
        "installed",
        "--series",
        str(series),
        "--devices",
        "cpu",
        "--tests",
        str(tdir / "test_probe.py"),
    )
    assert rc == 0, err
    ch = {c["test"]: c["change"] for c in report["comparisons"]}
    assert ch == {
        "test.test_probe::test_probe": "gain",
        "test.test_probe::test_torch_still_works": "unchanged",
    }
    assert "hn_probe" not in (site / rel).read_text()


@pytest.mark.parametrize(
    "args, msg",
    [
        (["--tree", "/nonexistent", "--series", "/nonexistent"], "--tree /nonexistent"),
        (["--tree", str(REPO_ROOT), "--series", "/nonexistent"], "no such file or directory"),
        (
            ["--tree", str(REPO_ROOT), "--series", str(REPO_ROOT / "tests/validate/project")],
            "no patches",
        ),
        (["--tree", "installed", "--series", "{series}"], "pass --tests"),
    ],
)
def test_cli_bad_input_exits_2(tmp_path, args, msg):
    (tmp_path / "0001-x.patch").write_text(PATCH.replace("tests/test_new.py", "tests/new.txt"))
    args = [a.replace("{series}", str(tmp_path)) for a in args]
    rc, report, err = run_validate(*args, "--devices", "cpu")
    assert rc == 2 and msg in err and not report

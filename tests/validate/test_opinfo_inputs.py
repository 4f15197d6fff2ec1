"""`python -m patches.matrix inputs`: a change to upstream's op database, checked by its OpInfos'
own checks (samples against CPU, error inputs against the error they name) on cpu and trn."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hn_skip import skip_environment
from validate_helpers import REPO_ROOT

from patches.matrix.inputs import changed_functions, check, module_name, render

DB = Path(torch.__file__).parent / "testing" / "_internal" / "common_methods_invocations.py"


def _run(cmd, cwd, ok=(0,)):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert proc.returncode in ok, proc.stderr[-2000:]
    return proc.stdout


def _trn_or_skip(report):
    info = report["devices"].get("trn", {})
    if "absent" in info:
        skip_environment(f"trn: {info['absent']}")


def test_changed_functions_are_the_module_functions_whose_text_differs():
    before = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\nX = 1\n"
    after = (
        "def a():\n    return 1\n\n\ndef b():\n    return 3\n\n\ndef c():\n    pass\n\n\nX = 2\n"
    )
    assert changed_functions(before, after) == ["b", "c"]
    assert changed_functions(before, before) == []


def test_a_copy_that_does_not_parse_is_refused(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def broken(:\n")
    proc = subprocess.run(
        [sys.executable, "-m", "patches.matrix", "inputs", str(DB), str(bad)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "after: does not parse" in proc.stderr


def test_the_generated_series_keeps_every_opinfo_check(tmp_path):
    """generate --unsafe-fixes on the installed op database (common_methods_invocations and the
    opinfo/definitions files): whatever input functions its series changes, their OpInfos'
    samples and error inputs hold on cpu and trn as before, none lost (prove's own path)."""
    from patches.prove.opdb import OP_DB_FILES, check_op_database

    site = Path(torch.__file__).parent.parent
    tree = tmp_path / "tree"
    for pattern in OP_DB_FILES:
        for src in sorted(site.glob(pattern)):
            dst = tree / src.relative_to(site)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
    for cmd in (["init", "-q"], ["add", "-A"]):
        _run(["git", *cmd], tree)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"], tree)
    series = tmp_path / "series"
    _run(
        [
            sys.executable,
            "-m",
            "patches.generate",
            str(tree),
            "--unsafe-fixes",
            "--out",
            str(series),
        ],
        REPO_ROOT,
    )
    report = check_op_database(site, series, ["cpu", "trn"])
    if report is None:  # the series leaves the op database alone: nothing to check
        return
    for rel, checked in report["files"].items():
        _trn_or_skip(checked)
        text = render(checked)
        assert not checked["regressions"], text
        for info in checked["devices"].values():
            assert not [r for r in info.get("rows", []) if r["verdict"] != "ok"], text
            assert bool(info.get("rows")) == bool(checked["functions"]), text
    assert not report["regressions"]


def test_module_names_come_from_the_path_below_torch(tmp_path):
    nested = tmp_path / "torch" / "testing" / "_internal" / "opinfo" / "definitions" / "nested.py"
    assert module_name(nested) == "torch.testing._internal.opinfo.definitions.nested"
    assert (
        module_name(tmp_path / "after.py") == "torch.testing._internal.common_methods_invocations"
    )


def test_a_cuda_error_check_widened_to_every_device_is_caught(tmp_path):
    """The rewrite the gate made before it read expected errors (issue 24, round 10): the CUDA
    branch of masked_fill's error inputs taken by every non-CPU device. trn words the
    mixed-device error its own way, so the message the error input expects never comes."""
    text = DB.read_text()
    m = re.search(r"\ndef error_inputs_masked_fill\(.*?(?=\ndef )", text, re.S)
    assert m, "the installed torch has no error_inputs_masked_fill"
    body = m.group(0)
    widened = body.replace("type == 'cuda'", "type != 'cpu'").replace(
        "device='cuda'", "device=device"
    )
    assert widened != body, "error_inputs_masked_fill has no CUDA branch in this torch"
    after = tmp_path / "after.py"
    after.write_text(text.replace(body, widened))
    report = check(DB, after, ["trn"], "float32")
    _trn_or_skip(report)
    assert report["functions"] == ["error_inputs_masked_fill"]
    got = [(r["device"], r["op"], r["what"]) for r in report["regressions"]]
    assert got == [("trn", "masked_fill", "error inputs")], render(report)
    assert "expected 'to be on same device'" in report["regressions"][0]["message"]


def test_prove_checks_the_op_database_only_when_the_series_edits_it(tmp_path):
    from patches.prove.opdb import OP_DB, OpDatabaseError, check_op_database

    site = Path(torch.__file__).parent.parent
    other = tmp_path / "other"
    other.mkdir()
    (other / "0001-x.patch").write_text(
        "diff --git a/torch/x.py b/torch/x.py\n--- a/torch/x.py\n+++ b/torch/x.py\n"
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    assert check_op_database(site, other, ["cpu"]) is None
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / "0001-y.patch").write_text(
        f"diff --git a/{OP_DB} b/{OP_DB}\n--- a/{OP_DB}\n+++ b/{OP_DB}\n"
        "@@ -1,1 +1,1 @@\n-no such line in the file\n+a replacement\n"
    )
    with pytest.raises(OpDatabaseError, match="0001-y.patch does not apply"):
        check_op_database(site, stale, ["cpu"])


def test_a_copy_that_breaks_the_worker_is_a_regression_not_an_absent_device(tmp_path):
    """The device boots, then the changed copy fails to load: a failure of the change."""
    text = DB.read_text()
    after = tmp_path / "after.py"
    after.write_text(
        text.replace(
            "def error_inputs_masked_fill(", "def error_inputs_masked_fill(  # edited\n", 1
        )
        + "\nraise RuntimeError('a copy that cannot load')\n"
    )
    report = check(DB, after, ["cpu"], "float32")
    assert "error" in report["devices"]["cpu"], report["devices"]
    assert [r["op"] for r in report["regressions"]] == ["(worker)"]
    assert "a copy that cannot load" in report["regressions"][0]["message"]
    assert "| cpu | | | | | error: worker exited 1" in render(report)

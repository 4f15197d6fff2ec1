"""End to end: `python -m patches.validate --tree installed` on upstream's test_dlpack.py (a -k
subset, cpu only), with the mutation check and the CPU behaviour oracle.

- the `.clone()` patch (zero-copy import silently broken) is not proven: the oracle names the
  test and the call whose result no longer shares storage with its argument, exit 1.

The other cases run once, through `patches.prove --series` on cpu and trn, in
tests/validate/test_prove.py: a wrong patch no test runs (the CUDA branch) stays unexercised and
a behaviour-preserving neutralisation is clean and checked (a mutant killed), exit 0
(test_every_hunk_has_device_coverage_and_a_verdict); a wrong patch the tests catch is a
regression naming the test, exit 1 (test_wrong_patch_is_a_named_regression_and_exits_1).
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO_ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = REPO_ROOT.parent / "shared" / "upstream" / "pytorch-tests"
DLPACK = Path(torch.__file__).parent / "utils" / "dlpack.py"
REL = "torch/utils/dlpack.py"
K = "test_from_dlpack_dtype and (float32 or int64)"


def dlpack_series(folder: Path, name: str, old: str, new: str, insert: bool = False) -> Path:
    """A one-hunk patch to the installed torch/utils/dlpack.py: the line holding ``old``
    rewritten to ``new`` (``insert``: ``new`` added after it, same indent)."""
    lines = DLPACK.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if old in ln)
    patched = list(lines)
    if insert:
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        patched.insert(at + 1, f"{indent}{new}\n")
    else:
        patched[at] = lines[at].replace(old, new)
    diff = "".join(difflib.unified_diff(lines, patched, f"a/{REL}", f"b/{REL}"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"0001-{name}.patch").write_text(f"diff --git a/{REL} b/{REL}\n{diff}")
    return folder


def validate(series: Path, *extra: str) -> tuple[int, dict, str]:
    if not UPSTREAM.is_dir():
        pytest.fail(f"{UPSTREAM} is missing: the upstream tests must lie beside the project")
    proc = subprocess.run(
        [
            sys.executable, "-m", "patches.validate", "--tree", "installed",
            "--series", str(series), "--devices", "cpu", "-n", "0", "--format", "json",
            "--tests", str(UPSTREAM / "test_dlpack.py"), "--test-root", str(UPSTREAM),
            "--pytest-arg=-k", f"--pytest-arg={K}", *extra,
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )  # fmt: skip
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, report, proc.stderr


@pytest.mark.slow
def test_clone_that_breaks_zero_copy_is_not_proven(tmp_path):
    old = "tensor = torch._C._from_dlpack(dlpack)"
    series = dlpack_series(tmp_path / "s", "clone", old, old + ".clone()")
    rc, report, err = validate(series)
    assert rc == 1, err[-3000:]
    assert report["summary"]["regression"] == 0  # every test still passes: only checks see it
    (hunk,) = report["hunks"]
    assert hunk["proven_on"] == [], hunk
    diffs = hunk["oracle"]["differences"]
    assert diffs and hunk["oracle"]["functions"] == [f"{REL}::from_dlpack"]
    d = diffs[0]
    assert d["test"].startswith("test_dlpack.TestTorchDlPackCPU::test_from_dlpack_dtype_cpu_")
    assert d["what"] == ["result: shares storage with arg 0 -> its own storage"]
    assert f"BEHAVIOUR cpu: 0001-clone.patch#1 {d['test']}" in err
    assert report["summary"]["behaviour_changed"] == 1

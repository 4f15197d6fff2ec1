"""`python -m patches.prove` end to end on PyTorch's own code and upstream's own tests.

Bounded for `make test`: the default subsystem (opinfo-samples) with the series the codemod
generates for it, on a -k subset of upstream's test_utils.py (the float32 `to` parametrisations),
one pytest process per run; given series (a behaviour-preserving one, a deliberately wrong one,
one for another torch version) on DLPack's test_dlpack.py. The upstream files are read in place
from ../shared (never copied).
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
K = "test_from_dlpack_dtype or test_dlpack_capsule_conversion"
OPINFO = "torch/testing/_internal/common_methods_invocations.py"
K_TO = "test_device_mode_ops_to_ and float32 and not sparse"

CONFIG = f"""
subsystems:
  opinfo-samples:
    title: OpInfo sample inputs (bounded for make test)
    paths: [{OPINFO}]
    tests:
      - file: test_utils.py
        k: "{K_TO}"
        why: "a bounded -k subset for make test"
      - file: test_foreach.py
        skip: true
        why: "foreach OpInfos only"
  dlpack:
    title: DLPack interchange (bounded for make test)
    paths: [torch/utils/dlpack.py, torch/_tensor.py]
    tests:
      - file: test_dlpack.py
        k: "{K}"
        why: "a bounded -k subset for make test"
"""


def prove(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    cfg = tmp_path / "subsystems.yaml"
    cfg.write_text(CONFIG)
    proc = subprocess.run(
        [sys.executable, "-m", "patches.prove", "--config", str(cfg), "-n", "0", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return proc.returncode, proc.stdout, proc.stderr


def wrong_series(folder: Path, *, skew: bool = False) -> Path:
    """A deliberately wrong patch to the installed torch/utils/dlpack.py: it hoists the stream
    lookup out of the CUDA branch ("every device has a stream"), which raises where there is
    no accelerator, i.e. on CPU. ``skew``: its context no longer matches the installed file."""
    old = DLPACK.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(old) if "ext_device = ext_tensor.__dlpack_device__()" in ln)
    indent = old[at][: len(old[at]) - len(old[at].lstrip())]
    new = list(old)
    new.insert(at + 1, f"{indent}stream = torch.accelerator.current_stream()\n")
    base = list(old)
    if skew:  # a line the installed torch does not have: the patch is for another version
        base[at - 1] = base[at - 1].rstrip("\n") + "  # from another torch version\n"
        new[at - 1] = base[at - 1]
    rel = "torch/utils/dlpack.py"
    diff = "".join(difflib.unified_diff(base, new, f"a/{rel}", f"b/{rel}"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "0001-dlpack-hoist-stream.patch").write_text(f"diff --git a/{rel} b/{rel}\n{diff}")
    return folder


def neutral_series(folder: Path) -> Path:
    """A behaviour-preserving patch to the installed torch/utils/dlpack.py that every device's
    from_dlpack runs (the device pair is read as a tuple): coverage must prove it on cpu and trn."""
    old = DLPACK.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(old) if "ext_device = ext_tensor.__dlpack_device__()" in ln)
    new = list(old)
    new[at] = old[at].replace(
        "ext_tensor.__dlpack_device__()", "tuple(ext_tensor.__dlpack_device__())"
    )
    rel = "torch/utils/dlpack.py"
    diff = "".join(difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "0001-dlpack-device-tuple.patch").write_text(f"diff --git a/{rel} b/{rel}\n{diff}")
    return folder


@pytest.fixture(scope="module")
def proved(tmp_path_factory):
    if not UPSTREAM.is_dir():
        pytest.fail(f"{UPSTREAM} is missing: the upstream tests must lie beside the project")
    tmp = tmp_path_factory.mktemp("prove")
    rc, out, err = prove(
        tmp,
        "--subsystems",
        "opinfo-samples",
        "--devices",
        "cpu,trn,cuda",
        "--out",
        str(tmp / "out"),
    )
    return rc, out, err, tmp / "out"


@pytest.mark.slow
def test_generated_series_is_proven_with_no_regression(proved):
    """The codemod's own series (not a given one), validated on cpu and trn with coverage."""
    rc, out, err, bundles = proved
    assert rc == 0, err[-3000:]
    b = bundles / "opinfo-samples"
    summary = (bundles / "SUMMARY.md").read_text()
    assert "| opinfo-samples |" in summary and summary in out
    patches = sorted((b / "series").glob("*.patch"))
    assert patches, (
        "the codemod no longer rewrites sample_inputs_to: `make prove` has no default series, "
        "pick another subsystem (docs/validation.md, Choosing the subsystems)\n" + err[-2000:]
    )
    ident = subprocess.run(
        ["git", "var", "GIT_AUTHOR_IDENT"], cwd=REPO_ROOT, capture_output=True, text=True
    ).stdout.rsplit(" ", 2)[0]
    for p in patches:  # generated, with paths from the folder holding torch (a checkout too)
        text = p.read_text()
        assert text.startswith("From ") and f"diff --git a/{OPINFO} b/{OPINFO}" in text
        # pasteable: the user's identity, a Test Plan run from a PyTorch checkout, no local paths
        message = text.split(f"diff --git a/{OPINFO}", 1)[0]
        assert f"From: {ident}" in message, message[:400]
        plan = message.split("Test Plan:\n", 1)[1]
        assert "python -m pytest test/test_utils.py -k " in plan, plan
        assert "python -m patches.validate --tree . --series opinfo-samples/series" in plan, plan
        assert str(bundles) not in message and "site-packages" not in message, plan
    report = json.loads((b / "validation.json").read_text())
    assert report["summary"]["regression"] == 0
    assert report["devices"]["trn"]["available"], report["devices"]["trn"]
    assert not report["devices"]["cuda"]["available"]
    assert report["pytest_args"] == ["-k", K_TO]
    assert report["prove"]["selection"]["test_utils.py"].startswith(
        "imports torch.testing._internal.common_methods_invocations"
    )
    outcomes = {(o["device"], o["phase"]) for o in report["outcomes"]}
    assert {("cpu", "before"), ("cpu", "after"), ("trn", "before"), ("trn", "after")} <= outcomes
    passed = {o["test"] for o in report["outcomes"] if o["status"] == "pass"}
    assert any("test_device_mode_ops_to_cpu_float32" in t for t in passed), sorted(passed)
    # the rewritten line of sample_inputs_to runs in the cpu `to` test, which passes after it;
    # test_device_mode_ops is @onlyCPU, so on trn no test runs it: unexercised, said so
    assert report["hunks"] and report["summary"]["hunks"] == len(report["hunks"])
    cov = report["coverage"]["devices"]
    assert cov["cpu"] == cov["trn"] == "measured" and cov["cuda"].startswith("absent"), cov
    assert any("cpu" in h["proven_on"] for h in report["hunks"]), report["hunks"]
    for h in report["hunks"]:
        assert h["path"] == OPINFO
        assert h["devices"]["trn"]["tests"] == []
    md = (b / "validation.md").read_text()
    assert "**Hunk verdicts**" in md and "**unexercised**" in md
    # the series edits the op database: the OpInfos' own checks ran on both copies, per device
    assert not report["inputs"]["regressions"], report["inputs"]
    checked = report["inputs"]["files"][OPINFO]
    assert "sample_inputs_to" in checked["functions"] and not checked["regressions"], checked
    assert checked["devices"]["trn"]["rows"] and "absent" in checked["devices"]["cuda"]
    assert "**The OpInfos' own checks**" in md and "| trn | to | samples float32 |" in md
    assert "| opinfo-samples | " in summary and "| ok |" in summary


def wrong_index_patch(folder: Path) -> Path:
    """A wrong patch to the CUDA branch of from_dlpack (the wrong index of the device pair):
    no cpu or trn test reaches that branch."""
    old = DLPACK.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(old) if "current_stream(f'cuda:{ext_device[1]}')" in ln)
    new = list(old)
    new[at] = old[at].replace("ext_device[1]", "ext_device[0]")
    rel = "torch/utils/dlpack.py"
    diff = "".join(difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}"))
    (folder / "0002-dlpack-wrong-index.patch").write_text(f"diff --git a/{rel} b/{rel}\n{diff}")
    return folder


@pytest.mark.slow
def test_every_hunk_has_device_coverage_and_a_verdict(tmp_path):
    """A given series (the codemod's own DLPack output varies with its intent gate): a
    behaviour-preserving neutralisation is clean and checked on cpu and trn (a mutant killed);
    a wrong patch no test runs (the CUDA branch) stays unexercised on both, exit 0."""
    series = wrong_index_patch(neutral_series(tmp_path / "neutral"))
    rc, _, err = prove(
        tmp_path,
        "--subsystems",
        "dlpack",
        "--series",
        str(series),
        "--devices",
        "cpu,trn,cuda",
        "--out",
        str(tmp_path / "out"),
    )
    assert rc == 0, err[-3000:]
    bundles = tmp_path / "out"
    report = json.loads((bundles / "dlpack" / "validation.json").read_text())
    assert [sorted(h["proven_on"]) for h in report["hunks"]] == [["cpu", "trn"], []], report[
        "hunks"
    ]
    assert report["coverage"]["devices"]["cpu"] == "measured"
    assert report["coverage"]["devices"]["trn"] == "measured"
    assert report["coverage"]["devices"]["cuda"].startswith("absent")
    assert report["hunks"] and report["summary"]["hunks"] == len(report["hunks"])
    for h in report["hunks"]:
        assert h["path"].startswith("torch/")
        for dev in ("cpu", "trn"):
            d = h["devices"][dev]
            assert d["state"] == "measured"
            assert set(d["passing_tests"]) <= set(d["tests"])
            assert (dev in h["proven_on"]) == bool(d["passing_tests"])
    neutral, wrong = report["hunks"]
    assert neutral["oracle"]["differences"] == [] and neutral["oracle"]["calls"] > 0
    for dev in ("cpu", "trn"):
        assert neutral["verdicts"][dev] == "checked"
        killed = [m for m in neutral["mutation"][dev]["mutants"] if m["killed"]]
        assert killed and killed[0]["killed_by"].startswith("test_dlpack.TestTorchDlPack")
        assert wrong["verdicts"][dev] == "unexercised"
        assert wrong["mutation"][dev]["mutants"] == []  # nothing to run a mutant against
    assert wrong["oracle"]["differences"] == []
    assert report["checks"]["mutation"]["bound"]["max_mutants"] == 3
    md = (bundles / "dlpack" / "validation.md").read_text()
    assert "**Hunk verdicts**" in md and "| hunk | file | cpu behaviour | cpu | trn | cuda |" in md
    assert f"-k {K}" in md  # the selection is said, not hidden


@pytest.mark.slow
def test_wrong_patch_is_a_named_regression_and_exits_1(tmp_path):
    series = wrong_series(tmp_path / "wrong")
    rc, out, err = prove(
        tmp_path,
        "--subsystems",
        "dlpack",
        "--series",
        str(series),
        "--devices",
        "cpu",
        "--out",
        str(tmp_path / "out"),
    )
    assert rc == 1, err[-3000:]
    report = json.loads((tmp_path / "out" / "dlpack" / "validation.json").read_text())
    regs = [c for c in report["comparisons"] if c["change"] == "regression"]
    assert regs and all(c["device"] == "cpu" and c["before"] == "pass" for c in regs)
    # coverage names the hunk the failing tests ran: the patch to look at
    assert all(c["hunks_run"] == ["0001-dlpack-hoist-stream.patch#1"] for c in regs), regs[:2]
    assert "REGRESSION dlpack: cpu:" in err
    summary = (tmp_path / "out" / "SUMMARY.md").read_text()
    assert "## Regressions" in summary and regs[0]["test"] in summary
    assert "0001-dlpack-hoist-stream.patch#1" in summary
    (hunk,) = report["hunks"]
    assert hunk["path"] == "torch/utils/dlpack.py" and hunk["proven_on"] == []
    assert set(c["test"] for c in regs) <= set(hunk["devices"]["cpu"]["tests"])


def test_series_for_another_version_exits_2_naming_file_and_hunk(tmp_path):
    series = wrong_series(tmp_path / "skew", skew=True)
    rc, out, err = prove(
        tmp_path,
        "--subsystems",
        "dlpack",
        "--series",
        str(series),
        "--devices",
        "cpu",
        "--out",
        str(tmp_path / "o"),
    )
    assert rc == 2, err[-2000:]
    assert "0001-dlpack-hoist-stream.patch does not apply" in err
    assert "at torch/utils/dlpack.py hunk #1 (@@ -" in err


def test_missing_test_root_says_how_to_point_elsewhere(tmp_path):
    rc, out, err = prove(
        tmp_path,
        "--subsystems",
        "dlpack",
        "--test-root",
        str(tmp_path / "nope"),
        "--out",
        str(tmp_path / "o"),
    )
    assert rc == 2 and "--test-root" in err and "PyTorch checkout's test/" in err
    assert not (tmp_path / "o").exists()


def test_skip_drops_an_import_selected_file_and_says_why(tmp_path):
    from patches.prove.config import load_config
    from patches.prove.selection import node_ids, select_tests

    cfg = tmp_path / "subsystems.yaml"
    cfg.write_text(CONFIG)
    sub = load_config(cfg)["opinfo-samples"]
    nodes, reasons = select_tests(sub, [OPINFO], UPSTREAM)
    assert node_ids(UPSTREAM, nodes) == [str(UPSTREAM / "test_utils.py")]
    assert reasons["test_foreach.py"] == (
        f"not run: imports {OPINFO[:-3].replace('/', '.')}; foreach OpInfos only"
    )
    assert sub.k == K_TO

"""`python -m patches.matrix.upstream`: an upstream device-generic test file on cpu and trn,
joined test by test (names normalised), scored as "of the tests passing on cpu, how many pass on
trn"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from validate_helpers import REPO_ROOT

from patches.common.outcome import Outcome
from patches.matrix.upstream import alone, declined, normalise, refused, score

UPSTREAM = Path(
    os.environ.get("HN_UPSTREAM_TESTS", REPO_ROOT.parent / "shared" / "upstream" / "pytorch-tests")
)


def _o(test, device, status, message=""):
    return Outcome(test, device, "after", status, 0.0, message)


def test_names_join_across_devices():
    cpu = "test_foo.TestFooCPU::test_add_cpu_float32"
    trn = "test_foo.TestFooPRIVATEUSE1::test_add_trn_float32"
    assert (
        normalise(cpu, "cpu")
        == normalise(trn, "trn")
        == "test_foo.TestFoo<dev>::test_add_<dev>_float32"
    )
    assert normalise("m.TestBarTRN::test_x_trn", "trn") == normalise(
        "m.TestBarCPU::test_x_cpu", "cpu"
    )
    assert declined("m.T<dev>::test_x_<dev>_float64", "trn")
    assert declined("m.T<dev>::test_x_<dev>_complex128", "trn")
    assert not declined("m.T<dev>::test_x_<dev>_float32", "trn")
    assert not declined("m.T<dev>::test_x_<dev>_float64", "cuda")


def test_score_counts_only_cpu_passes_with_a_device_variant():
    cpu = [
        _o("m.TCPU::test_a_cpu_float32", "cpu", "pass"),
        _o("m.TCPU::test_b_cpu_float32", "cpu", "pass"),
        _o("m.TCPU::test_c_cpu_float64", "cpu", "pass"),  # declined on trn by design
        _o("m.TCPU::test_only_cpu_cpu", "cpu", "pass"),  # @onlyCPU: no trn variant
        _o("m.TCPU::test_d_cpu_float32", "cpu", "fail"),  # failing on cpu: not counted
    ]
    trn = [
        _o("m.TPRIVATEUSE1::test_a_trn_float32", "trn", "pass"),
        _o("m.TPRIVATEUSE1::test_b_trn_float32", "trn", "fail", "RuntimeError: x"),
        _o("m.TPRIVATEUSE1::test_d_trn_float32", "trn", "pass"),
    ]
    s = score("m.py", cpu, trn, "trn")
    assert (s.cpu_pass, s.both_pass, s.declined, s.cpu_only) == (2, 1, 1, 1)
    assert s.rate == 0.5
    assert s.misses == [("m.T<dev>::test_b_<dev>_float32", "fail", "RuntimeError: x")]
    # an @onlyCPU test whose trn variant exists and skips itself is cpu-only too, while a trn
    # variant skipped for any other reason stays a miss
    cpu += [_o("m.TCPU::test_e_cpu", "cpu", "pass"), _o("m.TCPU::test_f_cpu", "cpu", "pass")]
    trn += [
        _o("m.TPRIVATEUSE1::test_e_trn", "trn", "skip", "Only runs on cpu"),
        _o("m.TPRIVATEUSE1::test_f_trn", "trn", "skip", "Only runs on cuda"),
    ]
    s = score("m.py", cpu, trn, "trn")
    assert (s.cpu_pass, s.both_pass, s.cpu_only) == (3, 1, 2)
    assert s.misses[-1] == ("m.T<dev>::test_f_<dev>", "skip", "Only runs on cuda")


def test_a_dtype_policy_refusal_is_reported_apart_not_scored():
    """A test whose body asks for float64 (test_dlpack_shared_storage) gets trn's policy
    refusal: the same design decision as an absent float64 variant, listed on its own."""
    msg = (
        "TypeError: aten::empty: float64 is not supported on trn (trn2 has no float64 "
        "datapath). Convert before moving to the device, e.g. tensor.float()"
    )
    assert refused(msg, "trn") and not refused(msg, "cuda")
    assert not refused("TypeError: aten::empty: float32 is not supported on trn", "trn")
    assert not refused("RuntimeError: index 7 is out of bounds", "trn")
    cpu = [_o("m.TCPU::test_a_cpu", "cpu", "pass"), _o("m.TCPU::test_b_cpu", "cpu", "pass")]
    trn = [
        _o("m.TPRIVATEUSE1::test_a_trn", "trn", "fail", msg),
        _o("m.TPRIVATEUSE1::test_b_trn", "trn", "fail", "RuntimeError: x"),
    ]
    s = score("m.py", cpu, trn, "trn")
    assert (s.cpu_pass, s.both_pass, s.refused) == (1, 0, [("m.T<dev>::test_a_<dev>", msg)])
    assert [m[0] for m in s.misses] == ["m.T<dev>::test_b_<dev>"]


def test_alone_reports_device_outcomes_with_refusals_apart():
    """test_binary_ufuncs' device class is instantiated with except_for="cpu": nothing to join."""
    msg = "TypeError: aten::empty: float64 is not supported on trn (trn2 has no float64)"
    trn = [
        _o("m.TPRIVATEUSE1::test_a_trn_float32", "trn", "pass"),
        _o("m.TPRIVATEUSE1::test_b_trn_float32", "trn", "fail", msg),
        _o("m.TPRIVATEUSE1::test_c_trn_float32", "trn", "fail", "AssertionError: x"),
        _o("m.TPRIVATEUSE1::test_d_trn", "trn", "skip", "nope"),
    ]
    r = alone("m.py", trn, "trn")
    assert r["counts"] == {"pass": 1, "fail": 2, "skip": 1} and r["refused"] == 1
    assert r["failures"] == [("m.T<dev>::test_c_<dev>_float32", "AssertionError: x")]


def test_dlpack_subset_on_cpu_and_trn(tmp_path):
    """A bounded subset of upstream's test_dlpack.py: every test passing on cpu passes on trn
    (torch.from_dlpack of a trn tensor raised "Unknown device type trn for Dlpack" before
    kernels/trn/upstream_gaps.py)."""
    path = UPSTREAM / "test_dlpack.py"
    if not path.is_file():
        pytest.skip(f"upstream test files not found at {UPSTREAM} (set HN_UPSTREAM_TESTS)")
    out = tmp_path / "scores.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "patches.matrix.upstream",
            str(path),
            "-k",
            "from_dlpack",
            "--json",
            str(out),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (s,) = json.loads(out.read_text())
    assert s["file"] == "test_dlpack.py"
    assert s["cpu_pass"] >= 20 and s["both_pass"] == s["cpu_pass"], s
    assert "test_dlpack.py" in proc.stdout and "100.00%" in proc.stdout

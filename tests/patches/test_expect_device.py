"""The ``families/expect_device.py`` rewrite family: fixtures in the shapes of users' test
modules (gpytorch's prior tests) and look-alike negatives (tests/patches/fixtures/expect_device/),
and a run of a ported test module on trn, where its original fails under autoport."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.patches.family_fixtures import cases, check, fixture_dir

ROOT = Path(__file__).resolve().parents[2]
# runs a test module's TestCases, counting what each assertEqual compared
DRIVER = """
import runpy, sys, unittest
seen = []
equal = unittest.TestCase.assertEqual
def spy(self, first, second, *a, **k):
    seen.append((first, second))
    return equal(self, first, second, *a, **k)
unittest.TestCase.assertEqual = spy
ns = runpy.run_path(sys.argv[1], run_name="under_test")
loader = unittest.defaultTestLoader
suite = unittest.TestSuite(
    loader.loadTestsFromTestCase(v)
    for v in ns.values()
    if isinstance(v, type) and issubclass(v, unittest.TestCase) and v is not unittest.TestCase
)
result = unittest.TextTestRunner(stream=sys.stderr).run(suite)
print(len(seen), sorted(set(map(repr, seen))))
sys.exit(0 if result.wasSuccessful() else 1)
"""


@pytest.mark.parametrize("case", cases("expect_device"))
def test_fixture(case):
    check("expect_device", case)


def _env(trn: bool) -> dict:
    env = {"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT)}
    return {**env, "HN_TRN": "1"} if trn else env


def _run(args: list[str], trn: bool) -> subprocess.CompletedProcess:
    cmd = [sys.executable, *args]
    return subprocess.run(cmd, env=_env(trn), capture_output=True, text=True, timeout=600)


def test_the_ported_test_checks_the_device_it_placed_on_trn():
    """On trn the original's guard is false (its body never runs), and under autoport its
    placement goes to trn while it still expects "cuda": it fails. The port's guard is true
    there, and each expectation compares trn with trn; on a CPU-only machine it runs as the
    original does (the guard is false)."""
    folder = fixture_dir("expect_device")
    original, port = folder / "prior_to_gpu.py", folder / "prior_to_gpu.expected.py"
    auto = _run(["-m", "accelerator_api.autoport", "--quiet", str(original)], trn=True)
    assert auto.returncode != 0 and "'cuda' != 'trn'" in auto.stderr, auto.stderr[-2000:]
    on_trn = _run(["-c", DRIVER, str(port)], trn=True)
    assert on_trn.returncode == 0, on_trn.stderr[-2000:]
    assert on_trn.stdout.split("\n")[0] == "3 [\"('trn', 'trn')\"]", on_trn.stdout
    for script in (original, port):
        on_cpu = _run(["-c", DRIVER, str(script)], trn=False)
        assert on_cpu.returncode == 0, on_cpu.stderr[-2000:]
        assert on_cpu.stdout.startswith("0 []"), on_cpu.stdout

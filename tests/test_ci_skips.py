"""The CI rule of tests/conftest.py, run on a small suite in a child pytest."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

SUITE = """
import pytest
from hn_skip import ENV_PREFIX, skip_environment

def test_env():
    skip_environment("no compiler")

@pytest.mark.skipif(True, reason=ENV_PREFIX + "no device")
def test_env_marker():
    pass

def test_ordinary():
    pytest.skip("upstream skips this op")

def test_known_bug():
    pytest.xfail("known")

def test_passes():
    pass
"""


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    d = tmp_path_factory.mktemp("suite")
    (d / "test_suite.py").write_text(SUITE)
    return d


def _pytest(suite: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    drop = ("CI", "HN_ALLOW_SKIP", "EXPECTTEST_ACCEPT")
    base = {k: v for k, v in os.environ.items() if k not in drop}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "hn_skip", "-p", "no:cacheprovider", "-q", "-rA"]
        + ["-c", os.devnull, "--rootdir", str(suite), *args, str(suite / "test_suite.py")],
        env={**base, "PYTHONPATH": str(HERE), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _outcomes(suite: Path, *args: str, **env: str) -> str:
    proc = _pytest(suite, *args, **env)
    return re.sub(r" in [\d.]+s.*$", "", proc.stdout.strip().splitlines()[-1].strip("= "))


def test_environment_skips_fail_under_ci(suite):
    # a skip in the test body fails it; one at setup (marker, fixture) is reported as an error
    assert _outcomes(suite, CI="true") == "1 failed, 1 passed, 1 skipped, 1 xfailed, 1 error"


def test_environment_skips_fail_under_ci_in_xdist_workers(suite):
    """make test runs with pytest-xdist (-n): the rule holds in the worker processes too."""
    xdist = ("-p", "xdist", "-n", "2")
    assert (
        _outcomes(suite, *xdist, CI="true") == "1 failed, 1 passed, 1 skipped, 1 xfailed, 1 error"
    )
    assert _outcomes(suite, *xdist, CI="false") == "1 passed, 3 skipped, 1 xfailed"


def test_allow_skip_opts_out_and_without_ci_they_skip(suite):
    expected = "1 passed, 3 skipped, 1 xfailed"
    assert _outcomes(suite, CI="true", HN_ALLOW_SKIP="1") == expected
    assert _outcomes(suite, CI="false") == expected


def test_ci_refuses_rewriting_snapshots(suite):
    proc = _pytest(suite, CI="true", EXPECTTEST_ACCEPT="1")
    assert proc.returncode == 4 and "EXPECTTEST_ACCEPT rewrites the snapshots" in proc.stderr

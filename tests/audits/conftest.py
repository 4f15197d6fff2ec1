"""File snapshots in the expecttest style: EXPECTTEST_ACCEPT=1 rewrites them."""

from __future__ import annotations

import os
from pathlib import Path


def check_snapshot(path: Path, actual: str) -> None:
    if os.environ.get("EXPECTTEST_ACCEPT"):
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path}; run with EXPECTTEST_ACCEPT=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{path.name} differs (EXPECTTEST_ACCEPT=1 to accept):\n" + _diff(
        expected, actual
    )


def _diff(a: str, b: str) -> str:
    import difflib

    return "".join(
        difflib.unified_diff(a.splitlines(True), b.splitlines(True), "expected", "actual")
    )


import pytest  # noqa: E402


@pytest.fixture
def snapshot():
    return check_snapshot

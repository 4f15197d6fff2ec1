"""The memory counters' availability guards (``families/idioms_memory.py``): fixtures in
tests/patches/fixtures/memory_guards/."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("memory_guards"))
def test_fixture(case):
    check("memory_guards", case)

"""The ``families/guarded_cache.py`` rewrite family: fixtures in torch's shapes and look-alike
negatives (tests/patches/fixtures/guarded_cache/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("guarded_cache"))
def test_fixture(case):
    check("guarded_cache", case)

"""The ``families/guarded_rng.py`` rewrite family: fixtures in torch's shapes and look-alike
negatives (tests/patches/fixtures/guarded_rng/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("guarded_rng"))
def test_fixture(case):
    check("guarded_rng", case)

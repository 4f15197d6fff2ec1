"""The ``families/guarded_init.py`` rewrite family: fixtures in torch's shapes and look-alike negatives
(tests/patches/fixtures/guarded_init/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("guarded_init"))
def test_fixture(case):
    check("guarded_init", case)

"""The ``families/param_defaults.py`` rewrite family: fixtures in torch's shapes and look-alike negatives
(tests/patches/fixtures/param_defaults/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("param_defaults"))
def test_fixture(case):
    check("param_defaults", case)

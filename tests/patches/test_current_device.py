"""The ``families/current_device.py`` rewrite family: fixtures in torch's shapes and look-alike
negatives (tests/patches/fixtures/current_device/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("current_device"))
def test_fixture(case):
    check("current_device", case)

"""The ``families/module_device.py`` rewrite family: fixtures in torch's shapes and look-alike
negatives (tests/patches/fixtures/module_device/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("module_device"))
def test_fixture(case):
    check("module_device", case)

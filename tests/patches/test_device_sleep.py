"""The ``families/device_sleep.py`` rewrite family: fixtures in torch's shapes and look-alike negatives
(tests/patches/fixtures/device_sleep/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("device_sleep"))
def test_fixture(case):
    check("device_sleep", case)

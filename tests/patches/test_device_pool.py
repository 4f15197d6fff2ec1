"""The ``families/device_pool.py`` rewrite family: fixtures in torch's shapes and look-alike negatives
(tests/patches/fixtures/device_pool/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("device_pool"))
def test_fixture(case):
    check("device_pool", case)

"""The ``families/echo_device.py`` rewrite family: fixtures in torch's shapes and look-alike
negatives (tests/patches/fixtures/echo_device/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("echo_device"))
def test_fixture(case):
    check("echo_device", case)

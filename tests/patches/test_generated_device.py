"""The ``families/generated_device.py`` rewrite family: code a function writes as text follows
the device it holds (tests/patches/fixtures/generated_device/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("generated_device"))
def test_fixture(case):
    check("generated_device", case)

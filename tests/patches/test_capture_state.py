"""The ``families/capture_state.py`` rewrite family: fixtures in torch's shapes and look-alike negatives
(tests/patches/fixtures/capture_state/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("capture_state"))
def test_fixture(case):
    check("capture_state", case)

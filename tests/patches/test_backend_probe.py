"""The ``families/backend_probe.py`` rewrite family: fixtures in torch's shapes and look-alike
negatives (tests/patches/fixtures/backend_probe/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("backend_probe"))
def test_fixture(case):
    check("backend_probe", case)

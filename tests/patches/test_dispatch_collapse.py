"""The ``families/dispatch_collapse.py`` rewrite family: fixtures in torch's shapes and
look-alike negatives (tests/patches/fixtures/dispatch_collapse/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("dispatch_collapse"))
def test_fixture(case):
    check("dispatch_collapse", case)

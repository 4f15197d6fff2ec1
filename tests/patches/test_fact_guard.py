"""The ``families/fact_guard.py`` rewrite family: a device fact a script only reports, checked
with its readers (tests/patches/fixtures/fact_guard/). Its series, patch by patch, and the ports
run on the CPU: ``test_cpu_ports.py``."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("fact_guard"))
def test_fixture(case):
    check("fact_guard", case)

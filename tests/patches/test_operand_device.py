"""The tensor a function works on as its device (``families/operands.py``): a factory whose
result meets a tensor parameter's data, and a disabled autocast around work on one; fixtures in
torch's shapes and look-alike negatives (tests/patches/fixtures/operand_device/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("operand_device"))
def test_fixture(case):
    check("operand_device", case)

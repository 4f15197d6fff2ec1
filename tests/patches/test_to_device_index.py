"""``x.cuda(i)`` with an int index and no ``device_type`` in scope (``families/method_to_device.py``)
-> ``x.to(torch.device(i))``: fixtures in torch's shapes and look-alike negatives
(tests/patches/fixtures/to_device_index/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("to_device_index"))
def test_fixture(case):
    check("to_device_index", case)

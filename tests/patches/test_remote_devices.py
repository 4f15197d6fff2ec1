"""``families/remote_device.py``: a remote device on CUDA (``"rank:0/cuda:0"``, HN509) -> an
f-string on the module's device type; fixtures in torch's shapes and look-alike negatives
(tests/patches/fixtures/remote_devices/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("remote_devices"))
def test_fixture(case):
    check("remote_devices", case)

"""The availability check's built-check companion (``families/guard.py``):
``torch.backends.cuda.is_built() and torch.cuda.is_available()`` -> ``torch.accelerator.
is_available()``; fixtures in torch's shapes and look-alike negatives
(tests/patches/fixtures/built_check/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("built_check"))
def test_fixture(case):
    check("built_check", case)

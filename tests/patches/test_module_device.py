"""The ``families/module_device.py`` rewrite family: fixtures in torch's shapes and look-alike
negatives (tests/patches/fixtures/module_device/)."""

from __future__ import annotations

import pytest

from tests.patches.codemod_helpers import fix
from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("module_device"))
def test_fixture(case):
    check("module_device", case)


def test_positional_device_takes_the_device_in_scope():
    """Outside a test module, a positional ``"cuda"`` that a module function takes as its
    ``device`` becomes the ``device`` in scope, as ``device="cuda"`` does; with none, it stays."""
    src = (
        "import torch\n\n\n"
        "def build(cls, size, device):\n    return cls(size).to(device)\n\n\n"
        "def run(device, n):\n    return build(torch.nn.Linear, n, 'cuda')\n\n\n"
        "def bare(n):\n    return build(torch.nn.Linear, n, 'cuda')\n"
    )
    rw, _ = fix(src, path="pkg/train.py")
    assert "return build(torch.nn.Linear, n, device)\n" in rw.after
    assert rw.after.endswith("return build(torch.nn.Linear, n, 'cuda')\n")

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


def test_the_device_line_after_the_imports_keeps_one_blank_line():
    """isort (ruff's I001) puts one blank line between the import block and a statement that is
    no definition: the two that stood before the first test go below the new line (round 38)."""
    src = (
        "import pytest\nimport torch\n\nfrom pkg import thing\n\n\n"
        "def test_a():\n    x = torch.ones(2).cuda()\n    assert thing(x)\n\n\n"
        "def test_b():\n    y = torch.zeros(2).cuda()\n    assert thing(y)\n"
    )
    rw, _ = fix(src, path="tests/test_a.py")
    head, rest = rw.after.split("DEVICE_TYPE = ")
    assert head.endswith("from pkg import thing\n\n"), head
    assert rest.split("\n", 1)[1].startswith("\n\ndef test_a():"), rest
    again, _ = fix(rw.after, path="tests/test_a.py")
    assert again.after == rw.after

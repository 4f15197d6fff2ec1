"""The ``families/module_device.py`` rewrite family: fixtures in torch's shapes and look-alike
negatives (tests/patches/fixtures/module_device/)."""

from __future__ import annotations

import pytest

from patches.generate import pipeline
from patches.generate.state import Settings
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


TEST_A = (
    "import pytest\nimport torch\n\nfrom pkg import thing\n\n\n"
    "def test_a():\n    x = torch.ones(2).cuda()\n    assert thing(x)\n\n\n"
    "def test_b():\n    y = torch.zeros(2).cuda()\n    assert thing(y)\n"
)


@pytest.mark.parametrize("gap", [1, 2])
def test_the_device_line_after_the_imports_takes_the_tree_s_blank_lines(tmp_path, gap):
    """Between the import block and a statement that is no definition, isort puts the blank
    lines its setting says, and the tree's modules show it: one in llmcompressor's (ruff's
    I001, round 37), two in compressed-tensors' (round 38). The two that stood before the first
    test go below the new line."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(
        "import logging\n" + "\n" * gap + "LOG = logging.getLogger(__name__)\n\n\ndef thing(x):\n"
        "    return x\n"
    )
    (tmp_path / "tests" / "test_a.py").write_text(TEST_A)
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    got = run.plan.finals["tests/test_a.py"]
    head, rest = got.split("DEVICE_TYPE = ")
    assert head.endswith("from pkg import thing\n" + "\n" * gap), head
    assert ")\n\n\ndef test_a():" in rest, rest

"""What counts as a script (``script_plan.is_script``): the script families' scope."""

from __future__ import annotations

import ast

import pytest

from patches.generate.codemods.context import FileContext
from patches.generate.codemods.families.script_plan import is_script

REGISTERS = "import torch\n\n\ndef _fwd(x):\n    return x\n\n\nop.register_autograd(_fwd)\n"
MAIN = REGISTERS + '\n\nif __name__ == "__main__":\n    _fwd(1)\n'
TRAINS = "import torch\n\nmodel = torch.nn.Linear(2, 2)\nmodel(torch.ones(2)).sum().backward()\n"
# a library module's set-up at import (lmms-eval's model wrappers): no program
QUIET = 'import warnings\n\nwarnings.filterwarnings("ignore")\n\n\nclass Model:\n    pass\n'


def _script(text: str, path: str, prefix: str = "") -> bool:
    return is_script(FileContext(text, ast.parse(text), path, prefix))


@pytest.mark.parametrize(
    ("text", "path", "prefix", "want"),
    [
        (TRAINS, "train.py", "", True),  # a user's program
        (REGISTERS, "ops/varlen.py", "", True),  # top-level calls, no importer in the tree
        # PyTorch's own module: its top-level call registers an op (the third replay pair's
        # nn/attention/varlen.py, alone in a tree of 14 files)
        (REGISTERS, "torch/nn/attention/varlen.py", "", False),
        (REGISTERS, "nn/attention/varlen.py", "torch/", False),  # the installed package
        (MAIN, "torch/utils/collect_env.py", "", True),  # a __main__ block: PyTorch's script
        (TRAINS, "tests/test_train.py", "", False),  # a test
        (QUIET, "models/wrapper.py", "", False),  # warnings filtered at import: a library
        (QUIET + TRAINS, "train.py", "", True),  # ... and a program besides
    ],
)
def test_what_is_a_script(text, path, prefix, want):
    assert _script(text, path, prefix) is want


def test_a_context_of_path_and_tree_only():
    """``local_rename`` asks with only a path and a tree (no module name, no tree index)."""
    from types import SimpleNamespace

    ask = lambda text, path: is_script(SimpleNamespace(path=path, tree=ast.parse(text)))  # noqa: E731
    assert ask(REGISTERS, "torch/nn/attention/varlen.py") is False
    assert ask(TRAINS, "train.py") is True

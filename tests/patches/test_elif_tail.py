"""An ``elif`` arm rewritten into plain statements (a device pick collapsed to one conditional
expression) becomes its chain's ``else`` block: opencompass' ``truthfulqa.py`` cost the whole
file a "region lost its wrapper" fault before (round 39)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from codemod_helpers import fix  # noqa: E402

SRC = """import torch
from helpers import npu_ready


def pick():
    if npu_ready():
        backend = "npu"
    elif torch.cuda.is_available():
        backend = "cuda"
    else:
        backend = "cpu"
    return torch.device(backend)
"""
NEUTRAL = (
    'torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"'
)


def test_an_elif_tail_collapsed_becomes_the_else_block():
    result, _ = fix(SRC)
    assert not result.error, result.error
    assert result.after == SRC.replace(
        """    elif torch.cuda.is_available():
        backend = "cuda"
    else:
        backend = "cpu"
""",
        """    else:
        backend = %s
"""
        % NEUTRAL,
    )
    compile(result.after, "x.py", "exec")
    again, _ = fix(result.after)
    assert again.after == result.after


def test_an_elif_tail_at_the_top_level_too():
    src = SRC.replace("\n    ", "\n").replace("def pick():\n", "").replace("return ", "DEV = ")
    result, _ = fix(src)
    assert not result.error, result.error
    assert "elif" not in result.after and f"else:\n    backend = {NEUTRAL}\n" in result.after
    compile(result.after, "x.py", "exec")

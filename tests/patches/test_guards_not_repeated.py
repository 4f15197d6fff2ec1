"""No redundant inner guards: a memory counter already behind an availability check (an ``if``,
the ``else`` of an ``if not``, the rest of a block after ``if not ...: return``, its own
``X if ...is_available() else 0``) is renamed without a second check; one behind an inverted
check keeps its guard."""

from __future__ import annotations

import pytest

from tests.patches.codemod_helpers import diff, fix

ACC = "torch.accelerator"
CASES = [
    (
        "    if not torch.cuda.is_available():\n        return 0\n"
        "    return torch.cuda.memory_allocated()\n",
        f"    if not {ACC}.is_available():\n        return 0\n    return {ACC}.memory_allocated()\n",
    ),
    (
        "    mem = torch.cuda.memory_allocated() if torch.cuda.is_available() else 0\n    return mem\n",
        f"    mem = {ACC}.memory_allocated() if {ACC}.is_available() else 0\n    return mem\n",
    ),
    (
        "    if not torch.cuda.is_available():\n        return 0\n    else:\n"
        "        return torch.cuda.max_memory_allocated()\n",
        f"    if not {ACC}.is_available():\n        return 0\n    else:\n"
        f"        return {ACC}.max_memory_allocated()\n",
    ),
    (
        "    ok = torch.cuda.is_available() and torch.cuda.memory_allocated() > 0\n    return ok\n",
        f"    ok = {ACC}.is_available() and {ACC}.memory_allocated() > 0\n    return ok\n",
    ),
    (  # inverted: the counter is reached without an accelerator, so it keeps its guard
        "    if not torch.cuda.is_available():\n        return torch.cuda.memory_allocated()\n",
        f"    if not {ACC}.is_available():\n"
        f"        return {ACC}.memory_allocated() if {ACC}.is_available() else 0\n",
    ),
    (  # the whole value of an assignment: no parentheses; inside an operation: kept
        "    before = torch.cuda.memory_allocated()\n    return torch.cuda.memory_reserved() / 1e9\n",
        f"    before = {ACC}.memory_allocated() if {ACC}.is_available() else 0\n"
        f"    return ({ACC}.memory_reserved() if {ACC}.is_available() else 0) / 1e9\n",
    ),
]


@pytest.mark.parametrize("body,expected", CASES)
def test_one_guard(body, expected):
    src = "import torch\n\n\ndef report():\n" + body
    rw, _ = fix(src, "bench/report.py")
    assert not rw.error, rw.error
    assert rw.after == "import torch\n\n\ndef report():\n" + expected, diff(src, rw.after)

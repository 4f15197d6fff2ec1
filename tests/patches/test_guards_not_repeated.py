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
    (  # a device count is a check too (round 28): inside it, in a loop over it, after it
        "    if torch.cuda.device_count() > 0:\n        return torch.cuda.memory_allocated()\n"
        "    return 0\n",
        f"    if {ACC}.device_count() > 0:\n        return {ACC}.memory_allocated()\n    return 0\n",
    ),
    (
        "    n = torch.cuda.device_count()\n    if n == 0:\n        return 0\n"
        "    return torch.cuda.memory_allocated()\n",
        f"    n = {ACC}.device_count()\n    if n == 0:\n        return 0\n"
        f"    return {ACC}.memory_allocated()\n",
    ),
    (  # `n < 2` holds on one device too: no check, the guard stays
        "    n = torch.cuda.device_count()\n    if n < 2:\n        return torch.cuda.memory_allocated()\n"
        "    return 0\n",
        f"    n = {ACC}.device_count()\n    if n < 2:\n"
        f"        return {ACC}.memory_allocated() if {ACC}.is_available() else 0\n    return 0\n",
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


PICK = f'{ACC}.current_accelerator().type if {ACC}.is_available() else "cpu"'
HEAD = "import pytest\nimport torch\n\n\n"
DEVICE_CASES = [
    (  # a generator's early return: the rest runs only with an accelerator (skorch's tests)
        "def data():\n    yield 'cpu'\n    if not torch.cuda.is_available():\n        return\n"
        "    device = 'cuda'\n    yield device\n",
        f"def data():\n    yield 'cpu'\n    if not {ACC}.is_available():\n        return\n"
        f"    device = {ACC}.current_accelerator().type\n    yield device\n",
    ),
    (  # a skip call leaves too
        "def test_a():\n    if not torch.cuda.is_available():\n        pytest.skip('no GPU')\n"
        "    device = 'cuda:0'\n    assert device\n",
        f"def test_a():\n    if not {ACC}.is_available():\n        pytest.skip('no GPU')\n"
        f'    device = f"{{{ACC}.current_accelerator().type}}:0"\n    assert device\n',
    ),
    (  # a skip decorator: the definition's body
        "@pytest.mark.skipif(not torch.cuda.is_available(), reason='no GPU')\n"
        "def test_b():\n    device = 'cuda'\n    assert device\n",
        f"@pytest.mark.skipif(not {ACC}.is_available(), reason='no GPU')\n"
        f"def test_b():\n    device = {ACC}.current_accelerator().type\n    assert device\n",
    ),
    (  # skipUnless: the body runs where the test holds
        "import unittest\n\n\nclass T(unittest.TestCase):\n"
        "    @unittest.skipUnless(torch.cuda.is_available(), 'no GPU')\n"
        "    def test_c(self):\n        device = 'cuda'\n        self.assertTrue(device)\n",
        "import unittest\nfrom torch.testing._internal.common_utils import TEST_ACCELERATOR\n\n"
        "\nclass T(unittest.TestCase):\n"
        "    @unittest.skipUnless(TEST_ACCELERATOR, 'no GPU')\n"
        f"    def test_c(self):\n        device = {ACC}.current_accelerator().type\n"
        "        self.assertTrue(device)\n",
    ),
    (  # skipIf on another test: the body also runs on a CPU-only machine, so the CPU side stays
        "@pytest.mark.skipif(torch.cuda.is_available(), reason='CPU only')\n"
        "def test_d():\n    device = 'cuda'\n    assert device\n",
        f"@pytest.mark.skipif({ACC}.is_available(), reason='CPU only')\n"
        f"def test_d():\n    device = {PICK}\n    assert device\n",
    ),
    (  # a device count picks it (audiocraft's `if torch.cuda.device_count(): device = 'cuda'`)
        "def pick():\n    if torch.cuda.device_count():\n        device = 'cuda'\n"
        "    else:\n        device = 'cpu'\n    return device\n",
        f"def pick():\n    if {ACC}.device_count():\n        device = {ACC}.current_accelerator().type\n"
        "    else:\n        device = 'cpu'\n    return device\n",
    ),
    (  # no check at all: the CPU side stays
        "def test_e():\n    device = 'cuda'\n    assert device\n",
        f"def test_e():\n    device = {PICK}\n    assert device\n",
    ),
]


@pytest.mark.parametrize("body,expected", DEVICE_CASES)
def test_a_checked_device_default_has_no_cpu_side(body, expected):
    """A ``device = "cuda"`` that only runs with an accelerator names the accelerator's type,
    with no ``else "cpu"`` that cannot run."""
    rw, _ = fix(HEAD + body, "tests/test_device.py")
    assert not rw.error, rw.error
    assert rw.after == HEAD + expected, diff(HEAD + body, rw.after)


def test_a_counter_after_a_skip_call_has_one_guard():
    body = (
        "def test_mem():\n    if not torch.cuda.is_available():\n        pytest.skip('no GPU')\n"
        "    assert torch.cuda.memory_allocated() >= 0\n"
    )
    rw, _ = fix(HEAD + body, "tests/test_mem.py")
    assert not rw.error, rw.error
    assert f"    assert {ACC}.memory_allocated() >= 0\n" in rw.after, diff(HEAD + body, rw.after)

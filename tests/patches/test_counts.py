"""``intent.counts``: which tests of a device count hold only with a device (True), only without
one (False), or neither (None)."""

from __future__ import annotations

import ast

import pytest

from patches.generate.intent.counts import count_names, count_test, counted_loop

SRC = """
n_gpu = torch.cuda.device_count()
k = torch.cuda.device_count()
k = 3
"""
NAMES = count_names(ast.parse(SRC))


def _test(text: str):
    return count_test(ast.parse(text, mode="eval").body, NAMES)


def test_only_names_always_bound_to_a_count_are_counts():
    assert NAMES == {"n_gpu"}


@pytest.mark.parametrize(
    "text,want",
    [
        ("torch.cuda.device_count()", True),
        ("n_gpu", True),
        ("n_gpu > 0", True),
        ("n_gpu > 1", True),
        ("n_gpu >= 1", True),
        ("n_gpu >= 0", None),
        ("n_gpu == 2", True),
        ("n_gpu != 0", True),
        ("0 < n_gpu", True),
        ("1 <= n_gpu", True),
        ("flag and n_gpu > 1", True),
        ("flag or n_gpu > 1", None),
        ("not n_gpu", False),
        ("n_gpu == 0", False),
        ("n_gpu < 1", False),
        ("n_gpu <= 0", False),
        ("n_gpu < 2", None),
        ("not (flag and n_gpu)", None),
        ("k > 0", None),
        ("len(devices) > 0", None),
        ("torch.cuda.device_count(0) > 0", None),
    ],
)
def test_count_tests(text, want):
    assert _test(text) is want


def test_a_loop_over_a_count_runs_only_with_a_device():
    loops = [
        n
        for n in ast.walk(ast.parse("for i in range(n_gpu): pass\nfor i in range(0, n_gpu): pass"))
        if isinstance(n, ast.For)
    ]
    assert [counted_loop(n, NAMES) for n in loops] == [True, False]

"""Which files of a tree are tests, from their paths alone (families and gate kinds share it)."""

from __future__ import annotations


def is_test_file(path: str) -> bool:
    """A test module: ``test_*.py``/``*_test.py``, or placed as one (``placed_as_test``)."""
    name = path.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py") or placed_as_test(path)


def placed_as_test(path: str) -> bool:
    """Under a ``test``/``tests`` directory, or in PyTorch's test harness
    (``torch/testing/_internal``)."""
    return any(d in ("test", "tests") for d in path.split("/")[:-1]) or "testing/_internal/" in path

"""The collector policy of a planning pass: relaxed inside, as it was after, on any exit."""

from __future__ import annotations

import gc
import weakref

import pytest

from patches.common.collector import relaxed


def test_relaxed_inside_and_restored_after():
    before = gc.get_threshold()
    with relaxed(threshold=12_345):
        assert gc.get_threshold() == (12_345, *before[1:])
        assert gc.get_freeze_count() > 0
        gc.collect()  # a collection inside does not touch the frozen heap, and still works
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_restored_when_the_pass_raises():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError, match="plan failed"):
        with relaxed():
            raise RuntimeError("plan failed")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_cycles_made_inside_are_still_collected():
    class Node:
        pass

    with relaxed():
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = []
        ref = weakref.ref(a, lambda _: gone.append(True))
        del a, b
        gc.collect(0)
        assert gone and ref() is None


def test_a_callers_frozen_heap_is_left_as_it_was():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        young = [[] for _ in range(10)]  # tracked, allocated after the caller's freeze
        with relaxed():
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen
        del young
    finally:
        gc.unfreeze()

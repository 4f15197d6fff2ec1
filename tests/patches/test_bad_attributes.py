"""The series check that a neutral object is asked only for what it has
(``bisect_series.bad_attributes``): a name is read in the scope that binds it."""

from __future__ import annotations

from tests.benchmarks.bisect_series import bad_attributes

SRC = """\
import torch


def reshape_all(states):
    return [s.reshape(-1) for s in states]  # s: the comprehension's own


def timed(dev):
    s = torch.Stream(dev)
    ok = [s.query() for _ in range(2)]
    shadowed = [s.reshape(1) for s in ok]
    s.reshape(1)
    return s.synchronize(), shadowed


e = torch.Event()
e.cuda_event
"""


def test_a_name_is_read_in_its_own_scope():
    assert bad_attributes(SRC) == [
        "line 12: Stream has no reshape",
        "line 17: Event has no cuda_event",
    ]

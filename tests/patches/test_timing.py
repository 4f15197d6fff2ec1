"""Streams, events and timing units (``families/timing.py``): fixtures in torch's shapes."""

from __future__ import annotations

import inspect

import pytest
import torch

from patches.generate.codemods.families.timing import EVENT_IGNORED, STREAM_SIGNATURE
from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("timing"))
def test_fixture(case):
    check("timing", case)


def test_stream_signature_is_torchs():
    """The defaults the family assumes (torch.Stream documents none) are the real ones."""
    assert list(STREAM_SIGNATURE.parameters) == ["device", "priority"]
    assert torch.Stream().device_type == torch.Stream(None).device_type
    torch.Stream(priority=0)
    with pytest.raises(TypeError):
        torch.Stream(None, 0)  # priority is keyword-only


def test_neutral_constructors_run_without_cuda():
    """Where CUDA's constructors raise (no CUDA here), the neutral ones construct: the rewrite
    breaks nothing that ran."""
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError):
            torch.cuda.Stream()
    with torch.Stream():
        pass
    torch.Event(enable_timing=True)


def test_event_ignores_what_the_family_keeps_cuda_s():
    """``EVENT_IGNORED``: torch.Event takes blocking and interprocess and ignores them (the
    installed torch says so), and its IPC handle is not implemented."""
    doc = " ".join(torch.Event.__doc__.split())
    assert "Both blocking and interprocess are not supported right now and are noops" in doc
    assert set(EVENT_IGNORED) == {"blocking", "interprocess"}
    params = list(inspect.signature(torch.cuda.Event.__new__).parameters)
    assert [params.index(n) - 1 for n in EVENT_IGNORED] == list(EVENT_IGNORED.values())
    with pytest.raises(NotImplementedError):
        torch.Event(interprocess=True).ipc_handle()

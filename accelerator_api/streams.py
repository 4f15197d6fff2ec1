"""Streams and events on the current accelerator: `torch.Stream` / `torch.Event` underneath.

Gap filled: the CPU backend has streams but no events ("cpu backend doesn't support events"), so
on CPU `Event` is a host timer with the same methods; work on CPU is synchronous, so recording the
wall clock when `record()` is called is exactly when the preceding work finished. For the same
reason a CPU stream (`HostStream`) has nothing to wait for: `wait_stream` / `wait_event` return
at once, and `record_event` records a host event (torch's CPU stream raises on all three, which a
data prefetcher's `current_stream().wait_stream(side)` meets first).
"""

from __future__ import annotations

import contextlib
import time

import torch

from . import runtime as _dev


class HostStream(torch.Stream):
    """A CPU `torch.Stream` (a context manager, `query()` and `synchronize()` as torch's) whose
    cross-stream calls are no-ops: CPU work is synchronous, so it is always done."""

    def wait_stream(self, stream) -> None:
        pass

    def wait_event(self, event) -> None:
        pass

    def record_event(self, event=None):
        event = event if event is not None else HostEvent()
        event.record(self)
        return event


def Stream(device=None, priority: int = 0) -> torch.Stream:
    """A new stream on `device` (default: current device), named as torch.Stream and
    torch.cuda.Stream name it (`Stream(device=d)` is their callers' form). `priority` is
    keyword-only in torch."""
    dev = device if device is not None else _dev.device()
    if isinstance(dev, (str, torch.device)) and torch.device(dev).type == "cpu":
        return HostStream("cpu", priority=priority)
    return torch.Stream(dev, priority=priority)


def current_stream(dev=None) -> torch.Stream:
    """The current stream of `dev`; delegates to `torch.accelerator.current_stream`."""
    if not _dev.is_available():
        return HostStream("cpu")
    acc = getattr(torch, "accelerator", None)
    if acc is not None and hasattr(acc, "current_stream"):
        return acc.current_stream(dev)
    return _dev.device_module().current_stream(dev)


@contextlib.contextmanager
def stream(s: torch.Stream | None):
    """Make `s` current inside the block and restore the previous one; None is a no-op."""
    if s is None:
        yield None
        return
    with s:
        yield s


class HostEvent:
    """A `torch.Event` look-alike for CPU: records the host clock (CPU work is synchronous)."""

    def __init__(self, enable_timing: bool = False):
        self.enable_timing = enable_timing
        self._t: float | None = None

    def record(self, stream=None) -> None:
        self._t = time.perf_counter()

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass

    def elapsed_time(self, end: "HostEvent") -> float:
        """Milliseconds from this event to `end`, like torch.Event.elapsed_time."""
        if not (self.enable_timing and end.enable_timing):
            raise ValueError("both events need enable_timing=True")
        if self._t is None or end._t is None:
            raise ValueError("both events must be recorded before elapsed_time")
        return (end._t - self._t) * 1000.0


def Event(
    enable_timing: bool = False, blocking: bool = False, interprocess: bool = False, *, dev=None
):
    """An event on the current accelerator (keywords only: `torch.Event`'s first positional is a device)."""
    if not _dev.is_available():
        return HostEvent(enable_timing)
    return torch.Event(
        dev if dev is not None else _dev.device(),
        enable_timing=enable_timing,
        blocking=blocking,
        interprocess=interprocess,
    )

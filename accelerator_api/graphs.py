"""Graph capture and replay where the device supports it, eager execution where it does not.

Delegates to `torch.accelerator.Graph`. Gap filled: CPU and backends without a graph
implementation (or torch without `torch.accelerator.Graph`) run the work eagerly, so the same code
runs everywhere; `captured` says which happened.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from . import runtime as _dev
from .errors import Unsupported


def _new_graph():
    """A fresh `torch.accelerator.Graph`, or None where the device cannot make one."""
    if not _dev.is_available():
        return None
    cls = getattr(getattr(torch, "accelerator", None), "Graph", None)
    if cls is None:
        return None
    try:
        return cls()
    except (RuntimeError, NotImplementedError):
        return None


class graph:
    """Context manager: capture the block into a device graph, or run it eagerly.

    ``with graph() as g: out = step(static_in)`` then ``g.replay()`` re-runs the captured work on
    devices with graphs. In eager mode the block has already run once and there is nothing to
    replay, so `replay()` raises `Unsupported`; use `capture(fn, ...)` for code that must replay on
    every device.
    """

    def __init__(self):
        self._g = _new_graph()
        self.captured = False

    def __enter__(self) -> "graph":
        if self._g is not None:
            try:
                self._g.capture_begin()
                self.captured = True
            except (RuntimeError, NotImplementedError):
                self._g = None
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.captured:
            self._g.capture_end()

    def replay(self) -> None:
        if not self.captured:
            raise Unsupported(
                "graph.replay",
                _dev.device_type(),
                "the block ran eagerly (no graph capture here); use capture(fn) to re-run it",
            )
        self._g.replay()


class capture:
    """A replayable step: `capture(fn, *static_args)()` replays a graph, or calls `fn` eagerly.

    With a graph, `fn` runs once for warm-up on a side stream and once under capture; later calls
    replay it. Without one, every call is `fn(*static_args)`.
    """

    def __init__(self, fn: Callable[..., Any], *static_args: Any):
        self.fn, self.args = fn, static_args
        self.captured = False
        g = _new_graph()
        if g is None:
            return
        s = torch.Stream(_dev.device())
        with s:
            fn(*static_args)
        _dev.synchronize()
        try:
            g.capture_begin()
        except (RuntimeError, NotImplementedError):
            return
        try:
            self.out = fn(*static_args)
        finally:
            g.capture_end()
        self._g, self.captured = g, True

    def __call__(self) -> Any:
        if self.captured:
            self._g.replay()
            return self.out
        return self.fn(*self.args)

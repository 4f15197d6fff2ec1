"""Stream sanitizer bookkeeping: find unsynchronised cross-stream accesses (CSAN's idea, no GPU).

Happens-before is tracked with vector clocks: every stream counts its operations; an event
records a stream's clock when recorded; ``wait_event`` merges that clock into the waiting
stream; ``wait_stream(a, b)`` is a record on ``b`` plus a wait on ``a``; device synchronisation
merges every stream. Per storage we keep the last write and the reads since it (stream, clock
tick, stack). An access races with a previous one on another stream unless the accessing stream
has waited for it, or ``record_stream(tensor, stream)`` declared the stream's use after it.

Pure Python over opaque keys (stream ids, event ids, storage keys); the device runtime feeds it.
Env var: HN_TRN_SANITIZER=1 turns it on for the device (see kernels/trainium/sanitizer_mode.py).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Hashable

ENV_SANITIZER = "HN_TRN_SANITIZER"

Clock = dict  # stream -> tick


@dataclass(frozen=True)
class Access:
    stream: Hashable
    tick: int
    op: str
    is_write: bool
    stack: tuple[str, ...]

    def describe(self) -> str:
        kind = "write" if self.is_write else "read"
        return f"{kind} by {self.op} on stream {self.stream}"


@dataclass
class _StorageState:
    last_write: Access | None = None
    reads: dict = field(default_factory=dict)  # stream -> its latest read since the last write
    # stream -> clock of that stream's record_stream declaration (acknowledges prior accesses)
    acknowledged: dict = field(default_factory=dict)


class SynchronizationError(RuntimeError):
    """An unsynchronised cross-stream access; the message carries both stack traces."""

    def __init__(self, storage: Hashable, current: Access, previous: Access) -> None:
        self.storage = storage
        self.current = current
        self.previous = previous
        super().__init__(
            f"trn stream sanitizer: data race on storage {storage}: {current.describe()} is not "
            f"ordered after the {previous.describe()}.\nFix: call "
            f"stream{current.stream}.wait_stream(stream{previous.stream}) or wait_event() on an "
            f"event recorded after the {'write' if previous.is_write else 'read'}, or "
            "tensor.record_stream() when handing the tensor over.\n"
            f"\nCurrent access ({current.describe()}):\n{''.join(current.stack)}"
            f"\nPrevious access ({previous.describe()}):\n{''.join(previous.stack)}"
        )


class StreamSanitizer:
    """Vector-clock race detector over streams, events and storages."""

    def __init__(
        self, *, raise_on_race: bool = True, capture_stacks: bool = True, hide: tuple[str, ...] = ()
    ) -> None:
        self.raise_on_race = raise_on_race
        self.capture_stacks = capture_stacks
        self.hide = hide  # path prefixes of frames left out of reported stacks (framework code)
        self.clocks: dict[Hashable, Clock] = {}
        self.events: dict[Hashable, Clock] = {}
        self.storages: dict[Hashable, _StorageState] = {}
        self.races: list[SynchronizationError] = []
        self.host: Clock = {}  # what the host has waited for; every later access follows it

    # -- streams and events ------------------------------------------------------------------
    def _clock(self, stream: Hashable) -> Clock:
        return self.clocks.setdefault(stream, {stream: 0})

    def _tick(self, stream: Hashable) -> int:
        clock = self._clock(stream)
        clock[stream] += 1
        return clock[stream]

    def record_event(self, event: Hashable, stream: Hashable) -> None:
        self.events[event] = dict(self._clock(stream))

    def wait_event(self, stream: Hashable, event: Hashable) -> None:
        if event not in self.events:  # waiting on a never-recorded event is a no-op (as in CUDA)
            return
        _merge(self._clock(stream), self.events[event])

    def wait_stream(self, waiter: Hashable, waited: Hashable) -> None:
        _merge(self._clock(waiter), self._clock(waited))

    def synchronize(self) -> None:
        """Device-wide sync: work the host issues afterwards, on any stream, follows everything."""
        for clock in self.clocks.values():
            _merge(self.host, clock)

    def stream_synchronize(self, stream: Hashable) -> None:
        """Host waited for ``stream``: work issued afterwards on any stream is ordered after it."""
        _merge(self.host, self._clock(stream))

    def event_synchronize(self, event: Hashable) -> None:
        """Host waited for ``event``: later work on any stream follows what it recorded."""
        _merge(self.host, self.events.get(event, {}))

    # -- storages ----------------------------------------------------------------------------
    def record_stream(self, storage: Hashable, stream: Hashable) -> None:
        state = self.storages.setdefault(storage, _StorageState())
        # The declaration covers accesses made so far; later ones need their own ordering.
        state.acknowledged[stream] = self._ordered_snapshot(state)

    def _ordered_snapshot(self, state: _StorageState) -> Clock:
        snap: Clock = {}
        accesses = ([state.last_write] if state.last_write else []) + list(state.reads.values())
        for a in accesses:
            snap[a.stream] = max(snap.get(a.stream, 0), a.tick)
        return snap

    def free(self, storage: Hashable) -> None:
        self.storages.pop(storage, None)

    def access(self, storage: Hashable, stream: Hashable, *, is_write: bool, op: str) -> None:
        """Record a read or write of ``storage`` on ``stream``; report any race it makes."""
        tick = self._tick(stream)
        stack = self._stack() if self.capture_stacks else ()
        current = Access(stream, tick, op, is_write, stack)
        state = self.storages.setdefault(storage, _StorageState())
        clock = self._clock(stream)
        ack = state.acknowledged.get(stream, {})
        previous = ([state.last_write] if state.last_write else []) + (
            list(state.reads.values()) if is_write else []
        )
        for prev in previous:
            if prev.stream == stream:
                continue
            seen = max(
                clock.get(prev.stream, 0), self.host.get(prev.stream, 0), ack.get(prev.stream, 0)
            )
            if seen >= prev.tick:
                continue
            self._report(SynchronizationError(storage, current, prev))
            break
        if is_write:
            state.last_write = current
            state.reads = {}
        else:
            state.reads[stream] = current

    def _stack(self) -> tuple[str, ...]:
        frames = [
            f
            for f in traceback.extract_stack()[:-2]
            if not f.filename.startswith(self.hide or "\0")
        ]
        return tuple(traceback.format_list(frames))

    def _report(self, err: SynchronizationError) -> None:
        self.races.append(err)
        if self.raise_on_race:
            raise err


def _merge(into: Clock, other: Clock) -> None:
    for stream, tick in other.items():
        if into.get(stream, 0) < tick:
            into[stream] = tick

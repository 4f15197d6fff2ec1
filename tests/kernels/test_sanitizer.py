"""Stream sanitizer bookkeeping over opaque streams/events/storages (no device)."""

import pytest

from kernels.trainium.sanitizer import StreamSanitizer, SynchronizationError

A, B = "A", "B"


def write_on_a_then(s: StreamSanitizer) -> None:
    s.access("x", A, is_write=True, op="aten::fill_")


def test_read_on_other_stream_without_sync_is_reported_with_both_stacks():
    s = StreamSanitizer()
    write_on_a_then(s)
    with pytest.raises(SynchronizationError) as info:
        s.access("x", B, is_write=False, op="aten::add")
    msg = str(info.value)
    assert (
        "read by aten::add on stream B is not ordered after the write by aten::fill_ on stream A"
        in msg
    )
    assert "wait_stream" in msg and "record_stream" in msg
    assert "in write_on_a_then" in msg  # previous access stack
    assert "test_read_on_other_stream" in msg  # current access stack (both present)


@pytest.mark.parametrize(
    "sync", ["wait_stream", "wait_event", "record_stream", "synchronize", "stream_sync"]
)
def test_each_kind_of_sync_orders_the_access(sync):
    s = StreamSanitizer()
    write_on_a_then(s)
    if sync == "wait_stream":
        s.wait_stream(B, A)
    elif sync == "wait_event":
        s.record_event("e", A)
        s.wait_event(B, "e")
    elif sync == "record_stream":
        s.record_stream("x", B)
    elif sync == "synchronize":
        s.synchronize()
    else:
        s.stream_synchronize(A)
    s.access("x", B, is_write=False, op="aten::add")
    assert s.races == []


def test_event_recorded_before_the_write_does_not_order_it():
    s = StreamSanitizer()
    s.record_event("e", A)
    write_on_a_then(s)
    s.wait_event(B, "e")
    with pytest.raises(SynchronizationError):
        s.access("x", B, is_write=False, op="aten::add")


def test_write_after_unsynchronised_read_is_reported():
    s = StreamSanitizer(raise_on_race=False)
    s.access("x", A, is_write=False, op="aten::sum")
    s.access("x", B, is_write=True, op="aten::zero_")
    assert len(s.races) == 1 and "write by aten::zero_ on stream B" in str(s.races[0])


def test_record_stream_covers_only_earlier_accesses():
    s = StreamSanitizer(raise_on_race=False)
    write_on_a_then(s)
    s.record_stream("x", B)
    s.access("x", B, is_write=False, op="aten::add")
    s.access("x", A, is_write=True, op="aten::mul_")  # A never waited for B's read
    s.access("x", B, is_write=False, op="aten::add")  # and B did not wait for the new write
    assert len(s.races) == 2


def test_same_stream_and_reads_only_are_fine_and_free_forgets():
    s = StreamSanitizer()
    s.access("x", A, is_write=False, op="r")
    s.access("x", B, is_write=False, op="r")  # concurrent reads do not race
    s.wait_stream(A, B)
    s.access("x", A, is_write=True, op="w")  # ordered after both reads
    s.free("x")
    s.access("x", B, is_write=True, op="w")  # new allocation, no history
    assert s.races == []


def test_waits_are_transitive():
    s = StreamSanitizer()
    write_on_a_then(s)
    s.wait_stream(B, A)
    s.record_event("e", B)
    s.wait_event("C", "e")
    s.access("x", "C", is_write=False, op="aten::add")
    assert s.races == []

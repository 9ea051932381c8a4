"""Zero-copy message views cannot outlive their frame; receiving into numpy makes no
Python object per message."""

from __future__ import annotations

import gc
import sys
import tracemalloc

import numpy as np
import pytest

import salias
from conftest import QUOTE_TYPE, quotes, unique_name


def test_a_view_reads_the_frame_in_place_until_released():
    channel = salias.FifoMpsc.create(unique_name("view"))
    publisher, subscriber = channel.publisher(), channel.subscriber()
    assert publisher.offer(b"first") and publisher.offer(b"second")
    with subscriber.try_recv_message() as message:
        assert (bytes(message), len(message), message.publisher_slot) == (b"first", 5, 0)
        view = memoryview(message)
        assert view.readonly and view.tobytes() == b"first"
        with pytest.raises(TypeError):
            view[0] = 0
        # No other receive while the frame is held.
        with pytest.raises(salias.Busy):
            subscriber.try_recv()
        with pytest.raises(salias.Busy):
            subscriber.recv_message(timeout=0)
        with pytest.raises(salias.Busy):
            subscriber.close()
        # Releasing while a memoryview lives is refused, as closing an mmap is.
        with pytest.raises(BufferError, match="still alive"):
            message.release()
        view.release()
    assert message.released
    for access in (bytes, len, memoryview, lambda m: m.publisher_slot, lambda m: m.sequence):
        with pytest.raises(salias.Released):
            access(message)
    message.release()  # idempotent
    assert subscriber.recv(timeout=1) == b"second"


def test_a_numpy_array_over_a_view_keeps_the_frame_held():
    channel = salias.FifoMpsc.create(unique_name("view-numpy"), message_type=QUOTE_TYPE)
    publisher, subscriber = channel.publisher(), channel.subscriber()
    publisher.offer_batch(quotes(0, 2))
    message = subscriber.recv_message(timeout=1)
    row = np.frombuffer(message, salias.dtype(QUOTE_TYPE))
    assert row["instrument"][0] == 0 and not row.flags.writeable
    with pytest.raises(BufferError):
        message.release()
    del row
    message.release()
    assert np.frombuffer(subscriber.recv(timeout=1), salias.dtype(QUOTE_TYPE))["instrument"][0] == 1


def test_a_collected_view_gives_its_frame_back():
    channel = salias.FifoMpsc.create(unique_name("view-gc"))
    publisher, subscriber = channel.publisher(), channel.subscriber()
    publisher.offer(b"a")
    publisher.offer(b"b")
    subscriber.recv_message(timeout=1)  # dropped at once
    assert subscriber.recv(timeout=1) == b"b"


def test_drain_into_makes_no_python_object_per_message():
    count = 50_000
    channel = salias.FifoMpsc.create(unique_name("no-objects"), message_type=QUOTE_TYPE, capacity=4 << 20)
    publisher, subscriber = channel.publisher(), channel.subscriber()
    assert publisher.offer_batch(quotes(0, count)) == count
    into = np.zeros(count, salias.dtype(QUOTE_TYPE))
    gc.collect()
    gc.disable()
    try:
        tracemalloc.start()
        blocks = sys.getallocatedblocks()
        assert subscriber.drain_into(into) == count
        grown = sys.getallocatedblocks() - blocks
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        gc.enable()
    assert np.array_equal(into, quotes(0, count))
    # A bytes object per message would be ≥ 33 bytes each, 1.6 MB in all.
    assert peak < 4096 and grown < 16, (peak, grown)

    # What the measure sees when objects are made: the copying drain keeps a list of them.
    assert publisher.offer_batch(quotes(0, count)) == count
    tracemalloc.start()
    listed = subscriber.drain(count)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(listed) == count and peak > count * 33


def test_arrays_of_another_shape_or_dtype_are_refused_with_nothing_lost():
    channel = salias.FifoMpsc.create(unique_name("rows"), message_type=QUOTE_TYPE)
    publisher, subscriber = channel.publisher(), channel.subscriber()
    publisher.offer_batch(quotes(0, 3))
    wrong = np.zeros(3, np.dtype([("instrument", "u8"), ("rest", "u1", (24,))]))
    with pytest.raises(salias.TypeMismatch, match="salias.dtype"):
        subscriber.drain_into(wrong)
    with pytest.raises(salias.TypeMismatch):
        publisher.offer_batch(wrong)
    with pytest.raises(salias.InvalidArgument, match="one-dimensional"):
        subscriber.drain_into(np.zeros((3, 1), salias.dtype(QUOTE_TYPE)))
    read_only = np.zeros(3, salias.dtype(QUOTE_TYPE))
    read_only.flags.writeable = False
    with pytest.raises(salias.InvalidArgument, match="writable"):
        subscriber.drain_into(read_only)
    strided = np.zeros(6, salias.dtype(QUOTE_TYPE))[::2]
    with pytest.raises(salias.InvalidArgument, match="contiguous"):
        subscriber.drain_into(strided)
    with pytest.raises(salias.WrongMessageSize):
        publisher.offer(b"short")
    # Nothing was taken by the refused calls.
    into = np.zeros(8, salias.dtype(QUOTE_TYPE))
    assert subscriber.drain_into(into) == 3
    assert np.array_equal(into[:3], quotes(0, 3))


def test_raw_channels_refuse_arrays_and_typed_channels_refuse_raw_connects():
    name = unique_name("raw-array")
    channel = salias.FifoMpsc.create(name)
    with pytest.raises(salias.InvalidArgument, match="typed channel"):
        channel.subscriber().drain_into(np.zeros(4, salias.dtype(QUOTE_TYPE)))
    with pytest.raises(salias.InvalidArgument, match="buffer"):
        channel.publisher().offer(12345)

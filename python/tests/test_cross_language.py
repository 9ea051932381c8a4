"""Python and Rust processes on the same channels, both ways, all four kinds, typed
through numpy and raw, every message checked."""

from __future__ import annotations

import numpy as np
import pytest

import salias
from conftest import QUOTE, QUOTE_TYPE, finish, quotes, raw, start_peer, unique_name, wait_ready

KINDS = [salias.FifoMpsc, salias.FifoFanout, salias.OrderedMpsc, salias.OrderedFanout]
COUNT = 20_000


def kind_id(kind) -> str:
    return kind.NAME


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_python_publishes_typed_to_rust(peer, kind):
    name = unique_name("py-to-rust-typed")
    channel = kind.create(name, message_type=QUOTE_TYPE, capacity=64 << 10)
    subscriber = start_peer(peer, "subscribe", kind, name, count=COUNT, typed=True)
    wait_ready(subscriber)
    publisher = channel.publisher()
    rows = quotes(0, COUNT)
    sent = 0
    # Batches of array rows, then single offers of rows: both paths, every row once.
    while sent < COUNT // 2:
        sent += publisher.offer_batch(rows[: COUNT // 2], start=sent)
    for row in rows[COUNT // 2 :]:
        publisher.send(row.tobytes(), timeout=60)
    assert finish(subscriber) == f"received={COUNT}"
    assert publisher.published == COUNT


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_python_publishes_raw_to_rust(peer, kind):
    name = unique_name("py-to-rust-raw")
    channel = kind.create(name, capacity=64 << 10, max_message_size=128)
    subscriber = start_peer(peer, "subscribe", kind, name, count=COUNT, typed=False)
    wait_ready(subscriber)
    publisher = channel.publisher()
    i = 0
    while i < COUNT:
        batch = [raw(j) for j in range(i, min(i + 100, COUNT))]
        if i % 200 == 0:
            # Any buffer: bytearrays and memoryviews as well as bytes.
            batch = [bytearray(message) if k % 2 else memoryview(message) for k, message in enumerate(batch)]
        published = publisher.offer_batch(batch)
        if published == 0:
            publisher.send(batch[0], timeout=60)
            published = 1
        i += published
    assert finish(subscriber) == f"received={COUNT}"


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_rust_publishes_typed_to_python(peer, kind):
    name = unique_name("rust-to-py-typed")
    channel = kind.create(name, message_type=QUOTE_TYPE, capacity=64 << 10)
    subscriber = channel.subscriber()
    publisher = start_peer(peer, "publish", kind, name, count=COUNT, typed=True)
    expected = quotes(0, COUNT)
    received = np.zeros(COUNT, salias.dtype(channel.message_type))
    filled = 0
    while filled < COUNT:
        got = subscriber.drain_into(received, start=filled)
        if got == 0:
            # Wait for the next one in place, then go on draining.
            with subscriber.recv_message(timeout=60) as message:
                received[filled] = np.frombuffer(message, QUOTE)[0]
                if kind in (salias.OrderedMpsc, salias.OrderedFanout):
                    assert message.sequence == filled
            got = 1
        filled += got
    assert finish(publisher) == f"published={COUNT}"
    assert np.array_equal(received, expected)
    assert subscriber.try_recv() is None


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_rust_publishes_raw_to_python(peer, kind):
    name = unique_name("rust-to-py-raw")
    channel = kind.create(name, capacity=64 << 10, max_message_size=128)
    subscriber = channel.subscriber()
    publisher = start_peer(peer, "publish", kind, name, count=COUNT, typed=False)
    i = 0
    while i < COUNT:
        batch = subscriber.drain(256)
        if not batch:
            batch = [subscriber.recv(timeout=60)]
        for message in batch:
            assert message == raw(i), i
            i += 1
    assert finish(publisher) == f"published={COUNT}"


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_a_dtype_of_another_layout_is_refused_both_ways(peer, kind):
    # Same name, sizes and version, two fields swapped: a Rust process connecting to the
    # channel Python created with it is refused, as is Python connecting with it to a
    # channel of the right type.
    wrong = salias.message_type(
        np.dtype([("instrument", "u8"), ("ask", "f8"), ("bid", "f8"), ("venue", "u1", (4,)), ("size", "u4")]),
        "Quote",
        version=1,
    )
    name = unique_name("mismatch")
    channel = kind.create(name, message_type=wrong)
    rust = start_peer(peer, "subscribe", kind, name, count=1, typed=True)
    out, err = rust.communicate(timeout=60)
    assert rust.returncode == 1
    assert "carries messages of type `Quote`" in err, err
    channel.close()

    right = kind.create(name, message_type=QUOTE_TYPE)
    with pytest.raises(salias.TypeMismatch, match="carries messages of type `Quote`"):
        kind.connect(name, message_type=wrong)
    # The layout read from the live channel is the right one.
    assert kind.connect(name, message_type=salias.recorded_type(name)).message_type == QUOTE_TYPE
    right.close()

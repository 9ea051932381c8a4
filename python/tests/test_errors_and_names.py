"""Bad input gets salias's own sentence as an exception of its kind, and loses nothing;
the functions on names."""

from __future__ import annotations

import numpy as np
import pytest

import salias
from conftest import QUOTE, QUOTE_TYPE, unique_name


def test_each_failure_is_its_own_class_with_salias_sentence():
    with pytest.raises(salias.InvalidName, match="name") as raised:
        salias.FifoMpsc.create("has/slash")
    assert isinstance(raised.value, ValueError) and raised.value.code_name == "SALIAS_ERROR_INVALID_NAME"
    missing = unique_name("missing")
    with pytest.raises(salias.NotFound, match="no channel named") as raised:
        salias.OrderedFanout.connect(missing)
    assert isinstance(raised.value, FileNotFoundError)
    name = unique_name("exists")
    channel = salias.FifoFanout.create(name)
    with pytest.raises(salias.AlreadyExists):
        salias.FifoFanout.create(name)
    with pytest.raises(salias.KindMismatch, match="FifoFanout"):
        salias.OrderedMpsc.connect(name)
    with pytest.raises(salias.InvalidConfig, match="capacity"):
        salias.FifoMpsc.create(unique_name("config"), capacity=1000)
    with pytest.raises(salias.InvalidArgument, match="huge_pages"):
        salias.FifoMpsc.create(unique_name("pages"), huge_pages="3MB")
    with pytest.raises(salias.InvalidArgument, match="timeout"):
        channel.subscriber().recv(timeout=-1)
    with pytest.raises(salias.TimedOut) as raised:
        channel.subscriber().recv(timeout=0.01)
    assert isinstance(raised.value, TimeoutError)
    channel.close()
    with pytest.raises(salias.Closed):
        channel.publisher()
    with pytest.raises(salias.NotFound):
        salias.status(name)


def test_backpressure_is_false_and_writes_nothing():
    channel = salias.FifoMpsc.create(unique_name("full"), capacity=4096, max_message_size=100)
    publisher, subscriber = channel.publisher(), channel.subscriber()
    sent = 0
    while publisher.offer(bytes([sent % 256]) * 100):
        sent += 1
    assert publisher.offer(b"refused") is False
    assert publisher.offer_batch([b"a", b"b"]) == 0
    with pytest.raises(salias.TimedOut):
        publisher.send(b"refused", timeout=0.01)
    for i in range(sent):
        assert subscriber.try_recv() == bytes([i % 256]) * 100
    assert subscriber.try_recv() is None
    with pytest.raises(salias.MessageTooLarge):
        publisher.offer(b"x" * 101)


def test_dtypes_no_channel_can_carry_are_refused_with_the_reason():
    padded = np.dtype({"names": ["a", "b"], "formats": ["u1", "u8"], "offsets": [0, 8], "itemsize": 16})
    with pytest.raises(salias.InvalidMessageType, match="padding"):
        salias.message_type(padded, "Padded")
    swapped = np.dtype([("a", ">u8" if np.little_endian else "<u8")])
    with pytest.raises(salias.InvalidMessageType, match="byte order"):
        salias.message_type(swapped, "Swapped")
    with pytest.raises(salias.InvalidMessageType, match="structured"):
        salias.message_type(np.dtype("u8"), "Plain")
    nested = np.dtype([("inner", np.dtype([("x", "u4"), ("y", "u4")])), ("z", "u8")])
    with pytest.raises(salias.InvalidMessageType, match="labels="):
        salias.message_type(nested, "Outer")
    described = salias.message_type(nested, "Outer", labels={"inner": "Inner"})
    assert described.fields[0] == ("inner", "Inner", 0, 8)
    # The live channel's layout of a nested struct: opaque bytes of its size.
    name = unique_name("nested")
    salias_channel = salias.FifoMpsc.create(name, message_type=described)
    assert salias.dtype(salias.recorded_type(name))["inner"] == np.dtype("V8")
    salias_channel.close()


def test_the_recorded_type_is_the_dtype_every_side_agrees_on():
    name = unique_name("recorded")
    channel = salias.OrderedMpsc.create(name, message_type=QUOTE_TYPE)
    recorded = salias.recorded_type(name)
    assert recorded == QUOTE_TYPE and recorded.layout_hash == QUOTE_TYPE.layout_hash
    assert salias.dtype(recorded) == QUOTE
    assert (recorded.name, recorded.size, recorded.align, recorded.version) == ("Quote", 32, 8, 1)
    raw = unique_name("raw")
    salias.FifoMpsc.create(raw, keep_on_drop=True).close()
    assert salias.recorded_type(raw) is None
    salias.remove(raw)

    status = salias.status(name)
    assert status["kind"] == "OrderedMpsc"
    assert status["message_type"]["fields"][0] == ("instrument", "u64", 0, 8)
    assert status["owner"]["state"] == "alive"
    assert name in salias.list_channels()
    channel.close()
    assert name not in salias.list_channels()


def test_remove_and_remove_stale():
    name = unique_name("remove")
    channel = salias.FifoMpsc.create(name)
    publisher = channel.publisher()
    assert salias.remove_stale(name) is False  # its owner is alive
    salias.remove(name)
    with pytest.raises(salias.NotFound):
        salias.FifoMpsc.connect(name)
    # Handles already made keep working.
    assert publisher.offer(b"still here")

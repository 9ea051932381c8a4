"""A Python publisher killed mid-stream is reaped as any peer: the Rust subscriber receives
everything it committed, in order, then hears that every publisher has gone; its slot is
taken over."""

from __future__ import annotations

import signal

import pytest

import salias
from conftest import python, start_peer, finish, unique_name, wait_ready

KINDS = [salias.FifoMpsc, salias.FifoFanout, salias.OrderedMpsc, salias.OrderedFanout]

FLOOD = (
    "import sys, struct, salias\n"
    "kind = getattr(salias, sys.argv[2])\n"
    "publisher = kind.connect(sys.argv[1]).publisher()\n"
    "i = 0\n"
    "while True:\n"
    "    publisher.send(struct.pack('<Q', i) + bytes((i + k) % 256 for k in range(i % 64)))\n"
    "    i += 1\n"
    "    if i == 1000:\n"
    "        print('flowing', flush=True)\n"
)


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.NAME)
def test_a_killed_python_publisher_is_reaped_as_any_peer(peer, kind):
    name = unique_name("killed")
    channel = kind.create(name, capacity=16 << 10, max_message_size=128)
    subscriber = start_peer(peer, "subscribe", kind, name, typed=False, until_gone=True)
    wait_ready(subscriber)
    flood = python(FLOOD, name, kind.NAME)
    assert flood.stdout.readline().strip() == "flowing"
    flood.send_signal(signal.SIGKILL)
    flood.wait(timeout=30)
    # Every message it committed arrived in order (the peer checks each), then the
    # subscriber was told every publisher had gone.
    report = finish(subscriber)
    assert int(report.removeprefix("received=")) >= 1000, report
    # The dead process's slot is free again: a new publisher takes it.
    status = salias.status(name)
    assert status["publishers"][0]["holder"]["state"] in ("dead", "free")
    assert channel.publisher().slot == 0

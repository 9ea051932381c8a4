"""asyncio receive beside other coroutines, cancelled without loss; blocking calls
release the GIL and stop on Ctrl-C."""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import pytest

import salias
from conftest import python, unique_name


def test_recv_async_runs_beside_other_coroutines_and_loses_nothing_when_cancelled():
    name = unique_name("async")
    channel = salias.FifoFanout.create(name, subscribers=1)
    subscriber = channel.subscriber()
    publisher = channel.publisher()

    async def main():
        # Cancelled waits: each leaves every message where it was.
        for _ in range(20):
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(subscriber.recv_async(), timeout=0.005)
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        ticking = asyncio.create_task(ticker())

        async def publish_later():
            for i in range(200):
                await asyncio.sleep(0)
                if i % 10 == 0:
                    await asyncio.sleep(0.002)
                assert publisher.offer(i.to_bytes(4, "little"))

        sending = asyncio.create_task(publish_later())
        received = []
        # Bounded, so that a lost message fails the test instead of hanging it.
        for _ in range(20_000):
            if len(received) == 200:
                break
            try:
                received.append(await asyncio.wait_for(subscriber.recv_async(), timeout=0.003))
            except asyncio.TimeoutError:
                pass  # cancelled mid-wait: must not lose a message
        await sending
        ticking.cancel()
        return received, ticks

    received, ticks = asyncio.run(main())
    assert [int.from_bytes(m, "little") for m in received] == list(range(200))
    assert ticks > 0  # the loop ran other coroutines while waiting
    assert subscriber.try_recv() is None


def test_recv_async_wakes_for_another_process():
    name = unique_name("async-process")
    channel = salias.FifoMpsc.create(name)
    subscriber = channel.subscriber()
    sender = python(
        "import sys, time, salias\n"
        "channel = salias.FifoMpsc.connect(sys.argv[1])\n"
        "publisher = channel.publisher()\n"
        "time.sleep(0.2)\n"
        "publisher.send(b'from afar', timeout=10)\n",
        name,
    )

    async def main():
        return await asyncio.wait_for(subscriber.recv_async(), timeout=30)

    assert asyncio.run(main()) == b"from afar"
    assert sender.wait(timeout=30) == 0


def test_a_blocking_recv_releases_the_gil():
    channel = salias.FifoMpsc.create(unique_name("gil"))
    subscriber = channel.subscriber()
    counted = 0
    stop = threading.Event()

    def count():
        nonlocal counted
        while not stop.is_set():
            counted += 1

    thread = threading.Thread(target=count)
    thread.start()
    while counted == 0:
        time.sleep(0.001)
    before = counted
    with pytest.raises(salias.TimedOut):
        subscriber.recv(timeout=0.3)
    during = counted - before
    stop.set()
    thread.join()
    # A call that kept the GIL for its 0.3 s would let the counting thread run only at
    # its edges (a handful of increments); released, it counts millions.
    assert during > 100_000, during


BLOCKING_CALLS = {
    # An empty channel's subscriber waits for a message.
    "recv": "channel.subscriber().recv()",
    "recv_message": "channel.subscriber().recv_message()",
    # A full ring's publisher waits for room.
    "send": "fill(channel.publisher()).send(b'y')",
}


@pytest.mark.parametrize("call", BLOCKING_CALLS)
def test_ctrl_c_interrupts_a_blocking_call(call):
    name = unique_name("interrupt")
    script = (
        "import signal, sys, salias\n"
        # Python keeps SIGINT ignored if it started so (a child of a background job in a
        # shell without job control): Ctrl-C must reach the call whatever ran the tests.
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "channel = salias.FifoMpsc.create(sys.argv[1], capacity=4096, max_message_size=64)\n"
        "def fill(publisher):\n"
        "    while publisher.offer(b'x' * 64): pass\n"
        "    return publisher\n"
        "keep = channel.subscriber() if sys.argv[2] == 'send' else None\n"
        "print('waiting', flush=True)\n"
        "try:\n"
        "    " + BLOCKING_CALLS[call] + "\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
    )
    process = python(script, name, call)
    assert process.stdout.readline().strip() == "waiting"
    time.sleep(0.3)
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert out.strip() == "interrupted", err
    assert process.returncode == 0
    # Not asserted as a bound (tests never assert wall-clock time): printed for the record.
    print(f"{call}: interrupted after {time.monotonic() - started:.3f} s")

"""asyncio receive through a subscriber's readiness descriptor."""

from __future__ import annotations

import asyncio


async def recv_async(subscriber) -> bytes:
    """The next message as bytes, awaiting the descriptor on the running loop.

    Cancel-safe: a message is only taken by ``try_recv``, which runs between awaits, so a
    cancelled wait (``asyncio.wait_for``, a task's ``cancel``) has taken nothing.
    """
    loop = asyncio.get_running_loop()
    # Taken first: from then on every empty look arms the descriptor, which turns
    # readable when a message may be there.
    fd = subscriber.fileno()
    while True:
        message = subscriber.try_recv()
        if message is not None:
            return message
        ready = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(fd, wake)
        try:
            await ready
        finally:
            loop.remove_reader(fd)

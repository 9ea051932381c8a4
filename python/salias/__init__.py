"""salias: named, zero-copy, shared-memory message channels between processes.

Python processes publish to and receive from the same channels as Rust, C and C++ ones::

    import salias

    channel = salias.FifoMpsc.create("quotes", capacity=1 << 20)
    publisher, subscriber = channel.publisher(), channel.subscriber()
    publisher.offer(b"hello")          # False on backpressure
    assert subscriber.recv(timeout=1.0) == b"hello"

Four kinds: ``FifoMpsc`` and ``FifoFanout`` keep each publisher's order; ``OrderedMpsc``
and ``OrderedFanout`` one global order. Mpsc channels have one subscriber; on Fanout ones
every subscriber receives every message.

Typed channels carry fixed-size messages described by a :class:`MessageType` — from a
numpy dtype (:func:`message_type`), or read from a live channel (:func:`recorded_type`) —
checked at connect against the Rust ``#[derive(SaliasMessage)]`` struct, C struct or
dtype of every other process. ``Subscriber.drain_into(array)`` fills a numpy array of the
channel's :func:`dtype` in one call; ``Publisher.offer_batch(array)`` publishes its rows.
"""

from __future__ import annotations

from ._errors import *  # noqa: F401,F403 - the exception classes are the package's
from ._errors import Error
from ._numpy import dtype, message_type
from ._salias import (
    Channel,
    Message,
    MessageType,
    Publisher,
    Subscriber,
    list_channels,
    recorded_type,
    remove,
    remove_stale,
    status,
)
from . import _salias

__all__ = [
    "Channel", "Publisher", "Subscriber", "Message", "MessageType",
    "FifoMpsc", "FifoFanout", "OrderedMpsc", "OrderedFanout", "KINDS",
    "dtype", "message_type", "recorded_type", "status", "remove", "remove_stale",
    "list_channels", "Error",
]


class _Kind:
    """A channel kind: ``create`` and ``connect`` make :class:`Channel` handles of it."""

    KIND: int
    NAME: str

    def __init__(self) -> None:  # pragma: no cover - kinds are used through the class
        raise TypeError(f"{type(self).__name__} is a kind; call {type(self).__name__}.create(...) or .connect(...)")

    @classmethod
    def create(
        cls,
        name: str,
        *,
        message_type: MessageType | None = None,
        capacity: int = 1 << 20,
        publishers: int = 1,
        subscribers: int | None = None,
        max_message_size: int = 0,
        publication_window: int | None = None,
        permissions: int = 0o600,
        keep_on_drop: bool = False,
        tether_timeout: float | None = None,
        huge_pages: str | None = None,
        hugetlbfs_dir: str | None = None,
        numa_node: int | None = None,
    ) -> Channel:
        """Creates the channel `name` (raising ``AlreadyExists`` if it exists).

        Typed when `message_type` is given (every message exactly its size); raw
        otherwise, with messages of up to `max_message_size` bytes (0: 4096). `capacity`
        is each publisher's ring in bytes (a power of two); `publishers` and
        `subscribers` are slot counts (Mpsc channels have one subscriber). The name is
        removed when the returned handle is closed or collected, unless `keep_on_drop`.
        """
        return _salias.create(
            cls.KIND, name, message_type=message_type, capacity=capacity, publishers=publishers,
            subscribers=subscribers, max_message_size=max_message_size,
            publication_window=publication_window, permissions=permissions,
            keep_on_drop=keep_on_drop, tether_timeout=tether_timeout, huge_pages=huge_pages,
            hugetlbfs_dir=hugetlbfs_dir, numa_node=numa_node,
        )

    @classmethod
    def connect(cls, name: str, *, message_type: MessageType | None = None, any_type: bool = False) -> Channel:
        """Connects to the channel `name`, which must be of this kind
        (``KindMismatch``) and carry `message_type` — raw bytes when it is ``None``
        (``TypeMismatch`` otherwise). ``any_type=True`` takes a typed channel's messages
        as their bytes, for tools."""
        return _salias.connect(cls.KIND, name, message_type=message_type, any_type=any_type)


class FifoMpsc(_Kind):
    """Each publisher's messages in its order; one subscriber."""

    KIND, NAME = 0, "FifoMpsc"


class FifoFanout(_Kind):
    """Each publisher's messages in its order; every subscriber receives every message."""

    KIND, NAME = 1, "FifoFanout"


class OrderedMpsc(_Kind):
    """One global order across publishers; one subscriber."""

    KIND, NAME = 2, "OrderedMpsc"


class OrderedFanout(_Kind):
    """One global order across publishers; every subscriber receives every message."""

    KIND, NAME = 3, "OrderedFanout"


KINDS = (FifoMpsc, FifoFanout, OrderedMpsc, OrderedFanout)

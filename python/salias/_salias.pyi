"""Type stubs of the native module; the classes are re-exported by ``salias``."""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import Any

# Stubs are read by type checkers only; typing_extensions names these for Python 3.11.
from typing_extensions import Buffer, Self

class MessageType:
    """A message type: name, size, alignment, schema version and fields, fingerprinted as
    ``#[derive(SaliasMessage)]`` fingerprints the Rust struct with the same fields."""

    def __new__(
        cls, name: str, size: int, align: int, fields: Sequence[tuple[str, str, int, int]], version: int = 0
    ) -> MessageType: ...
    @property
    def name(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def align(self) -> int: ...
    @property
    def version(self) -> int: ...
    @property
    def fields(self) -> list[tuple[str, str, int, int]]:
        """``(name, type_label, offset, size)`` in offset order."""
    @property
    def layout_hash(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Channel:
    """A channel handle, made by a kind's ``create`` or ``connect``."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> int:
        """0 FifoMpsc, 1 FifoFanout, 2 OrderedMpsc, 3 OrderedFanout."""
    @property
    def message_type(self) -> MessageType | None: ...
    @property
    def capacity(self) -> int: ...
    @property
    def max_message_size(self) -> int: ...
    @property
    def publishers(self) -> int: ...
    @property
    def subscribers(self) -> int: ...
    @property
    def is_owner(self) -> bool: ...
    def publisher(self) -> Publisher:
        """Claims a publisher slot (``NoFreeSlot`` when every one is held)."""
    def subscriber(self) -> Subscriber:
        """Claims a subscriber slot; a Fanout subscriber joins at the current end."""
    def reap(self) -> tuple[int, int]:
        """Frees the slots of dead processes: ``(publishers, subscribers)`` reaped."""
    def close(self) -> None:
        """Closes the handle (the creator's removes the name)."""

class Publisher:
    @property
    def message_type(self) -> MessageType | None: ...
    @property
    def published(self) -> int: ...
    @property
    def slot(self) -> int: ...
    @property
    def subscribers(self) -> tuple[int, int]:
        """``(tethered, lossy)`` subscribers attached now."""
    def offer(self, data: Buffer) -> bool:
        """Publishes if the ring has room: ``True``, or ``False`` on backpressure (nothing
        written)."""
    def send(self, data: Buffer, timeout: float | None = None) -> None:
        """Publishes, waiting for room (GIL released, Ctrl-C interrupts); ``TimedOut``."""
    def offer_batch(self, messages: Sequence[Buffer] | Any, start: int = 0) -> int:
        """Publishes as many as fit, in order, as one batch: a sequence of bytes-like
        objects, or a numpy array of the channel's dtype from row ``start``. How many."""
    def fileno(self) -> int:
        """The readiness descriptor: readable while a refused offer may find room."""
    def close(self) -> None: ...

class Subscriber:
    @property
    def message_type(self) -> MessageType | None: ...
    @property
    def received(self) -> int: ...
    @property
    def slot(self) -> int: ...
    @property
    def live_publishers(self) -> int: ...
    def try_recv(self) -> bytes | None:
        """The next message (a copy), or ``None``."""
    def recv(self, timeout: float | None = None) -> bytes:
        """The next message (a copy), waiting (GIL released, Ctrl-C interrupts); ``TimedOut``."""
    def try_recv_message(self) -> Message | None:
        """The next message in place (zero-copy), or ``None``."""
    def recv_message(self, timeout: float | None = None) -> Message:
        """The next message in place, waiting."""
    def drain(self, max: int = 1024) -> list[bytes]:
        """Up to ``max`` waiting messages (copies), without waiting."""
    def drain_into(self, array: Any, start: int = 0) -> int:
        """Copies waiting messages into the rows of a numpy array of the channel's dtype,
        from row ``start``, without waiting: how many. No Python object per message."""
    def recv_async(self) -> Coroutine[Any, Any, bytes]:
        """Awaits the next message on the running asyncio loop; cancel-safe."""
    def fileno(self) -> int:
        """The readiness descriptor: readable while a receive may find a message."""
    def close(self) -> None: ...

class Message:
    """A received message in place: a read-only buffer valid until released."""

    @property
    def publisher_slot(self) -> int: ...
    @property
    def sequence(self) -> int: ...
    @property
    def gap_before(self) -> int: ...
    @property
    def released(self) -> bool: ...
    def release(self) -> None:
        """Gives the frame back; ``BufferError`` while a memoryview of it is alive."""
    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> bool: ...
    def __bytes__(self) -> bytes: ...
    def __len__(self) -> int: ...
    def __buffer__(self, flags: int) -> memoryview: ...

def create(kind: int, name: str, **config: Any) -> Channel: ...
def connect(kind: int, name: str, *, message_type: MessageType | None = None, any_type: bool = False) -> Channel: ...
def recorded_type(name: str) -> MessageType | None:
    """The message type (with fields) the channel records; ``None`` for a raw channel."""
def status(name: str) -> dict[str, Any]:
    """The channel's state without connecting, as ``salias show --json`` prints it."""
def remove(name: str) -> None: ...
def remove_stale(name: str) -> bool: ...
def list_channels() -> list[str]: ...

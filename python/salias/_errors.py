"""salias's errors as exception classes, one per kind of failure users match on.

Every exception's message is salias's own sentence: what was wrong and how to fix it.
All derive from :class:`Error`; some also from the built-in they mean (``TimedOut`` is a
``TimeoutError``, ``NotFound`` a ``FileNotFoundError``, ``InvalidArgument`` a
``ValueError``), so code written against the built-ins catches them too.
"""

from __future__ import annotations


class Error(Exception):
    """A salias failure. ``code`` is the C ABI's result code (``SALIAS_ERROR_...``)."""

    code: int = 99
    code_name: str = "SALIAS_ERROR_OTHER"


class InvalidArgument(Error, ValueError):
    """An argument salias cannot use: the wrong type of buffer, a negative timeout."""

    code = 10


class BadHandle(Error):
    code = 11


class Busy(Error, RuntimeError):
    """The handle holds a received message: release it (end its ``with`` block) first."""

    code = 12


class Panic(Error):
    """salias failed inside (a bug): please report it."""

    code = 13


class NotHeld(Error):
    code = 14


class InvalidName(Error, ValueError):
    code = 20


class InvalidConfig(Error, ValueError):
    code = 21


class InvalidMessageType(Error, ValueError):
    """A described type (or dtype) no channel can carry: padding, overlap, alignment."""

    code = 22


class NotFound(Error, FileNotFoundError):
    """No channel of this name exists."""

    code = 23


class AlreadyExists(Error, FileExistsError):
    code = 24


class Stale(Error):
    """The channel's owner died without removing it (``salias.remove_stale``)."""

    code = 25


class TypeMismatch(Error, TypeError):
    """The channel carries another message type (or the array another dtype)."""

    code = 26


class KindMismatch(Error, TypeError):
    """The channel is of another kind."""

    code = 27


class VersionMismatch(Error):
    code = 28


class PlatformMismatch(Error):
    code = 29


class NotAChannel(Error):
    code = 30


class Initializing(Error):
    code = 31


class Corrupt(Error):
    """Shared memory breaks the protocol: a crashed, buggy or hostile peer."""

    code = 32


class NoFreeSlot(Error):
    """Every publisher (or subscriber) slot is held."""

    code = 33


class SlotInUse(Error):
    code = 34


class SlotOutOfRange(Error):
    code = 35


class PlatformError(Error, OSError):
    code = 36


class NoSpace(Error, OSError):
    """Shared memory (/dev/shm) is full."""

    code = 37


class Untrusted(Error, PermissionError):
    code = 38


class Inherited(Error):
    """The handle was inherited across fork(): connect again in the child."""

    code = 39


class Unsupported(Error):
    code = 40


class NoSubscriber(Error):
    """Mpsc: the ring is full and its subscriber has gone."""

    code = 41


class MessageTooLarge(Error, ValueError):
    code = 42


class WrongMessageSize(Error, ValueError):
    """A typed channel's message must be exactly its type's size."""

    code = 43


class GapTooLarge(Error):
    code = 44


class Truncated(Error):
    code = 45


class Demoted(Error):
    """A publisher demoted this tethered subscriber to lossy (its tether timeout)."""

    code = 46


class Disconnected(Error, ConnectionError):
    """Every publisher has gone and everything they sent was received; receive again
    to wait for a next publisher."""

    code = 47


class TimedOut(Error, TimeoutError):
    """A blocking call's timeout passed; nothing was received or written."""

    code = 3


class Closed(Error, ValueError):
    """The handle was closed."""


class Released(Error, ValueError):
    """The message view was released; its frame may already hold another message."""


class FieldsNotRecorded(Error, LookupError):
    """The channel's type was recorded without its fields."""


_BY_CODE = {
    cls.code: cls
    for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, Error) and "code" in cls.__dict__
}


def error_for(code: int, name: str, message: str) -> Error:
    """The exception for a result code (called by the native module)."""
    error = _BY_CODE.get(code, Error)(message)
    error.code = code
    error.code_name = name
    return error

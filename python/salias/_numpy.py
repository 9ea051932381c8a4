"""Typed channels through numpy: a structured dtype for a message type and back.

A field's type label is the one ``#[derive(SaliasMessage)]`` writes for the Rust field:
``u8``…``u64``, ``i8``…``i64``, ``f32``, ``f64``, arrays ``[u8;4]`` and ``[[f64;4];4]``,
and another struct by its name. Scalars and arrays of scalars map to numpy's types; a
nested struct is an opaque ``V<size>`` field (give its label back through ``labels`` when
describing a dtype that has one).
"""

from __future__ import annotations

import re
from functools import lru_cache

from . import _errors
from ._salias import MessageType

_SCALARS = {
    "u8": "u1", "u16": "u2", "u32": "u4", "u64": "u8",
    "i8": "i1", "i16": "i2", "i32": "i4", "i64": "i8",
    "f32": "f4", "f64": "f8",
    "usize": "u8", "isize": "i8",
}
_LABELS = {"u": "u", "i": "i", "f": "f"}
_ARRAY = re.compile(r"^\[(.*);(\d+)\]$")


def _numpy():
    try:
        import numpy
    except ImportError as missing:  # pragma: no cover - numpy is an optional dependency
        raise ImportError("typed channels through numpy need numpy: pip install numpy") from missing
    return numpy


def _field_format(label: str, size: int):
    """The numpy format of a field of type `label` occupying `size` bytes."""
    shape = []
    while (array := _ARRAY.match(label)) is not None:
        label, count = array.group(1), int(array.group(2))
        shape.append(count)
    shape.reverse()
    if label in _SCALARS:
        base = "=" + _SCALARS[label]
    else:
        elements = 1
        for count in shape:
            elements *= count
        base = f"V{size // elements if elements else size}"
    return (base, tuple(shape)) if shape else base


@lru_cache(maxsize=256)
def _dtype_cached(message_type: MessageType):
    np = _numpy()
    fields = message_type.fields
    return np.dtype(
        {
            "names": [name for name, _, _, _ in fields],
            "formats": [_field_format(label, size) for _, label, _, size in fields],
            "offsets": [offset for _, _, offset, _ in fields],
            "itemsize": message_type.size,
        }
    )


def dtype(message_type: MessageType):
    """The numpy structured dtype of `message_type`'s messages (native byte order)."""
    if not isinstance(message_type, MessageType):
        raise _errors.InvalidArgument(
            f"expected a salias.MessageType (salias.recorded_type(name) reads a live channel's), got {type(message_type).__name__}"
        )
    return _dtype_cached(message_type)


def _label(base, name: str, labels: dict[str, str]) -> str:
    if name in labels:
        return labels[name]
    if base.byteorder not in ("=", "|") and base.byteorder != _numpy().dtype("=u2").byteorder:
        raise _errors.InvalidMessageType(
            f"field {name!r} is {base.str}, not in this machine's byte order; salias messages are native-endian"
        )
    if base.kind in _LABELS and base.fields is None:
        return f"{_LABELS[base.kind]}{base.itemsize * 8}"
    raise _errors.InvalidMessageType(
        f"field {name!r} is {base}; give its Rust type label through labels={{{name!r}: 'Inner'}} (a nested struct's name) or use scalars and arrays of them"
    )


def message_type(dtype, name: str, version: int = 0, *, labels: dict[str, str] | None = None, align: int | None = None) -> MessageType:
    """The salias message type of a numpy structured `dtype`, named `name` (the Rust
    struct's name, which is part of its fingerprint) at schema `version`.

    Every byte must belong to a field (name padding as a field, as the Rust derive
    requires). `labels` gives the Rust type label of fields numpy cannot name (a nested
    struct). `align` defaults to the largest alignment of the fields' scalars.
    """
    np = _numpy()
    dtype = np.dtype(dtype)
    if dtype.fields is None:
        raise _errors.InvalidMessageType(
            f"{dtype} is not a structured dtype; describe the message's fields, e.g. numpy.dtype([('id', 'u8'), ('price', 'f8')])"
        )
    labels = dict(labels or {})
    fields = []
    widest = 1
    for field_name, (field_dtype, offset, *_) in sorted(dtype.fields.items(), key=lambda item: item[1][1]):
        base, shape = (field_dtype.subdtype or (field_dtype, ()))
        label = _label(base, field_name, labels)
        for count in reversed(shape):
            label = f"[{label};{count}]"
        fields.append((field_name, label, offset, field_dtype.itemsize))
        if base.fields is None and base.kind in _LABELS:
            widest = max(widest, base.alignment)
    return MessageType(name, dtype.itemsize, align or widest, fields, version)


def row_size(array, message_type: MessageType) -> int:
    """The row size of `array` if it holds `message_type`'s messages (used by
    ``drain_into`` and ``offer_batch``); raises what differs otherwise."""
    np = _numpy()
    if not isinstance(array, np.ndarray) or array.ndim != 1:
        raise _errors.InvalidArgument(
            f"expected a one-dimensional numpy array of the channel's dtype, got {type(array).__name__}"
            + (f" of {array.ndim} dimensions" if isinstance(array, np.ndarray) else "")
        )
    expected = dtype(message_type)
    if array.dtype != expected:
        raise _errors.TypeMismatch(
            f"the array's dtype {array.dtype} is not the channel's type {message_type} as numpy lays it out, {expected}; make the array with salias.dtype(channel.message_type)"
        )
    return message_type.size

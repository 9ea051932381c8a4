"""What the tests share: the Rust peer (built once), the typed message of the tests, the
messages every side sends, and unique channel names."""

from __future__ import annotations

import itertools
import os
import struct
import subprocess
import tempfile
import sys
from pathlib import Path

import numpy as np
import pytest

import salias

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent

# The Rust peer's `Quote` (peer/src/main.rs) as numpy lays it out.
QUOTE = np.dtype(
    [("instrument", "u8"), ("bid", "f8"), ("ask", "f8"), ("venue", "u1", (4,)), ("size", "u4")]
)
QUOTE_TYPE = salias.message_type(QUOTE, "Quote", version=1)
KIND_NAMES = {
    salias.FifoMpsc: "fifo-mpsc",
    salias.FifoFanout: "fifo-fanout",
    salias.OrderedMpsc: "ordered-mpsc",
    salias.OrderedFanout: "ordered-fanout",
}
_names = itertools.count()


def unique_name(what: str) -> str:
    return f"py-{what}-{os.getpid()}-{next(_names)}"


def quotes(start: int, count: int) -> np.ndarray:
    """Messages start..start+count of a typed stream, as the Rust peer makes them."""
    rows = np.zeros(count, QUOTE)
    i = np.arange(start, start + count, dtype=np.uint64)
    rows["instrument"] = i
    rows["bid"] = i * 0.5
    rows["ask"] = i * 0.5 + 0.25
    rows["venue"] = np.frombuffer(b"XNAS", np.uint8)
    rows["size"] = i % 1000
    return rows


def raw(i: int) -> bytes:
    """Raw message i of a stream, as the Rust peer makes it."""
    return struct.pack("<Q", i) + bytes((i + k) % 256 for k in range(i % 64))


@pytest.fixture(scope="session")
def peer() -> Path:
    """The Rust peer binary, built once per run (or SALIAS_PEER)."""
    given = os.environ.get("SALIAS_PEER")
    if given:
        return Path(given)
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "-p", "salias-python-peer"],
        cwd=PACKAGE,
        check=True,
    )
    return PACKAGE / "target" / "release" / "salias-python-peer"


def start_peer(peer: Path, role: str, kind, name: str, *, count: int = 0, typed: bool, until_gone: bool = False) -> subprocess.Popen:
    command = [str(peer), role, "--kind", KIND_NAMES[kind], "--name", name, "--count", str(count)]
    if typed:
        command.append("--typed")
    if until_gone:
        command.append("--until-gone")
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_ready(process: subprocess.Popen) -> None:
    """Until a subscribing peer says it holds its slot."""
    line = process.stdout.readline()
    if line.strip() != "ready":
        process.kill()
        raise AssertionError(f"peer did not start: {line!r} {process.stderr.read()}")


def finish(process: subprocess.Popen, timeout: float = 120) -> str:
    """The peer's report once it exits successfully."""
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, f"peer failed ({process.returncode}): {err}"
    return out.strip().splitlines()[-1]


def python(script: str, *args: str) -> subprocess.Popen:
    """A Python process running `script`, importing `salias` as this one does: from a
    directory of no package, since `-c` puts the working directory first on the path and
    the source tree's `salias/` (without its compiled module) would hide the installed one."""
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tempfile.gettempdir(),
    )

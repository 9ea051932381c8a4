"""Python on salias channels against a Rust subscriber and against what a Python user
would reach for, in one run of alternating rounds.

Cases, each with 64-byte messages (`Tick` in peer/src/main.rs) on a FifoMpsc channel with
a 1 MiB ring, one publisher process pinned to core 0 and one subscriber process to core 1:

- ``python_drain``: a Rust publisher, a Python subscriber draining into a numpy array in
  batches of 4096 (``drain_into``), checking every sequence number;
- ``rust_drain``: the same Rust publisher, a Rust subscriber (the peer's ``drain``);
- ``python_offer``: a Python loop of ``offer`` of one 64-byte bytes object, a Rust subscriber;
- ``python_offer_batch``: ``offer_batch`` of 4096-row numpy arrays, a Rust subscriber;
- ``mp_queue``: ``multiprocessing.Queue`` of 64-byte bytes between two Python processes;
- ``mp_shared_memory``: a numpy ring of 64-byte rows in ``multiprocessing.shared_memory``,
  written and read in batches of 4096 by two Python processes spinning on two indices.

Rates are messages per second as the receiving side sees them (first to last message),
except the offer cases, timed on the publishing side. Before each case the Rust peer
measures the cache-line floor between cores 0 and 1 (ns per round trip): this machine
moves data between its cores in two speed states, several times apart, and a case is
labelled with the state its floor shows: "high floor" above 1.6 times the run's lowest
floor, "low floor" otherwise. A run that saw one state only cannot tell which it was;
its floor says (about 400 ns here in the slow state).
Medians are taken per state, and ratios per round between two cases of the same state
only (benchmarking rules: doc/benchmarking.md), so the states never mix in one figure.

    python benches/bench.py [--rounds 7] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import time
from multiprocessing import shared_memory
from pathlib import Path

import numpy as np

import salias

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent
TICK = np.dtype([("seq", "u8"), ("words", "u8", (7,))])
TICK_TYPE = salias.message_type(TICK, "Tick")
BATCH = 4096
PUBLISHER_CORE, SUBSCRIBER_CORE = 0, 1


def peer_binary() -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "salias-python-peer"], cwd=PACKAGE, check=True)
    return PACKAGE / "target" / "release" / "salias-python-peer"


def pinned(core: int) -> None:
    os.sched_setaffinity(0, {core})


def peer(binary: Path, role: str, name: str, count: int, core: int) -> subprocess.Popen:
    return subprocess.Popen(
        ["taskset", "-c", str(core), str(binary), role, "--kind", "fifo-mpsc", "--name", name, "--count", str(count), "--tick"],
        stdout=subprocess.PIPE,
        text=True,
    )


def ready(process: subprocess.Popen) -> None:
    line = process.stdout.readline().strip()
    if line != "ready":
        raise RuntimeError(f"peer did not start: {line!r}")


def report_rate(process: subprocess.Popen) -> float:
    out, _ = process.communicate(timeout=600)
    if process.returncode != 0:
        raise RuntimeError(f"peer failed: {out}")
    fields = dict(pair.split("=") for pair in out.strip().splitlines()[-1].split())
    return float(fields["rate"])


def channel(tag: str):
    return salias.FifoMpsc.create(f"bench-py-{tag}-{os.getpid()}", message_type=TICK_TYPE, capacity=1 << 20)


def python_drain(binary: Path, count: int) -> float:
    pinned(SUBSCRIBER_CORE)
    ch = channel("drain")
    subscriber = ch.subscriber()
    publisher = peer(binary, "publish", ch.name, count, PUBLISHER_CORE)
    ready(publisher)
    rows = np.zeros(BATCH, TICK)
    expected = np.arange(BATCH, dtype=np.uint64)
    received = 0
    started = None
    while received < count:
        got = subscriber.drain_into(rows)
        if got == 0:
            continue
        if started is None:
            started = time.perf_counter()
            first = received + got
        if not np.array_equal(rows["seq"][:got], expected[:got] + received):
            raise AssertionError(f"out of order at {received}")
        received += got
    elapsed = time.perf_counter() - started
    publisher.communicate(timeout=600)
    return (received - first) / elapsed


def rust_drain(binary: Path, count: int) -> float:
    ch = channel("rust")
    subscriber = peer(binary, "drain", ch.name, count, SUBSCRIBER_CORE)
    ready(subscriber)
    publisher = peer(binary, "publish", ch.name, count, PUBLISHER_CORE)
    publisher.communicate(timeout=600)
    return report_rate(subscriber)


def python_offer(binary: Path, count: int) -> float:
    pinned(PUBLISHER_CORE)
    ch = channel("offer")
    subscriber = peer(binary, "drain", ch.name, count, SUBSCRIBER_CORE)
    ready(subscriber)
    publisher = ch.publisher()
    # One bytes object per message, made beforehand: what the loop times is the offer.
    rows = np.zeros(count, TICK)
    rows["seq"] = np.arange(count, dtype=np.uint64)
    messages = [row.tobytes() for row in rows]
    offer = publisher.offer
    started = time.perf_counter()
    for message in messages:
        while not offer(message):
            pass
    elapsed = time.perf_counter() - started
    report_rate(subscriber)
    return count / elapsed


def python_offer_batch(binary: Path, count: int) -> float:
    pinned(PUBLISHER_CORE)
    ch = channel("batch")
    subscriber = peer(binary, "drain", ch.name, count, SUBSCRIBER_CORE)
    ready(subscriber)
    publisher = ch.publisher()
    rows = np.zeros(BATCH, TICK)
    sent = 0
    started = time.perf_counter()
    while sent < count:
        rows["seq"] = np.arange(sent, sent + BATCH, dtype=np.uint64)
        done = 0
        want = min(BATCH, count - sent)
        while done < want:
            done += publisher.offer_batch(rows[:want], start=done)
        sent += want
    elapsed = time.perf_counter() - started
    report_rate(subscriber)
    return count / elapsed


def _queue_producer(queue, count: int) -> None:
    pinned(PUBLISHER_CORE)
    message = bytes(64)
    for _ in range(count):
        queue.put(message)


def mp_queue(_binary: Path, count: int) -> float:
    pinned(SUBSCRIBER_CORE)
    queue = mp.Queue()
    producer = mp.Process(target=_queue_producer, args=(queue, count))
    producer.start()
    queue.get()
    started = time.perf_counter()
    for _ in range(count - 1):
        queue.get()
    elapsed = time.perf_counter() - started
    producer.join()
    return (count - 1) / elapsed


RING_ROWS = (1 << 20) // 64


def _ring_producer(name: str, count: int) -> None:
    pinned(PUBLISHER_CORE)
    memory = shared_memory.SharedMemory(name)
    indices = np.ndarray(2, np.uint64, memory.buf[:16])  # written, read
    ring = np.ndarray(RING_ROWS, TICK, memory.buf[64:])
    rows = np.zeros(BATCH, TICK)
    written = 0
    while written < count:
        n = min(BATCH, count - written)
        while written + n - int(indices[1]) > RING_ROWS:
            pass
        at = written % RING_ROWS
        rows["seq"][:n] = np.arange(written, written + n, dtype=np.uint64)
        ring[at : at + n] = rows[:n]  # RING_ROWS is a multiple of BATCH: no wrap inside
        written += n
        indices[0] = written
    del indices, ring
    memory.close()


def mp_shared_memory(_binary: Path, count: int) -> float:
    pinned(SUBSCRIBER_CORE)
    memory = shared_memory.SharedMemory(create=True, size=64 + RING_ROWS * 64)
    indices = np.ndarray(2, np.uint64, memory.buf[:16])
    indices[:] = 0
    ring = np.ndarray(RING_ROWS, TICK, memory.buf[64:])
    producer = mp.Process(target=_ring_producer, args=(memory.name, count))
    producer.start()
    out = np.zeros(BATCH, TICK)
    read = 0
    started = None
    while read < count:
        available = int(indices[0]) - read
        if available == 0:
            continue
        if started is None:
            started = time.perf_counter()
            first = read + min(available, BATCH)
        n = min(available, BATCH)
        at = read % RING_ROWS
        out[:n] = ring[at : at + n]
        read += n
        indices[1] = read
    elapsed = time.perf_counter() - started
    producer.join()
    del indices, ring
    memory.close()
    memory.unlink()
    return (read - first) / elapsed


def floor_ns(binary: Path) -> float:
    """The cache-line round trip between cores 0 and 1 now: a case's speed-state label."""
    out = subprocess.run(
        [str(binary), "floor", "--kind", "fifo-mpsc", "--name", "-"], capture_output=True, text=True, check=True
    ).stdout
    return float(out.strip().split("=")[1])


CASES = {
    "python_drain": (python_drain, 1.0),
    "rust_drain": (rust_drain, 1.0),
    "python_offer": (python_offer, 0.2),
    "python_offer_batch": (python_offer_batch, 1.0),
    "mp_queue": (mp_queue, 0.02),
    "mp_shared_memory": (mp_shared_memory, 1.0),
}


def run_case(case: str, binary: Path, count: int, results) -> None:
    function, share = CASES[case]
    results.put(function(binary, max(int(count * share), BATCH * 2)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--count", type=int, default=10_000_000, help="messages per salias case")
    parser.add_argument("--smoke", action="store_true", help="one short round: the harness works")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.count = 1, 200_000
    binary = peer_binary()
    clock = time.get_clock_info("perf_counter")
    out = args.out or HERE / "results" / f"python-{int(time.time())}.jsonl"
    if args.smoke:
        out = Path(os.devnull)
    context = mp.get_context("fork")
    records = []
    with open(out, "w") as sink:
        header = {
            "meta": True, "cpus": os.cpu_count(), "clock": "perf_counter", "clock_resolution_s": clock.resolution,
            "python": sys.version.split()[0], "numpy": np.__version__, "message_bytes": 64, "ring_bytes": 1 << 20,
            "placement": {"publisher": PUBLISHER_CORE, "subscriber": SUBSCRIBER_CORE}, "batch": BATCH,
        }
        sink.write(json.dumps(header) + "\n")
        cases = list(CASES)
        for round_ in range(args.rounds):
            order = cases[round_ % len(cases):] + cases[: round_ % len(cases)]
            for case in order:
                floor = floor_ns(binary)
                results = context.Queue()
                worker = context.Process(target=run_case, args=(case, binary, args.count, results))
                worker.start()
                rate = results.get(timeout=900)
                worker.join()
                record = {"round": round_, "case": case, "rate": rate, "floor_ns": floor}
                records.append(record)
                sink.write(json.dumps(record) + "\n")
                print(f"round {round_} {case:20} {rate / 1e6:10.2f} M msg/s   (floor {floor:.0f} ns)", flush=True)
    summarise(records, args.rounds)
    if not args.smoke:
        print(f"raw results: {out}")


def summarise(records, rounds: int) -> None:
    lowest = min(record["floor_ns"] for record in records)
    for record in records:
        record["state"] = "high floor" if record["floor_ns"] > 1.6 * lowest else "low floor"

    def spread(values):
        values = sorted(values)
        return f"{statistics.median(values):.3g} [{values[0]:.3g}, {values[-1]:.3g}] (n={len(values)})"

    print(f"\ncore {PUBLISHER_CORE} publisher, core {SUBSCRIBER_CORE} subscriber; lowest floor {lowest:.0f} ns")
    for state in ("low floor", "high floor"):
        of_state = [record for record in records if record["state"] == state]
        if not of_state:
            continue
        floors = [record["floor_ns"] for record in of_state]
        print(f"{state} state: {len(of_state)} of {len(records)} cases, floor {spread(floors)} ns; median [min, max]")
        for case in CASES:
            rates = [record["rate"] / 1e6 for record in of_state if record["case"] == case]
            if rates:
                print(f"  {case:20} {spread(rates)} M msg/s")
        by_round = {}
        for record in of_state:
            by_round.setdefault(record["round"], {})[record["case"]] = record["rate"]
        for numerator, denominator in RATIOS:
            ratios = [r[numerator] / r[denominator] for r in by_round.values() if numerator in r and denominator in r]
            if ratios:
                print(f"  {numerator} / {denominator}: {spread(ratios)} (per round)")


RATIOS = [
    ("python_drain", "rust_drain"),
    ("python_drain", "mp_queue"),
    ("python_drain", "mp_shared_memory"),
    ("python_offer", "mp_queue"),
    ("python_offer_batch", "rust_drain"),
]


if __name__ == "__main__":
    main()

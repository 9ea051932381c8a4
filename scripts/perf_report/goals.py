"""The performance goals: for each, the measured ratio (median [min, max] of per-round
ratios, from compute's paired runs), the target and whether it is met. Where a goal spans
several comparisons (ring sizes, message sizes, peers, loads) its ratio is the worst of
them, named in `which`."""

from collections import namedtuple

from .compute import MIB, IpcKey, OpenLoopKey, SizeKey, batched_p50, delivered, p50, paired_total, size_text, trips_per_sample


# `at_least`: the ratio must be ≥ target (throughput), else ≤ target (latency); `strict`:
# > or < (a lead), not ≥ or ≤.
Goal = namedtuple("Goal", "what target at_least strict ratio which")


def status(goal):
    """"met", "not met" or "no data", by the median of the goal's per-round ratios."""
    if goal.ratio is None:
        return "no data"
    m = goal.ratio[0]
    if goal.at_least:
        ok = m > goal.target if goal.strict else m >= goal.target
    else:
        ok = m < goal.target if goal.strict else m <= goal.target
    return "met" if ok else "not met"


def target_text(goal):
    sign = (">" if goal.strict else "≥") if goal.at_least else ("<" if goal.strict else "≤")
    return f"{sign} {goal.target:g}×"


def worst(candidates, at_least):
    """The (ratio, which) whose median is furthest from the goal's side, or (None, None)."""
    found = [(r, which) for r, which in candidates if r]
    if not found:
        return None, None
    return (min if at_least else max)(found, key=lambda c: c[0][0])


def pingpong_ratio(data, floor):
    """salias / `floor` p50, from the comparison if it ran that floor, else benches/ipc.rs;
    of samples of many round trips where the harness took them (precise far below the
    clock's step), else of single trips."""
    for runs, harness in ((data.cmp_pp, "comparison"), (data.ipc_pp, "benches/ipc.rs")):
        r = runs.ratio("salias", floor, batched_p50)
        if r:
            return r, f"{harness}, {trips_per_sample(runs)}-trip samples"
        r = runs.ratio("salias", floor, p50)
        if r:
            return r, harness
    return None, None


def goals(data, picks):
    """Every goal, in the order the report lists them."""
    out = []

    def add(what, target, at_least, found, strict=False):
        ratio, which = found
        out.append(Goal(what, target, at_least, strict, ratio, which))

    def tp(a, b):
        return data.cmp_tp.ratio(a, b, delivered) if a and b else None

    add("Ping-pong one-way p50 within 1.2× of the 64-byte message floor", 1.2, False, pingpong_ratio(data, "message-floor"))
    add("Ping-pong one-way p50 within 1.5× of the cache-line floor", 1.5, False, pingpong_ratio(data, "floor"))
    batch = f"offer_batch({data.batch})"
    add(f"{batch} delivers at least 0.8× the batched SPSC floor (1P1S)", 0.8, True, (tp(picks.salias_batch, picks.spsc), "comparison"))
    add(f"{batch} never delivers less than single offer (1P1S)", 1.0, True, (tp(picks.salias_batch, picks.salias_offer), "comparison"))
    add("Single offer delivers at least 0.7× the batched SPSC floor (1P1S)", 0.7, True, (tp(picks.salias_offer, picks.spsc), "comparison"))
    rings = []
    for ring in (4 * MIB, 64 * MIB):
        for api, b in (("offer", 1), ("offer_batch", 16)):
            a, base = IpcKey("FifoMpsc", 1, 1, ring, api, b), IpcKey("FifoMpsc", 1, 1, MIB, api, b)
            rings.append((data.ipc_tp.ratio(a, base, delivered), f"benches/ipc.rs FifoMpsc 1P1S {api if b == 1 else f'batch {b}'}, {size_text(ring)}"))
    add("At 4 and 64 MiB rings, 1P1S FIFO throughput stays within 0.8× of the 1 MiB figure", 0.8, True, worst(rings, True))
    sizes = sorted({k.message_bytes for k in data.ipc_sz.order})
    per_size = [(data.ipc_sz.ratio(SizeKey(n, 16), SizeKey(n, 1), delivered), f"{n} B messages") for n in sizes]
    add("Batches of 16 deliver no fewer messages than single offers at every message size", 1.0, True, worst(per_size, True))
    peers = [(tp(picks.salias_offer, b), f"salias offer / {name}") for b, name in ((picks.aeron_claim, "Aeron try_claim"), (picks.aeron_offer, "Aeron offer"), (picks.ice_loan, "iceoryx2 loan"))]
    add("salias delivers more than Aeron and iceoryx2 (1P1S)", 1.0, True, worst(peers, True), strict=True)
    loads = []
    for mode in data.ol_modes:
        for other in ("aeron", "iceoryx2"):
            for load in data.loads:
                if data.ol_ok("salias", load, mode) and data.ol_ok(other, load, mode):
                    r = data.cmp_ol.ratio(OpenLoopKey("salias", load, mode), OpenLoopKey(other, load, mode), paired_total("p50"))
                    loads.append((r, f"salias / {other} at {load / 1e6:g} M msg/s, {mode}"))
    add("salias's open-loop total p50 is below Aeron's and iceoryx2's at every load neither saturated at", 1.0, False, worst(loads, False), strict=True)
    return out

"""The performance goals: for each, the measured ratio (median [min, max] of per-round
ratios, from compute's paired runs), the target and whether it is met. Where a goal spans
several comparisons (ring sizes, message sizes, peers, loads) its ratio is the worst of
them, named in `which`. Runs are paired within one speed state only, and a goal is
measured in each state apart: its ratio is the worst state's, and `states` lists each
state's ratio of the comparison named (compute.label_states)."""

from collections import namedtuple

from .compute import MIB, IpcKey, OpenLoopKey, SizeKey, batched_p50, delivered, p50, paired_total, size_text, trips_per_sample, worst_state


# `at_least`: the ratio must be ≥ target (throughput), else ≤ target (latency); `strict`:
# > or < (a lead), not ≥ or ≤. `state`: the speed state of `ratio` (None: runs without
# probes); `states`: [(state, ratio)] of the comparison `which` names.
Goal = namedtuple("Goal", "what target at_least strict ratio which state states", defaults=(None, ()))


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
    """Of (by_state, which) candidates, the one whose worst state is furthest from the
    goal's side, as (by_state, which); (None, None) without pairs."""
    found = [(by_state, which) for by_state, which in candidates if by_state]
    if not found:
        return None, None
    return (min if at_least else max)(found, key=lambda c: worst_state(c[0], at_least)[1][0])


def pingpong_ratio(data, floor):
    """salias / `floor` p50 by state, from the comparison if it ran that floor, else
    benches/ipc.rs; of samples of many round trips where the harness took them (precise
    far below the clock's step), else of single trips."""
    for runs, harness in ((data.cmp_pp, "comparison"), (data.ipc_pp, "benches/ipc.rs")):
        r = runs.ratio_by_state("salias", floor, batched_p50, data.state_order)
        if r:
            return r, f"{harness}, {trips_per_sample(runs)}-trip samples"
        r = runs.ratio_by_state("salias", floor, p50, data.state_order)
        if r:
            return r, harness
    return None, None


def goals(data, picks):
    """Every goal, in the order the report lists them."""
    out = []

    def add(what, target, at_least, found, strict=False):
        by_state, which = found
        state, ratio = worst_state(by_state, at_least)
        out.append(Goal(what, target, at_least, strict, ratio, which, state, tuple(by_state or ())))

    order = data.state_order

    def tp(a, b):
        return data.cmp_tp.ratio_by_state(a, b, delivered, order) if a and b else None

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
            rings.append((data.ipc_tp.ratio_by_state(a, base, delivered, order), f"benches/ipc.rs FifoMpsc 1P1S {api if b == 1 else f'batch {b}'}, {size_text(ring)}"))
    add("At 4 and 64 MiB rings, 1P1S FIFO throughput stays within 0.8× of the 1 MiB figure", 0.8, True, worst(rings, True))
    for api, b, target in (("offer", 1, 0.5), ("offer_batch", 16, 0.9)):
        fifo = IpcKey("FifoMpsc", 1, 1, MIB, api, b)
        ordered = [
            (data.ipc_tp.ratio_by_state(IpcKey(kind, 1, 1, MIB, api, b), fifo, delivered, order), f"benches/ipc.rs {kind} / FifoMpsc, 1P1S, 1 MiB")
            for kind in ("OrderedMpsc", "OrderedFanout")
        ]
        name = "`offer`" if b == 1 else f"`offer_batch({b})`"
        add(f"Ordered 1P1S {name} delivers at least {target:g}× FIFO's (1 MiB)", target, True, worst(ordered, True))
    sizes = sorted({k.message_bytes for k in data.ipc_sz.order})
    per_size = [(data.ipc_sz.ratio_by_state(SizeKey(n, 16), SizeKey(n, 1), delivered, order), f"{n} B messages") for n in sizes]
    add("Batches of 16 deliver no fewer messages than single offers at every message size", 1.0, True, worst(per_size, True))
    peers = [(tp(picks.salias_offer, b), f"salias offer / {name}") for b, name in ((picks.aeron_claim, "Aeron try_claim"), (picks.aeron_offer, "Aeron offer"), (picks.ice_loan, "iceoryx2 loan"))]
    add("salias delivers more than Aeron and iceoryx2 (1P1S)", 1.0, True, worst(peers, True), strict=True)
    loads = []
    for mode in data.ol_modes:
        for other in ("aeron", "iceoryx2"):
            for load in data.loads:
                if data.ol_ok("salias", load, mode) and data.ol_ok(other, load, mode):
                    r = data.cmp_ol.ratio_by_state(OpenLoopKey("salias", load, mode), OpenLoopKey(other, load, mode), paired_total("p50"), order)
                    loads.append((r, f"salias / {other} at {load / 1e6:g} M msg/s, {mode}"))
    add("salias's open-loop total p50 is below Aeron's and iceoryx2's at every load neither saturated at", 1.0, False, worst(loads, False), strict=True)
    return out

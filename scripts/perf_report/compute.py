"""Computing: the records grouped by what was run (keys made of the records' fields),
medians with min and max over rounds, ratios per round, the headline ratios and where
salias is behind. It names what it compares (a headline's caption, a run's system and
API); the figures themselves are formatted by render."""

import math
from collections import namedtuple

# Differences smaller than this are not listed as "salias is behind".
TOLERANCE = 0.05
MIB = 1 << 20

# What identifies a run across rounds, per benchmark.
CmpKey = namedtuple("CmpKey", "system publishers ring_bytes buffer_messages api batch")
IpcKey = namedtuple("IpcKey", "kind publishers subscribers ring_bytes api batch")
SizeKey = namedtuple("SizeKey", "message_bytes batch")
StressKey = namedtuple("StressKey", "kind publishers batch")
OpenLoopKey = namedtuple("OpenLoopKey", "system offered_per_s mode")

# The open-loop mode of records without a `realtime` policy.
NORMAL = "normal scheduling"


def topology(key):
    return f"{key.publishers}P{key.subscribers}S"


def median(values):
    """The harnesses' convention: the upper median (sorted[n // 2])."""
    values = sorted(values)
    return values[len(values) // 2] if values else float("nan")


def mmm(values):
    """(median, min, max, count) of the values that are there, or None."""
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not values:
        return None
    return (median(values), min(values), max(values), len(values))


class Runs:
    """Records of one kind of run, grouped by a key, with (file, round) for pairing."""

    def __init__(self):
        self.by_key = {}
        self.order = []

    def add(self, key, source, record):
        if key not in self.by_key:
            self.by_key[key] = []
            self.order.append(key)
        self.by_key[key].append((source.path, record["round"], record))

    def get(self, key):
        return self.by_key.get(key, [])

    def first(self, key):
        """The first record of `key` (for what every round of it shares: placement, cores)."""
        return self.get(key)[0][2]

    def values(self, key, f):
        return [f(r) for _, _, r in self.get(key)]

    def stat(self, key, f):
        return mmm(self.values(key, f))

    def ratio(self, a, b, f):
        """Per-round ratios f(a) / f(b) for rounds where both ran (same file, same round) and
        f has a figure for both (it is None where a record lacks it)."""
        rb = {(p, r): rec for p, r, rec in self.get(b)}
        ratios = []
        for p, r, rec in self.get(a):
            other = rb.get((p, r))
            if other is not None and f(rec) is not None and f(other):
                ratios.append(f(rec) / f(other))
        return mmm(ratios)


def delivered(r):
    return r["delivered_per_s"]


def p50(r):
    return r["one_way_ns"]["p50"]


def batched_p50(r):
    """One-way p50 of samples of consecutive round trips (precise far below the clock's
    step), or None where the harness timed trips apart."""
    b = r.get("batched")
    return b["p50_ns"] if b else None


def trips_per_sample(runs):
    """The round trips per batched sample of these ping-pong runs, or None."""
    found = {rec["batched"]["trips_per_sample"] for key in runs.order for _, _, rec in runs.get(key) if rec.get("batched")}
    return max(found) if found else None


def total(pct):
    return lambda r: r["total_ns"][pct]


def paired_total(pct):
    """`total(pct)` for pairing rounds: none for a saturated run, whose figure measures a
    backlog, so a ratio leaves out every round in which either side saturated."""
    return lambda r: None if r["saturated"] else r["total_ns"][pct]


def ol_mode(record):
    """The scheduling an open-loop run had: `SCHED_FIFO 50`, or NORMAL."""
    rt = record.get("realtime")
    return f"{rt['policy']} {rt['priority']}" if rt else NORMAL


def clock_step(header):
    """The measured step of a file's latency clock in ns, or None where it is not recorded."""
    clock = header.get("latency_clock")
    return clock.get("smallest_step_ns") if isinstance(clock, dict) else None


class Data:
    """Every record of the sources, grouped by benchmark and key."""

    def __init__(self, sources):
        self.cmp_tp, self.cmp_pp, self.cmp_ol = Runs(), Runs(), Runs()
        self.ipc_tp, self.ipc_pp, self.ipc_sz, self.ipc_st = Runs(), Runs(), Runs(), Runs()
        for s in sources["comparison"]:
            for r in s.records:
                if r["bench"] == "throughput":
                    key = CmpKey(r["system"], r["publishers"], r["ring_bytes"], r["buffer_messages"], r["api"], r["batch"])
                    self.cmp_tp.add(key, s, r)
                elif r["bench"] == "pingpong":
                    self.cmp_pp.add(r["system"], s, r)
                elif r["bench"] == "openloop":
                    self.cmp_ol.add(OpenLoopKey(r["system"], float(r["offered_per_s"]), ol_mode(r)), s, r)
        for s in sources["ipc"]:
            for r in s.records:
                if r["bench"] == "throughput":
                    key = IpcKey(r["kind"], r["publishers"], r["subscribers"], r["ring_bytes"], r["api"], r["batch"])
                    self.ipc_tp.add(key, s, r)
                elif r["bench"] == "pingpong":
                    self.ipc_pp.add(r["system"], s, r)
                elif r["bench"] == "size":
                    self.ipc_sz.add(SizeKey(r["message_bytes"], r["batch"]), s, r)
                elif r["bench"] == "stress":
                    self.ipc_st.add(StressKey(r["kind"], r["publishers"], r["batch"]), s, r)
        self.steps = {s.path: clock_step(s.header) for k in ("comparison", "ipc") for s in sources[k]}
        cmp_cfg = sources["comparison"][0].header.get("config", {}) if sources["comparison"] else {}
        self.cmp_cfg = cmp_cfg
        self.default_ring = cmp_cfg.get("salias_ring_bytes") or MIB
        self.batch = cmp_cfg.get("batch") or 16
        self.rings = sorted({k.ring_bytes for k in self.ipc_tp.order})
        self.loads = sorted({k.offered_per_s for k in self.cmp_ol.order})
        self.ol_systems = [s for s in ("salias", "aeron", "iceoryx2") if any(k.system == s for k in self.cmp_ol.order)]
        modes = {k.mode for k in self.cmp_ol.order}
        self.ol_modes = ([NORMAL] if NORMAL in modes else []) + sorted(modes - {NORMAL})

    def step_of(self, runs, *keys):
        """The largest latency-clock step of the files the runs of `keys` came from, or None
        if a file does not record it."""
        steps = [self.steps.get(path) for key in keys for path, _, _ in runs.get(key)]
        return None if not steps or None in steps else max(steps)

    def cmp_key(self, system, api, batch=1, publishers=1, ring_bytes=None):
        """The first comparison run of `system` with this API, preferring `ring_bytes`."""
        cands = [k for k in self.cmp_tp.order if (k.system, k.api, k.batch, k.publishers) == (system, api, batch, publishers)]
        if ring_bytes is not None:
            cands = [k for k in cands if k.ring_bytes == ring_bytes] or cands
        return cands[0] if cands else None

    def ol_ok(self, system, load, mode):
        """Whether `system` kept to the plan at `load` in most rounds of `mode`."""
        runs = self.cmp_ol.get(OpenLoopKey(system, load, mode))
        return runs and sum(1 for _, _, r in runs if r["saturated"]) * 2 <= len(runs)


# The comparisons behind the headline table, and which runs each one pairs.
# `step` is the largest latency-clock step of the files behind a latency headline (None:
# not recorded, or a throughput headline).
Headline = namedtuple("Headline", "what ratio unit a b step", defaults=(None,))


class Picks:
    """The comparison runs the headlines and the behind list compare."""

    def __init__(self, data):
        batch = data.batch
        self.salias_offer = data.cmp_key("salias", "offer", ring_bytes=data.default_ring)
        self.salias_batch = data.cmp_key("salias", "offer_batch", batch, ring_bytes=data.default_ring)
        self.aeron_claim = data.cmp_key("aeron", "try_claim")
        self.aeron_offer = data.cmp_key("aeron", "offer")
        self.ice_loan = data.cmp_key("iceoryx2", "loan_uninit")
        self.spsc = data.cmp_key("spsc-floor", "batch", batch)
        self.salias_offer_2p = data.cmp_key("salias", "offer", publishers=2)
        self.aeron_claim_2p = data.cmp_key("aeron", "try_claim", publishers=2)


def headlines(data, picks):
    """Headline ratios, each with the medians of its two sides; unit says which kind:
    throughput (comparison crate), ipc-throughput (benches/ipc.rs), pingpong, openloop."""
    out = []

    def oversubscribed(runs, *keys):
        return any(r.get("oversubscribed") for key in keys for _, _, r in runs.get(key))

    # Oversubscribed runs measure the scheduler: their ratios stay in their own tables.
    def tp_ratio(what, a, b):
        if a and b and not oversubscribed(data.cmp_tp, a, b):
            r = data.cmp_tp.ratio(a, b, delivered)
            if r:
                out.append(Headline(what, r, "throughput", data.cmp_tp.stat(a, delivered), data.cmp_tp.stat(b, delivered)))

    tp_ratio("Throughput, salias `offer` / Aeron `try_claim` (1P1S, 64 B)", picks.salias_offer, picks.aeron_claim)
    tp_ratio("Throughput, salias `offer` / Aeron `offer` (1P1S)", picks.salias_offer, picks.aeron_offer)
    tp_ratio("Throughput, salias `offer` / iceoryx2 `loan_uninit` (1P1S)", picks.salias_offer, picks.ice_loan)
    tp_ratio(f"Throughput, salias batch {data.batch} / SPSC floor (1P1S)", picks.salias_batch, picks.spsc)
    tp_ratio("Throughput, salias `offer` / SPSC floor (1P1S)", picks.salias_offer, picks.spsc)
    tp_ratio("Throughput, salias 2P1S `offer` / Aeron 2P1S `try_claim`", picks.salias_offer_2p, picks.aeron_claim_2p)

    def pp_ratio(runs, other, what, harness):
        r = runs.ratio("salias", other, p50)
        if r:
            step = data.step_of(runs, "salias", other)
            out.append(Headline(f"Ping-pong one-way p50, salias / {what} ({harness})", r, "pingpong", runs.stat("salias", p50), runs.stat(other, p50), step))
        # Samples of many trips are far above the clock's step: no step note.
        r = runs.ratio("salias", other, batched_p50)
        if r:
            what_b = f"Ping-pong one-way p50 of {trips_per_sample(runs)}-trip samples, salias / {what} ({harness})"
            out.append(Headline(what_b, r, "pingpong", runs.stat("salias", batched_p50), runs.stat(other, batched_p50)))

    for other, what in (("floor", "cache-line floor"), ("message-floor", "64-byte message floor"), ("aeron", "Aeron"), ("iceoryx2", "iceoryx2")):
        pp_ratio(data.cmp_pp, other, what, "comparison")
    for other, what in (("floor", "cache-line floor"), ("message-floor", "64-byte message floor")):
        pp_ratio(data.ipc_pp, other, what, "benches/ipc.rs")
    for ring in data.rings:
        for a_kind, b_kind in (("OrderedMpsc", "FifoMpsc"), ("OrderedFanout", "FifoFanout")):
            a, b = IpcKey(a_kind, 2, 1, ring, "offer_batch", 16), IpcKey(b_kind, 2, 1, ring, "offer_batch", 16)
            r = None if oversubscribed(data.ipc_tp, a, b) else data.ipc_tp.ratio(a, b, delivered)
            if r:
                what = f"Throughput, {a_kind} 2P1S batch 16 / {b_kind} 2P1S batch 16 (ring {size_text(ring)}, benches/ipc.rs)"
                out.append(Headline(what, r, "ipc-throughput", data.ipc_tp.stat(a, delivered), data.ipc_tp.stat(b, delivered)))
    # Open loop, per scheduling mode: at the highest load at which both salias and the
    # other ran and neither saturated in most rounds, the ratio of total-latency p50 and p99.
    for mode in data.ol_modes:
        for other, what in (("aeron", "Aeron"), ("iceoryx2", "iceoryx2")):
            common = [l for l in data.loads if data.ol_ok("salias", l, mode) and data.ol_ok(other, l, mode)]
            if common:
                load = common[-1]
                a, b = OpenLoopKey("salias", load, mode), OpenLoopKey(other, load, mode)
                step = data.step_of(data.cmp_ol, a, b)
                for pct in ("p50", "p99"):
                    r = data.cmp_ol.ratio(a, b, paired_total(pct))
                    if r:
                        what_pct = f"Open loop ({mode}) at {load / 1e6:g} M msg/s, total latency {pct}, salias / {what}"
                        out.append(Headline(what_pct, r, "openloop", data.cmp_ol.stat(a, total(pct)), data.cmp_ol.stat(b, total(pct)), step))
    return out


def size_text(n):
    """Bytes as the captions write them: 64 KiB, 1 MiB."""
    if n is None:
        return "–"
    if n % MIB == 0:
        return f"{n // MIB} MiB"
    if n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} B"


def cmp_name(key):
    """A comparison run's system and API, as the report names them."""
    names = {
        ("salias", "offer"): "salias offer",
        ("salias", "offer_batch"): f"salias batch {key.batch}",
        ("aeron", "try_claim"): "Aeron try_claim",
        ("aeron", "offer"): "Aeron offer",
        ("iceoryx2", "loan_uninit"): "iceoryx2 loan, spin retry",
        ("iceoryx2", "loan_uninit_block"): "iceoryx2 RetryUntilDelivered",
        ("spsc-floor", "batch"): f"SPSC floor (batch {key.batch})",
    }
    fallback = f"{key.system} {key.api}" + (f" {key.batch}" if key.batch != 1 else "")
    return names.get((key.system, key.api), fallback)


def throughput_behind(data, picks):
    """(a, b, ratio) where salias's throughput is more than TOLERANCE below a peer's."""
    out = []
    for b in (picks.aeron_claim, picks.aeron_offer, picks.ice_loan):
        for a in (picks.salias_offer, picks.salias_batch):
            if a and b:
                r = data.cmp_tp.ratio(a, b, delivered)
                if r and r[0] < 1 - TOLERANCE:
                    out.append((a, b, r))
    return out


def pingpong_behind(data):
    """(other, ratio) where salias's ping-pong p50 is more than TOLERANCE above a peer's."""
    out = []
    for other in ("aeron", "iceoryx2"):
        r = data.cmp_pp.ratio("salias", other, p50)
        if r and r[0] > 1 + TOLERANCE:
            out.append((other, r))
    return out


def openloop_behind(data):
    """Per mode, latency findings ("latency", mode, load, pct, other, ratio) at levels neither
    system saturated at, then saturation findings ("saturated", mode, salias level, other,
    its level)."""
    out = []
    for mode in data.ol_modes:
        for other in ("aeron", "iceoryx2"):
            for load in data.loads:
                if not (data.ol_ok("salias", load, mode) and data.ol_ok(other, load, mode)):
                    continue  # a saturated level compares backlogs, not latencies
                for pct in ("p50", "p99"):
                    r = data.cmp_ol.ratio(OpenLoopKey("salias", load, mode), OpenLoopKey(other, load, mode), paired_total(pct))
                    if r and r[0] > 1 + TOLERANCE:
                        out.append(("latency", mode, load, pct, other, r))
        sat_level = {}
        for system in data.ol_systems:
            if not any(k.system == system and k.mode == mode for k in data.cmp_ol.order):
                continue
            sl = [l for l in data.loads if data.cmp_ol.get(OpenLoopKey(system, l, mode)) and not data.ol_ok(system, l, mode)]
            sat_level[system] = sl[0] if sl else None
        for other in ("aeron", "iceoryx2"):
            a, b = sat_level.get("salias"), sat_level.get(other)
            if a is not None and (b is None or b > a) and other in sat_level:
                out.append(("saturated", mode, a, other, b))
    return out

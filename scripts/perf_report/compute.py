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
# huge_page_bytes: the rings' huge page size (benches/ipc's huge-page ring runs); None for
# normal pages, so every key written without it means normal pages.
IpcKey = namedtuple("IpcKey", "kind publishers subscribers ring_bytes api batch huge_page_bytes", defaults=(None,))
SizeKey = namedtuple("SizeKey", "message_bytes batch")
# The `batch` of a size sweep's write-floor runs (benches/ipc's write floor: one process
# writing the frames, nothing reading): not a batch size, so no salias key can be it.
WRITE_FLOOR = "write-floor"

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


# Speed states (doc/benchmarking.md rule 11). Each run carries the cache-line one-way
# latency between its cores just before and just after it (`state`). The figures of all
# runs fall into a few levels, apart by factors of 1.6 to 4 on the development VM; a new
# level starts where a figure exceeds the lowest of the level below by LEVEL_STEP. A run
# is in a state when both its figures fall in that level, and changed state otherwise. A
# level of fewer than MIN_LEVEL_SHARE of the probes (and fewer than 5) is no state: a probe
# caught mid-change; a run with such a probe counts as changed.
LEVEL_STEP = 1.4
MIN_LEVEL_SHARE = 0.01
CHANGED = "changed during the run"


def speed_levels(values):
    """The levels of these probe figures (ns), ascending: each a sorted list."""
    levels = []
    for v in sorted(values):
        if not levels or v > LEVEL_STEP * levels[-1][0]:
            levels.append([v])
        else:
            levels[-1].append(v)
    least = min(5, MIN_LEVEL_SHARE * len(values))
    return [level for level in levels if len(level) >= least]


def level_name(level):
    """A state's name: its line's median one-way latency, e.g. `line 65 ns`."""
    return f"line {median(level):.0f} ns"


def label_states(sources):
    """Labels every record of `sources` that carries a probe with its state (`_state`: a
    level's name or CHANGED); returns the levels, ascending. Records without a probe (files
    written before it was recorded) stay unlabelled."""
    probed = [r for kind in sources for s in sources[kind] for r in s.records if isinstance(r.get("state"), dict)]
    levels = speed_levels([r["state"][side] for r in probed for side in ("before_ns", "after_ns")])

    def level_of(v):
        return next((i for i, level in enumerate(levels) if level[0] <= v <= level[-1]), None)

    for r in probed:
        before, after = level_of(r["state"]["before_ns"]), level_of(r["state"]["after_ns"])
        r["_state"] = level_name(levels[before]) if before == after and before is not None else CHANGED
    return levels


def state_order(levels):
    """Every state name in the order the report lists them: the levels ascending, then a
    change, then unlabelled runs (None)."""
    return [level_name(level) for level in levels] + [CHANGED, None]


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

    def values(self, key, f, state=...):
        """f of every run of `key`; of those in `state` only, if given (None: unlabelled)."""
        return [f(r) for _, _, r in self.get(key) if state is ... or r.get("_state") == state]

    def stat(self, key, f, state=...):
        return mmm(self.values(key, f, state))

    def pairs(self, a, b, f):
        """(state, f(a) / f(b)) per round where both ran (same file, same round), f has a
        figure for both (it is None where a record lacks it), and both ran in one state:
        never a pair that changed state, nor two runs of different states."""
        rb = {(p, r): rec for p, r, rec in self.get(b)}
        out = []
        for p, r, rec in self.get(a):
            other = rb.get((p, r))
            if other is None or f(rec) is None or not f(other):
                continue
            state = rec.get("_state")
            if state == CHANGED or other.get("_state") != state:
                continue
            out.append((state, f(rec) / f(other)))
        return out

    def ratio(self, a, b, f):
        """The per-round ratios of `pairs`, summarised over every state (for the tables; the
        headlines and goals take `ratio_by_state`)."""
        return mmm([x for _, x in self.pairs(a, b, f)])

    def ratio_by_state(self, a, b, f, order):
        """[(state, summary of its per-round ratios)] for each state with a pair, in `order`."""
        found = {}
        for state, x in self.pairs(a, b, f):
            found.setdefault(state, []).append(x)
        return [(state, mmm(found[state])) for state in order if state in found]

    def state_counts(self, key, order):
        """[(state, runs of `key` in it)] in `order`, states with none left out."""
        counts = {}
        for _, _, r in self.get(key):
            counts[r.get("_state")] = counts.get(r.get("_state"), 0) + 1
        return [(state, counts[state]) for state in order if state in counts]


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
        self.levels = label_states(sources)
        self.state_order = state_order(self.levels)
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
                    key = IpcKey(r["kind"], r["publishers"], r["subscribers"], r["ring_bytes"], r["api"], r["batch"], r.get("huge_page_bytes"))
                    self.ipc_tp.add(key, s, r)
                elif r["bench"] == "pingpong":
                    self.ipc_pp.add(r["system"], s, r)
                elif r["bench"] == "size" and r.get("kind") == "WriteFloor":
                    self.ipc_sz.add(SizeKey(r["message_bytes"], WRITE_FLOOR), s, r)
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
        self.huge_pages = sorted({k.huge_page_bytes for k in self.ipc_tp.order if k.huge_page_bytes})
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


def worst_state(by_state, at_least):
    """The (state, summary) of `ratio_by_state` whose median is furthest from the goal's
    side: the lowest where more is better (`at_least`), the highest where less is; (None,
    None) without pairs."""
    if not by_state:
        return None, None
    return (min if at_least else max)(by_state, key=lambda sr: sr[1][0])


# The comparisons behind the headline table, and which runs each one pairs: `ratio` is
# the worst state's (`state`; None for runs without probes), `a` and `b` its two sides'
# medians, `states` every state's ratio. `step` is the largest latency-clock step of the
# files behind a latency headline (None: not recorded, or a throughput headline).
Headline = namedtuple("Headline", "what ratio unit a b step state states", defaults=(None, None, ()))


def state_headline(data, runs, what, unit, a, b, f, step=None, fa=None):
    """The headline of a / b by f (each side's medians by `fa`, if the pairing f differs),
    in its worst state; None without a pair."""
    by_state = runs.ratio_by_state(a, b, f, data.state_order)
    state, ratio = worst_state(by_state, unit in ("throughput", "ipc-throughput"))
    if ratio is None:
        return None
    fa = fa or f
    return Headline(what, ratio, unit, runs.stat(a, fa, state), runs.stat(b, fa, state), step, state, by_state)


class Picks:
    """The comparison runs the headlines and the behind list compare."""

    def __init__(self, data):
        batch = data.batch
        self.salias_offer = data.cmp_key("salias", "offer", ring_bytes=data.default_ring)
        self.salias_batch = data.cmp_key("salias", "offer_batch", batch, ring_bytes=data.default_ring)
        self.aeron_claim = data.cmp_key("aeron", "try_claim")
        self.aeron_offer = data.cmp_key("aeron", "offer")
        self.ice_loan = data.cmp_key("iceoryx2", "loan_uninit")
        self.spsc = data.cmp_key("spsc-floor", "batch", batch, ring_bytes=data.default_ring)
        # The floor in slots of salias's frame bytes: the same ring moving what salias moves.
        self.spsc_frame = data.cmp_key("spsc-floor", "frame_batch", batch, ring_bytes=data.default_ring)
        # The larger rings the comparison ran both salias and the SPSC floor with: what the
        # ring size costs salias beside what it costs the machine itself.
        self.larger_rings = []
        if self.salias_offer and self.spsc:
            small = self.salias_offer.ring_bytes
            for k in data.cmp_tp.order:
                if k.system == "spsc-floor" and k.ring_bytes > small and k.ring_bytes not in [r for r, _, _ in self.larger_rings]:
                    salias = data.cmp_key("salias", "offer", ring_bytes=k.ring_bytes)
                    if salias and salias.ring_bytes == k.ring_bytes:
                        self.larger_rings.append((k.ring_bytes, salias, k))
        # salias at the ring size of Aeron's term, where the comparison ran one: the same
        # buffer on both sides.
        term = self.aeron_claim.ring_bytes if self.aeron_claim else None
        same = data.cmp_key("salias", "offer", ring_bytes=term) if term else None
        self.salias_offer_at_term = same if same and same.ring_bytes == term and same != self.salias_offer else None
        self.salias_offer_2p = data.cmp_key("salias", "offer", publishers=2)
        self.aeron_claim_2p = data.cmp_key("aeron", "try_claim", publishers=2)


def headlines(data, picks):
    """Headline ratios, each with the medians of its two sides; unit says which kind:
    throughput (comparison crate), ipc-throughput (benches/ipc.rs), pingpong, openloop."""
    out = []

    def oversubscribed(runs, *keys):
        return any(r.get("oversubscribed") for key in keys for _, _, r in runs.get(key))

    # Oversubscribed runs measure the scheduler: their ratios stay in their own tables.
    def add(headline):
        if headline:
            out.append(headline)

    def tp_ratio(what, a, b):
        if a and b and not oversubscribed(data.cmp_tp, a, b):
            add(state_headline(data, data.cmp_tp, what, "throughput", a, b, delivered))

    tp_ratio("Throughput, salias `offer` / Aeron `try_claim` (1P1S, 64 B)", picks.salias_offer, picks.aeron_claim)
    tp_ratio("Throughput, salias `offer` / Aeron `offer` (1P1S)", picks.salias_offer, picks.aeron_offer)
    if picks.salias_offer_at_term:
        ring = size_text(picks.salias_offer_at_term.ring_bytes)
        tp_ratio(f"Throughput, salias `offer` / Aeron `try_claim`, both buffers {ring} (1P1S)", picks.salias_offer_at_term, picks.aeron_claim)
    tp_ratio("Throughput, salias `offer` / iceoryx2 `loan_uninit` (1P1S)", picks.salias_offer, picks.ice_loan)
    tp_ratio(f"Throughput, salias batch {data.batch} / SPSC floor (1P1S)", picks.salias_batch, picks.spsc)
    tp_ratio("Throughput, salias `offer` / SPSC floor (1P1S)", picks.salias_offer, picks.spsc)
    frame = "SPSC floor in slots of salias's frame bytes"
    tp_ratio(f"Throughput, salias batch {data.batch} / {frame} (1P1S)", picks.salias_batch, picks.spsc_frame)
    tp_ratio(f"Throughput, salias `offer` / {frame} (1P1S)", picks.salias_offer, picks.spsc_frame)
    tp_ratio(f"Throughput, {frame} / SPSC floor (1P1S; what the frame header costs the machine)", picks.spsc_frame, picks.spsc)
    tp_ratio("Throughput, salias 2P1S `offer` / Aeron 2P1S `try_claim`", picks.salias_offer_2p, picks.aeron_claim_2p)
    small = size_text(picks.salias_offer.ring_bytes) if picks.salias_offer else ""
    for ring, salias, floor in picks.larger_rings:
        large = size_text(ring)
        tp_ratio(f"Throughput, SPSC floor {large} / {small} ring (1P1S; what the ring size costs the machine)", floor, picks.spsc)
        tp_ratio(f"Throughput, salias `offer` {large} / {small} ring (1P1S)", salias, picks.salias_offer)

    def pp_ratio(runs, other, what, harness):
        step = data.step_of(runs, "salias", other)
        add(state_headline(data, runs, f"Ping-pong one-way p50, salias / {what} ({harness})", "pingpong", "salias", other, p50, step))
        # Samples of many trips are far above the clock's step: no step note.
        what_b = f"Ping-pong one-way p50 of {trips_per_sample(runs)}-trip samples, salias / {what} ({harness})"
        add(state_headline(data, runs, what_b, "pingpong", "salias", other, batched_p50))

    for other, what in (("floor", "cache-line floor"), ("message-floor", "64-byte message floor"), ("aeron", "Aeron"), ("iceoryx2", "iceoryx2")):
        pp_ratio(data.cmp_pp, other, what, "comparison")
    for other, what in (("floor", "cache-line floor"), ("message-floor", "64-byte message floor"), ("ring-floor", "ring floor of salias's frames")):
        pp_ratio(data.ipc_pp, other, what, "benches/ipc.rs")
    # The write floor (one process writing the frames, nothing reading) at each ring size:
    # how near salias's publisher comes to what the machine lets one core write there, and
    # what the floor at a larger ring allows the ring-size goal against salias at 1 MiB.
    for ring in data.rings:
        floor = IpcKey("WriteFloor", 1, 0, ring, "offer", 1)
        for api, b in (("offer", 1), ("offer_batch", 16)):
            a = IpcKey("FifoMpsc", 1, 1, ring, api, b)
            caption = "`offer`" if b == 1 else f"batch {b}"
            what = f"Throughput, FifoMpsc 1P1S {caption} / write floor of its frames (ring {size_text(ring)}, benches/ipc.rs)"
            add(state_headline(data, data.ipc_tp, what, "ipc-throughput", a, floor, delivered))
        if ring > MIB:
            small = IpcKey("FifoMpsc", 1, 1, MIB, "offer", 1)
            what = f"Throughput, write floor {size_text(ring)} / FifoMpsc 1P1S `offer` 1 MiB (what one writer alone allows the ring-size goal, benches/ipc.rs)"
            add(state_headline(data, data.ipc_tp, what, "ipc-throughput", floor, small, delivered))
        # The ring-size goal again with the rings on huge pages (`Config::huge_pages`),
        # against the same 1 MiB runs on normal pages the goal divides by (the 1 MiB ring is
        # smaller than one huge page, so it has no huge-page runs).
        for page in data.huge_pages:
            for api, b in (("offer", 1), ("offer_batch", 16)):
                a = IpcKey("FifoMpsc", 1, 1, ring, api, b, page)
                small = IpcKey("FifoMpsc", 1, 1, MIB, api, b)
                caption = "`offer`" if b == 1 else f"batch {b}"
                what = f"Throughput, FifoMpsc 1P1S {caption} {size_text(ring)} on {size_text(page)} huge pages / the same at 1 MiB on normal pages (the ring-size goal with `Config::huge_pages`, benches/ipc.rs)"
                add(state_headline(data, data.ipc_tp, what, "ipc-throughput", a, small, delivered))
    for ring in data.rings:
        for a_kind, b_kind in (("OrderedMpsc", "FifoMpsc"), ("OrderedFanout", "FifoFanout")):
            a, b = IpcKey(a_kind, 2, 1, ring, "offer_batch", 16), IpcKey(b_kind, 2, 1, ring, "offer_batch", 16)
            if not oversubscribed(data.ipc_tp, a, b):
                what = f"Throughput, {a_kind} 2P1S batch 16 / {b_kind} 2P1S batch 16 (ring {size_text(ring)}, benches/ipc.rs)"
                add(state_headline(data, data.ipc_tp, what, "ipc-throughput", a, b, delivered))
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
                    what_pct = f"Open loop ({mode}) at {load / 1e6:g} M msg/s, total latency {pct}, salias / {what}"
                    add(state_headline(data, data.cmp_ol, what_pct, "openloop", a, b, paired_total(pct), step, total(pct)))
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
        ("spsc-floor", "frame_batch"): f"SPSC floor, frame-sized slots (batch {key.batch})",
    }
    fallback = f"{key.system} {key.api}" + (f" {key.batch}" if key.batch != 1 else "")
    return names.get((key.system, key.api), fallback)


def throughput_behind(data, picks):
    """(a, b, ratio, state) where salias's throughput is more than TOLERANCE below a peer's
    in its worst state."""
    out = []
    for b in (picks.aeron_claim, picks.aeron_offer, picks.ice_loan):
        for a in (picks.salias_offer, picks.salias_batch):
            if a and b:
                state, r = worst_state(data.cmp_tp.ratio_by_state(a, b, delivered, data.state_order), True)
                if r and r[0] < 1 - TOLERANCE:
                    out.append((a, b, r, state))
    return out


def pingpong_behind(data):
    """(other, ratio, state) where salias's ping-pong p50 is more than TOLERANCE above a
    peer's in its worst state."""
    out = []
    for other in ("aeron", "iceoryx2"):
        state, r = worst_state(data.cmp_pp.ratio_by_state("salias", other, p50, data.state_order), False)
        if r and r[0] > 1 + TOLERANCE:
            out.append((other, r, state))
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
                    a, b = OpenLoopKey("salias", load, mode), OpenLoopKey(other, load, mode)
                    state, r = worst_state(data.cmp_ol.ratio_by_state(a, b, paired_total(pct), data.state_order), False)
                    if r and r[0] > 1 + TOLERANCE:
                        out.append(("latency", mode, load, pct, other, r, state))
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

"""The goals are computed from paired rounds and say met, not met or no data:
python3 scripts/perf_report/test_goals.py"""

import os
import sys
import unittest
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True

from perf_report import compute, goals, render  # noqa: E402
from perf_report.load import SYSTEMS, contract_problem  # noqa: E402
from perf_report.render_latency import pp_table  # noqa: E402

MIB = 1 << 20
CLOCK = {"source": "tsc", "counter": "lfence; rdtsc", "calibration": {"ticks_per_s": 2.5e9}, "ns_per_tick": 0.4, "smallest_step_ns": 10.0, "monotonic_step_ns": 20, "refused": None}


def pingpong(system, rnd, p50):
    q = {"p50": p50, "p90": p50, "p99": p50, "p99.9": p50, "p99.99": p50, "max": p50, "count": 1000}
    return {"bench": "pingpong", "system": system, "round": rnd, "cores": [0, 1], "one_way_ns": q}


def throughput(bench, rnd, per_s, ring=MIB, batch=1, size=64, kind="FifoMpsc"):
    return {
        "bench": bench,
        "system": "salias",
        "round": rnd,
        "kind": kind,
        "publishers": 1,
        "subscribers": 1,
        "ring_bytes": ring,
        "api": "offer" if batch == 1 else "offer_batch",
        "batch": batch,
        "message_bytes": size,
        "delivered_per_s": per_s,
    }


def cmp_run(system, api, batch, rnd, per_s):
    """A comparison throughput record of `system`'s `api`."""
    r = throughput("throughput", rnd, per_s, batch=batch)
    return dict(r, system=system, api=api, buffer_messages=None)


def openloop(system, rnd, load, p50, realtime=None):
    q = {"p50": p50, "p99": p50 * 10}
    r = {"bench": "openloop", "system": system, "round": rnd, "offered_per_s": load, "saturated": False, "total_ns": q}
    if realtime:
        r["realtime"] = {"policy": "SCHED_FIFO", "priority": realtime}
    return r


def source(path, records, header=None):
    return SimpleNamespace(path=path, records=records, header=header or {})


def by_what(found):
    return {g.what: g for g in found}


class Goals(unittest.TestCase):
    def compute(self, cmp=(), ipc=(), cmp_header=None):
        sources = {"comparison": [source("c.jsonl", list(cmp), cmp_header)] if cmp else [], "ipc": [source("i.jsonl", list(ipc))] if ipc else [], "wake": []}
        data = compute.Data(sources)
        picks = compute.Picks(data)
        return data, picks, by_what(goals.goals(data, picks))

    def test_pingpong_goals_from_paired_rounds_one_met_one_not(self):
        # Round 0: 110 / 100 message floor, 110 / 60 line floor; round 1: 130 / 100, 130 / 100.
        cmp = [pingpong("salias", 0, 110), pingpong("message-floor", 0, 100), pingpong("floor", 0, 60)]
        cmp += [pingpong("salias", 1, 130), pingpong("message-floor", 1, 100), pingpong("floor", 1, 100)]
        _, _, found = self.compute(cmp=cmp)
        msg = found["Ping-pong one-way p50 within 1.2× of the 64-byte message floor"]
        self.assertEqual(msg.ratio, (1.3, 1.1, 1.3, 2), "upper median of per-round ratios")
        self.assertEqual(goals.status(msg), "not met")
        self.assertEqual(msg.which, "comparison")
        line = found["Ping-pong one-way p50 within 1.5× of the cache-line floor"]
        self.assertAlmostEqual(line.ratio[0], 110 / 60)
        self.assertEqual(goals.status(line), "not met")

    def test_pingpong_goal_prefers_samples_of_many_trips(self):
        def batched(rec, p50_ns):
            return dict(rec, batched={"trips_per_sample": 16, "samples": 125, "p50_ns": p50_ns, "p90_ns": p50_ns, "p99_ns": p50_ns})

        # Per trip the clock's 10 ns step makes it 70 / 60; the 16-trip samples say 66 / 60.
        ipc = [batched(pingpong("salias", 0, 70), 66.0), batched(pingpong("message-floor", 0, 60), 60.0)]
        data, picks, found = self.compute(ipc=ipc)
        g = found["Ping-pong one-way p50 within 1.2× of the 64-byte message floor"]
        self.assertAlmostEqual(g.ratio[0], 1.1)
        self.assertEqual((goals.status(g), g.which), ("met", "benches/ipc.rs, 16-trip samples"))
        heads = {h.what: h.ratio[0] for h in compute.headlines(data, picks)}
        self.assertAlmostEqual(heads["Ping-pong one-way p50, salias / 64-byte message floor (benches/ipc.rs)"], 70 / 60)
        self.assertAlmostEqual(heads["Ping-pong one-way p50 of 16-trip samples, salias / 64-byte message floor (benches/ipc.rs)"], 1.1)

    def test_a_goal_met_and_the_others_without_data(self):
        ipc = [pingpong("salias", 0, 115), pingpong("message-floor", 0, 100)]
        _, _, found = self.compute(ipc=ipc)
        msg = found["Ping-pong one-way p50 within 1.2× of the 64-byte message floor"]
        self.assertEqual(goals.status(msg), "met")
        self.assertEqual(msg.which, "benches/ipc.rs", "the comparison did not run it")
        for what, g in found.items():
            if "message floor" not in what:
                self.assertEqual(goals.status(g), "no data", what)
                self.assertIsNone(g.ratio)

    def test_ring_goal_names_the_worst_ring_and_api(self):
        ipc = []
        for rnd in range(3):
            ipc += [throughput("throughput", rnd, 100e6), throughput("throughput", rnd, 100e6, batch=16)]
            ipc += [throughput("throughput", rnd, 90e6, ring=4 * MIB), throughput("throughput", rnd, 95e6, ring=4 * MIB, batch=16)]
            ipc += [throughput("throughput", rnd, 85e6, ring=64 * MIB), throughput("throughput", rnd, 60e6 + rnd * 1e6, ring=64 * MIB, batch=16)]
        _, _, found = self.compute(ipc=ipc)
        g = found["At 4 and 64 MiB rings, 1P1S FIFO throughput stays within 0.8× of the 1 MiB figure"]
        self.assertEqual(g.which, "benches/ipc.rs FifoMpsc 1P1S batch 16, 64 MiB")
        self.assertAlmostEqual(g.ratio[0], 0.61)
        self.assertEqual(goals.status(g), "not met")

    def test_huge_page_runs_stay_out_of_the_ring_goal_and_have_headlines_of_their_own(self):
        ipc = []
        for rnd in range(3):
            ipc += [throughput("throughput", rnd, 100e6), throughput("throughput", rnd, 100e6, batch=16)]
            ipc += [throughput("throughput", rnd, 70e6, ring=64 * MIB), throughput("throughput", rnd, 75e6, ring=64 * MIB, batch=16)]
            # The same setups on 2 MiB pages, much faster: mixed in, they would lift the goal.
            for batch, per_s in ((1, 95e6), (16, 90e6)):
                ipc.append(dict(throughput("throughput", rnd, per_s, ring=64 * MIB, batch=batch), huge_page_bytes=2 * MIB))
        data, picks, found = self.compute(ipc=ipc)
        g = found["At 4 and 64 MiB rings, 1P1S FIFO throughput stays within 0.8× of the 1 MiB figure"]
        self.assertAlmostEqual(g.ratio[0], 0.7)
        self.assertEqual(goals.status(g), "not met")
        heads = {h.what: h.ratio[0] for h in compute.headlines(data, picks)}
        huge = {what: r for what, r in heads.items() if "huge pages" in what}
        self.assertEqual(len(huge), 2, huge)
        self.assertAlmostEqual(huge["Throughput, FifoMpsc 1P1S `offer` 64 MiB on 2 MiB huge pages / the same at 1 MiB on normal pages (the ring-size goal with `Config::huge_pages`, benches/ipc.rs)"], 0.95)
        self.assertAlmostEqual(huge["Throughput, FifoMpsc 1P1S batch 16 64 MiB on 2 MiB huge pages / the same at 1 MiB on normal pages (the ring-size goal with `Config::huge_pages`, benches/ipc.rs)"], 0.9)

    def test_ordered_goals_name_the_worse_ordered_kind(self):
        ipc = []
        for rnd in range(2):
            ipc += [throughput("throughput", rnd, 200e6), throughput("throughput", rnd, 300e6, batch=16)]
            ipc += [throughput("throughput", rnd, 120e6, kind="OrderedMpsc"), throughput("throughput", rnd, 90e6, kind="OrderedFanout")]
            ipc += [throughput("throughput", rnd, 280e6, batch=16, kind="OrderedMpsc"), throughput("throughput", rnd, 285e6, batch=16, kind="OrderedFanout")]
        _, _, found = self.compute(ipc=ipc)
        single = found["Ordered 1P1S `offer` delivers at least 0.5× FIFO's (1 MiB)"]
        self.assertEqual((single.which, single.ratio[0], goals.status(single)), ("benches/ipc.rs OrderedFanout / FifoMpsc, 1P1S, 1 MiB", 0.45, "not met"))
        batch = found["Ordered 1P1S `offer_batch(16)` delivers at least 0.9× FIFO's (1 MiB)"]
        self.assertEqual((batch.which, goals.status(batch)), ("benches/ipc.rs OrderedMpsc / FifoMpsc, 1P1S, 1 MiB", "met"))

    def test_size_goal_fails_at_the_size_where_batches_lose(self):
        ipc = []
        for rnd in range(2):
            for size, single, batch in ((64, 50e6, 90e6), (512, 30e6, 15e6), (4096, 5e6, 6e6)):
                ipc += [throughput("size", rnd, single, ring=4 * MIB, size=size), throughput("size", rnd, batch, ring=4 * MIB, size=size, batch=16)]
        _, _, found = self.compute(ipc=ipc)
        g = found["Batches of 16 deliver no fewer messages than single offers at every message size"]
        self.assertEqual((g.which, g.ratio[0], goals.status(g)), ("512 B messages", 0.5, "not met"))

    def test_the_write_floor_is_never_taken_for_a_salias_size_or_kind(self):
        def floor(bench, rnd, per_s, ring, size=64):
            r = throughput(bench, rnd, per_s, ring=ring, size=size, kind="WriteFloor")
            return dict(r, system="write-floor", subscribers=0)

        ipc = []
        for rnd in range(2):
            for size, single, batch, written in ((64, 50e6, 60e6, 400e6), (1024, 29e6, 28e6, 28e6)):
                ipc += [
                    throughput("size", rnd, single, ring=4 * MIB, size=size),
                    throughput("size", rnd, batch, ring=4 * MIB, size=size, batch=16),
                    floor("size", rnd, written, 4 * MIB, size),
                ]
            for ring, single, batch, written in ((MIB, 200e6, 210e6, 450e6), (64 * MIB, 150e6, 140e6, 250e6)):
                ipc += [
                    floor("throughput", rnd, written, ring),
                    throughput("throughput", rnd, single, ring=ring),
                    throughput("throughput", rnd, batch, ring=ring, batch=16),
                ]
        data, picks, found = self.compute(ipc=ipc)
        g = found["Batches of 16 deliver no fewer messages than single offers at every message size"]
        self.assertEqual((g.which, round(g.ratio[0], 3)), ("1024 B messages", round(28 / 29, 3)))
        g = found["At 4 and 64 MiB rings, 1P1S FIFO throughput stays within 0.8× of the 1 MiB figure"]
        self.assertEqual((g.which, round(g.ratio[0], 3)), ("benches/ipc.rs FifoMpsc 1P1S batch 16, 64 MiB", round(140 / 210, 3)))
        heads = {h.what: h.ratio[0] for h in compute.headlines(data, picks)}
        self.assertAlmostEqual(heads["Throughput, FifoMpsc 1P1S batch 16 / write floor of its frames (ring 64 MiB, benches/ipc.rs)"], 140 / 250)
        self.assertAlmostEqual(heads["Throughput, write floor 64 MiB / FifoMpsc 1P1S `offer` 1 MiB (what one writer alone allows the ring-size goal, benches/ipc.rs)"], 250 / 200)
        # The loader accepts the floor's records (the committed data holds them).
        self.assertIn("write-floor", SYSTEMS)

    def test_open_loop_lead_covers_both_modes_and_names_the_worst(self):
        cmp = []
        for rnd in range(2):
            cmp += [openloop("salias", rnd, 1e6, 100), openloop("aeron", rnd, 1e6, 200)]
            cmp += [openloop("salias", rnd, 1e6, 150, realtime=50), openloop("aeron", rnd, 1e6, 120, realtime=50)]
        data, _, found = self.compute(cmp=cmp)
        self.assertEqual(data.ol_modes, ["normal scheduling", "SCHED_FIFO 50"])
        g = found["salias's open-loop total p50 is below Aeron's and iceoryx2's at every load neither saturated at"]
        self.assertEqual(g.which, "salias / aeron at 1 M msg/s, SCHED_FIFO 50")
        self.assertEqual(goals.status(g), "not met")

    def test_a_round_in_which_either_side_saturated_is_left_out_of_the_open_loop_ratio(self):
        cmp = []
        for rnd in range(3):
            cmp += [openloop("salias", rnd, 1e6, 100), openloop("aeron", rnd, 1e6, 200)]
        # Round 2: salias fell behind the plan; its backlog is not a latency.
        cmp[4] = dict(cmp[4], saturated=True, total_ns={"p50": 10**9, "p99": 10**10})
        _, _, found = self.compute(cmp=cmp)
        g = found["salias's open-loop total p50 is below Aeron's and iceoryx2's at every load neither saturated at"]
        self.assertEqual((g.ratio[0], g.ratio[1], g.ratio[2], g.ratio[3]), (0.5, 0.5, 0.5, 2))

    def test_oversubscribed_runs_make_no_headline(self):
        ipc = []
        for rnd in range(2):
            for kind, per_s in (("OrderedMpsc", 3e6), ("FifoMpsc", 4e6)):
                r = dict(throughput("throughput", rnd, per_s, batch=16, kind=kind), publishers=2)
                ipc.append(dict(r, oversubscribed=True))
        data, picks, _ = self.compute(ipc=ipc)
        heads = [h.what for h in compute.headlines(data, picks)]
        self.assertFalse([h for h in heads if "2P1S" in h], heads)
        # The same runs, not oversubscribed, make one.
        for r in ipc:
            r["oversubscribed"] = False
        data, picks, _ = self.compute(ipc=ipc)
        self.assertTrue([h for h in compute.headlines(data, picks) if "2P1S" in h.what])

    def test_batch_below_single_offer_is_not_met(self):
        cmp = []
        for rnd in range(3):
            cmp += [cmp_run("salias", "offer", 1, rnd, 147e6), cmp_run("salias", "offer_batch", 16, rnd, 135e6), cmp_run("spsc-floor", "batch", 16, rnd, 240e6)]
        _, _, found = self.compute(cmp=cmp)
        never_below = found["offer_batch(16) never delivers less than single offer (1P1S)"]
        self.assertAlmostEqual(never_below.ratio[0], 135 / 147)
        self.assertEqual(goals.status(never_below), "not met")
        self.assertEqual(goals.status(found["offer_batch(16) delivers at least 0.8× the batched SPSC floor (1P1S)"]), "not met")
        self.assertEqual(goals.status(found["Single offer delivers at least 0.7× the batched SPSC floor (1P1S)"]), "not met")

    def test_the_floor_in_frame_sized_slots_is_a_headline_beside_the_floor(self):
        cmp = []
        for rnd in range(3):
            cmp += [cmp_run("salias", "offer", 1, rnd, 160e6), cmp_run("spsc-floor", "batch", 16, rnd, 220e6), cmp_run("spsc-floor", "frame_batch", 16, rnd, 190e6)]
        data, picks, _ = self.compute(cmp=cmp)
        heads = {h.what: h.ratio for h in compute.headlines(data, picks)}
        frame = "SPSC floor in slots of salias's frame bytes"
        self.assertAlmostEqual(heads[f"Throughput, salias `offer` / {frame} (1P1S)"][0], 160 / 190)
        self.assertAlmostEqual(heads[f"Throughput, {frame} / SPSC floor (1P1S; what the frame header costs the machine)"][0], 190 / 220)
        # The goals keep the floor of bare messages.
        self.assertEqual(picks.spsc.api, "batch")

    def test_a_realtime_field_that_is_not_a_policy_is_refused(self):
        q = {p: 1 for p in ("p50", "p90", "p99", "p99.9", "p99.99", "max", "count")}
        rec = {"bench": "openloop", "system": "salias", "round": 0, "offered_per_s": 1e6, "achieved_per_s": 1e6, "duration_s": 1.0, "warmup_s": 0.2}
        rec.update(refused_fraction=0.0, late_fraction=0.0, saturated=False, placement="P0@0 S0@1", queueing_ns=q, service_ns=q, total_ns=q)
        self.assertIsNone(contract_problem(dict(rec, realtime={"policy": "SCHED_FIFO", "priority": 50})))
        self.assertIn("'realtime'", contract_problem(dict(rec, realtime=50)))

    def test_records_of_a_pausing_subscriber_are_refused(self):
        rec = {"bench": "throughput", "system": "salias", "round": 0, "label": "x", "kind": "FifoMpsc", "publishers": 1, "subscribers": 1}
        rec.update(ring_bytes=1 << 20, buffer_messages=None, api="offer", batch=1, message_bytes=64, messages_per_publisher=10)
        rec.update(published_per_s=1e6, delivered_per_s=1e6, delivered_bytes_per_s=None, refused_fraction=0.0, placement="P0@0 S0@1", busy_processes=2, oversubscribed=False)
        self.assertIsNone(contract_problem(dict(rec, receive="drain")))
        self.assertIsNone(contract_problem(dict(rec, subscriber_pauses=0)))
        self.assertIsNone(contract_problem(dict(rec, huge_page_bytes=2 << 20)))
        self.assertIn("'huge_page_bytes'", contract_problem(dict(rec, huge_page_bytes="2M")))
        self.assertIn("only salias throughput", contract_problem(dict(rec, system="aeron", huge_page_bytes=2 << 20)))
        self.assertIn("--only receive", contract_problem(dict(rec, receive="batching")))
        self.assertIn("--subscriber-pauses", contract_problem(dict(rec, subscriber_pauses=64)))

    def test_strict_lead_at_parity_is_not_met(self):
        g = goals.Goal("lead", 1.0, True, True, (1.0, 1.0, 1.0, 3), "x")
        self.assertEqual(goals.status(g), "not met")
        self.assertEqual(goals.status(g._replace(strict=False)), "met")
        self.assertEqual(goals.target_text(g), "> 1×")


def probed(record, before, after=None):
    return dict(record, state={"before_ns": before, "after_ns": after if after is not None else before})


class SpeedStates(unittest.TestCase):
    def compute(self, cmp):
        sources = {"comparison": [source("c.jsonl", cmp)], "ipc": [], "wake": []}
        data = compute.Data(sources)
        return data, by_what(goals.goals(data, compute.Picks(data)))

    def test_probes_fall_into_levels_and_a_run_between_two_changed_state(self):
        self.assertEqual(compute.speed_levels([64, 40, 170, 42, 66, 180]), [[40, 42], [64, 66], [170, 180]])
        # A lone probe between two levels, caught mid-change, is no state of its own.
        many = [40] * 300 + [65] * 300 + [94] + [170] * 300
        self.assertEqual([level[0] for level in compute.speed_levels(many)], [40, 65, 170])
        cmp = [probed(pingpong("floor", 0, 50), 40), probed(pingpong("floor", 1, 60), 41, 66), probed(pingpong("floor", 2, 60), 66)]
        data, _ = self.compute(cmp)
        self.assertEqual([compute.level_name(level) for level in data.levels], ["line 40 ns", "line 66 ns"])
        self.assertEqual([r["_state"] for r in cmp], ["line 40 ns", compute.CHANGED, "line 66 ns"])

    def test_a_goal_is_met_only_in_every_state_and_names_the_worst(self):
        # Fast rounds 0-1 meet 1.2x of the message floor, slow rounds 2-3 do not; round 4's
        # salias run changed state and pairs with nothing; round 5's two runs ran in
        # different states and pair with nothing either.
        cmp = []
        for rnd in range(2):
            cmp += [probed(pingpong("salias", rnd, 55), 40), probed(pingpong("message-floor", rnd, 50), 41)]
        for rnd in range(2, 4):
            cmp += [probed(pingpong("salias", rnd, 260), 170), probed(pingpong("message-floor", rnd, 200), 175)]
        cmp += [probed(pingpong("salias", 4, 900), 40, 170), probed(pingpong("message-floor", 4, 50), 40)]
        cmp += [probed(pingpong("salias", 5, 900), 170), probed(pingpong("message-floor", 5, 50), 40)]
        data, found = self.compute(cmp)
        g = found["Ping-pong one-way p50 within 1.2× of the 64-byte message floor"]
        self.assertEqual(g.state, "line 170 ns")
        self.assertEqual((g.ratio[0], g.ratio[3]), (1.3, 2))
        self.assertEqual(goals.status(g), "not met")
        self.assertEqual([(state, r[0], r[3]) for state, r in g.states], [("line 40 ns", 1.1, 2), ("line 170 ns", 1.3, 2)])
        heads = {h.what: h for h in compute.headlines(data, compute.Picks(data))}
        h = heads["Ping-pong one-way p50, salias / 64-byte message floor (comparison)"]
        self.assertEqual((h.state, h.a[0], h.b[0]), ("line 170 ns", 260, 200), "the worst state's medians")
        text = render.fmt_states(h.states)
        self.assertEqual(text, "line 40 ns 1.10× (2); line 170 ns 1.30× (2)")

    def test_a_probe_that_is_not_two_figures_is_refused(self):
        record = dict(pingpong("floor", 0, 50), system="floor", bench="pingpong")
        self.assertIsNone(contract_problem(probed(record, 40.5, 41)))
        self.assertIn("speed-state probe", contract_problem(dict(record, state={"before_ns": 40})))
        self.assertIn("speed-state probe", contract_problem(dict(record, state={"before_ns": 0, "after_ns": 40})))

    def test_throughput_takes_the_slowest_state_as_worst(self):
        def tp(system, rnd, per_s, api="offer", batch=1):
            return dict(throughput("throughput", rnd, per_s, batch=batch), system=system, api=api, ring_bytes=MIB, buffer_messages=None)

        cmp = [probed(tp("salias", 0, 300e6), 40), probed(tp("aeron", 0, 100e6, "try_claim"), 40)]
        cmp += [probed(tp("salias", 1, 30e6), 170), probed(tp("aeron", 1, 20e6, "try_claim"), 170)]
        _, found = self.compute(cmp)
        g = found["salias delivers more than Aeron and iceoryx2 (1P1S)"]
        self.assertEqual((g.state, g.ratio[0]), ("line 170 ns", 1.5))
        self.assertEqual(goals.status(g), "met")


class SameBuffer(unittest.TestCase):
    def test_salias_at_aerons_term_size_has_a_headline_of_its_own(self):
        def tp(system, rnd, per_s, ring, api="offer"):
            return dict(throughput("throughput", rnd, per_s), system=system, api=api, ring_bytes=ring, buffer_messages=None)

        cmp = []
        for rnd in range(2):
            cmp += [tp("salias", rnd, 10e6, MIB), tp("salias", rnd, 90e6, 64 * MIB), tp("aeron", rnd, 30e6, 64 * MIB, "try_claim")]
        sources = {"comparison": [source("c.jsonl", cmp)], "ipc": [], "wake": []}
        data = compute.Data(sources)
        heads = {h.what: h.ratio[0] for h in compute.headlines(data, compute.Picks(data))}
        self.assertAlmostEqual(heads["Throughput, salias `offer` / Aeron `try_claim` (1P1S, 64 B)"], 1 / 3)
        self.assertAlmostEqual(heads["Throughput, salias `offer` / Aeron `try_claim`, both buffers 64 MiB (1P1S)"], 3.0)


class LatencyRows(unittest.TestCase):
    def test_message_floor_column_only_where_it_ran(self):
        with_msg = compute.Data({"comparison": [], "ipc": [source("i", [pingpong("salias", 0, 120), pingpong("floor", 0, 60), pingpong("message-floor", 0, 100)])], "wake": []})
        text = pp_table(with_msg.ipc_pp)
        self.assertIn("÷ message floor", text)
        self.assertIn("**1.20×** [1.20, 1.20]", text)
        self.assertIn("**2.00×** [2.00, 2.00]", text)
        without = compute.Data({"comparison": [], "ipc": [source("i", [pingpong("salias", 0, 120), pingpong("floor", 0, 60)])], "wake": []})
        self.assertNotIn("message floor", pp_table(without.ipc_pp))

    def test_ring_floor_column_and_headline_where_it_ran(self):
        recs = [pingpong("salias", 0, 120), pingpong("floor", 0, 60), pingpong("message-floor", 0, 100), pingpong("ring-floor", 0, 110)]
        data = compute.Data({"comparison": [], "ipc": [source("i", recs)], "wake": []})
        rows = {line.split("|")[1].strip(): line for line in pp_table(data.ipc_pp).splitlines() if line.startswith("| ")}
        self.assertIn("÷ ring floor", rows["system"])
        # salias against all three floors; the ring floor against the two below it; the
        # message floor against the line floor only.
        self.assertEqual(rows["salias"].count("**"), 6)
        self.assertIn("**1.09×**", rows["salias"])
        self.assertIn("**1.10×**", rows["ring-floor"])
        self.assertEqual(rows["ring-floor"].count("**"), 4)
        self.assertEqual(rows["message-floor"].count("**"), 2)
        heads = {h.what: h.ratio[0] for h in compute.headlines(data, compute.Picks(data))}
        self.assertAlmostEqual(heads["Ping-pong one-way p50, salias / ring floor of salias's frames (benches/ipc.rs)"], 120 / 110)

    def test_coarse_clock_step_is_noted_on_the_headline(self):
        recs = [pingpong("salias", 0, 90), pingpong("floor", 0, 60), pingpong("message-floor", 0, 80)]
        data = compute.Data({"comparison": [source("c", recs, {"latency_clock": CLOCK})], "ipc": [], "wake": []})
        heads = compute.headlines(data, compute.Picks(data))
        details = {h.what: render.headline_detail(h) for h in heads}
        self.assertIn("stepped in 10.0 ns", details["Ping-pong one-way p50, salias / cache-line floor (comparison)"])
        fine = dict(CLOCK, smallest_step_ns=1.0)
        data = compute.Data({"comparison": [source("c", recs, {"latency_clock": fine})], "ipc": [], "wake": []})
        self.assertFalse(any("stepped" in render.headline_detail(h) for h in compute.headlines(data, compute.Picks(data))))

    def test_clock_row_reports_source_frequency_and_refusal(self):
        row = render.clock_row(source("/x/c.jsonl", [], {"latency_clock": CLOCK}))
        self.assertEqual(row, ("`c.jsonl`", "TSC (`lfence; rdtsc`)", "2.5000 GHz", "0.4000", "10.0 ns (monotonic: 20 ns)", "–"))
        refused = {"source": "CLOCK_MONOTONIC", "counter": None, "smallest_step_ns": 20.0, "monotonic_step_ns": 20, "refused": "no constant_tsc in /proc/cpuinfo"}
        row = render.clock_row(source("/x/c.jsonl", [], {"latency_clock": refused}))
        self.assertEqual(row[1], "monotonic (`CLOCK_MONOTONIC`)")
        self.assertEqual(row[5], "no constant_tsc in /proc/cpuinfo")


if __name__ == "__main__":
    unittest.main()

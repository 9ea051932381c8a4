"""The latency sections: ping-pong next to the cache-line and 64-byte message floors (both
harnesses) and the ring floor (benches/ipc.rs), and open-loop latency against offered load per scheduling mode (comparison
crate)."""

import math

from . import svg
from .compute import NORMAL, OpenLoopKey, batched_p50, p50, trips_per_sample
from .load import PCTS
from .page import fmt, fmt_mmm, fmt_ns, fmt_ratio, md_table

# benches/ipc.rs's bars in the floor chart: lighter shades of the comparison's colours.
IPC_SHADES = {"floor": "#a9a9a9", "message-floor": "#c7b37a", "ring-floor": "#a8c47a", "salias": "#7fa7e6"}
# The floors, lowest first, and the ratio column each has in a harness that ran it.
FLOORS = ["floor", "message-floor", "ring-floor"]
FLOOR_COLUMNS = {"message-floor": "÷ message floor", "ring-floor": "÷ ring floor"}
PP_HEADER = ["system", "p50 [min, max]", "p90", "p99", "p99.9", "p99.99", "max", "samples/round", "÷ line floor"]


def pct_pos(p):
    """x position of a percentile on the usual HdrHistogram scale: -log10(1 - p)."""
    return -math.log10(1 - p / 100.0)


def one_way(p):
    return lambda r: r["one_way_ns"][p]


def pp_table(runs):
    """The ping-pong table of one harness: a "÷ message floor" and a "÷ ring floor" column
    only where that floor ran. Ratios are per round (p50 / the floor's p50 of the same
    round)."""
    shown = ["floor"] + [f for f in FLOOR_COLUMNS if f in runs.by_key]
    trips = trips_per_sample(runs)
    header = PP_HEADER[:2] + ([f"p50 of {trips}-trip samples [min, max]"] if trips else []) + PP_HEADER[2:]
    header += [FLOOR_COLUMNS[f] for f in shown[1:]] + ["cores"]
    rows = []
    for system in runs.order:
        st = {p: runs.stat(system, one_way(p)) for p in PCTS}
        ratios = []
        for floor in shown:
            # A floor's own row shows it against the floors below it only.
            below = system not in FLOORS or FLOORS.index(system) > FLOORS.index(floor)
            ratio = runs.ratio(system, floor, p50) if below else None
            ratios.append(fmt_ratio(ratio) if ratio else "–")
        rows.append(
            (
                system,
                fmt_mmm(st["p50"], 0),
                *([fmt_mmm(runs.stat(system, batched_p50), 1)] if trips else []),
                *(fmt_ns(st[p][0]) for p in ("p90", "p99", "p99.9", "p99.99", "max")),
                fmt_ns(st["count"][0]),
                *ratios,
                f"{runs.first(system)['cores']}",
            )
        )
    return md_table(header, rows, ["l"] + ["r"] * (len(header) - 2) + ["l"])


def pingpong(page, data):
    cmp_pp, ipc_pp = data.cmp_pp, data.ipc_pp
    if not (cmp_pp.order or ipc_pp.order):
        return
    page.add("## Ping-pong latency next to the hardware floors", "")
    page.add(
        "One way = round trip / 2, ns; p50 is the median over rounds [min, max], the other "
        "percentiles are medians over rounds. The line floor (`floor`) is a bare cache-line "
        "ping-pong between the same two cores in the same invocation; the message floor "
        "(`message-floor`, where it ran) is the least any protocol can do for a 64-byte payload: "
        "a line each way, no other state; both floors go round 64 lines on 16 pages "
        "(doc/benchmarking.md, \"The floors\"). The ring floor (`ring-floor`, "
        "benches/ipc.rs) moves the same message through a ring of frames laid out as salias's "
        "(80-byte frames back to back in a 1 MiB ring, each message on lines the other core read "
        "a lap ago), with salias's prefetches and nothing else: the least a transport with "
        "salias's frame can do. The ÷ columns are per-round "
        "ratios of p50 to the floor of the same round, median [min, max]. Where the harness also "
        "timed samples of consecutive round trips, their one-way p50 (the median of the samples' "
        "mean, precise far below the clock's step) stands beside the per-trip p50; the headline "
        "ratios give both.",
        "",
    )
    for title, runs in (("Comparison crate:", cmp_pp), ("benches/ipc.rs:", ipc_pp)):
        if runs.order:
            page.add(title, "", pp_table(runs), "")
    pct_axis = [50, 90, 99, 99.9, 99.99]
    series = []
    dashes = {"comparison": None, "ipc": "6 3"}
    for origin, runs in (("comparison", cmp_pp), ("ipc", ipc_pp)):
        for system in runs.order:
            pts = []
            for p in pct_axis:
                st = runs.stat(system, one_way(f"p{p:g}"))
                if st:
                    pts.append((pct_pos(p), st[0]))
            suffix = "" if origin == "comparison" else " (benches/ipc.rs)"
            series.append({"name": system + suffix, "color": svg.color_for(system), "dash": dashes[origin], "points": pts})
    if svg.line_chart(
        page.plot_path("latency-percentiles.svg"),
        "Ping-pong one-way latency by percentile (medians over rounds)",
        "percentile",
        "one-way latency, ns (log)",
        series,
        ylog=True,
        xticks=[(pct_pos(p), f"p{p:g}") for p in pct_axis],
    ):
        page.plot_ref("latency-percentiles.svg", "latency percentile curves")
    # salias vs floor: grouped bars per percentile, from each harness.
    vals = {}
    for origin, runs in (("comparison", cmp_pp), ("benches/ipc.rs", ipc_pp)):
        for system in (*FLOORS, "salias"):
            if system not in runs.by_key:
                continue
            name = f"{system} ({origin})"
            vals[name] = {}
            for p in ("p50", "p90", "p99"):
                st = runs.stat(system, one_way(p))
                vals[name][p] = (st[0], st[1], st[2])
    series = []
    for name in vals:
        system = name.split(" ")[0]
        color = svg.color_for(name) if "comparison" in name else IPC_SHADES[system]
        series.append({"name": name, "color": color, "values": vals[name]})
    if svg.hbar_chart(
        page.plot_path("salias-vs-floor.svg"),
        "salias vs the hardware floors, one-way ns (median over rounds, whiskers min–max)",
        "one-way latency, ns",
        ["p50", "p90", "p99"],
        series,
    ):
        page.plot_ref("salias-vs-floor.svg", "salias vs floor")


def mode_slug(mode):
    """A plot's name part for a mode: `sched-fifo-50`."""
    return "-".join(mode.lower().replace("_", "-").split())


def openloop(page, data):
    runs = data.cmp_ol
    if not runs.order:
        return
    first = runs.first(runs.order[0])
    page.add("## Open-loop latency vs offered load (comparison crate)", "")
    page.add(
        f"1 publisher, 1 subscriber (placement {first['placement']}), 64-byte messages sent at "
        "planned times t0 + i·Δ (never skipped or rebased when late), recorded per level after "
        "unrecorded warm-up (the lengths are given with each mode). Queueing = "
        "sent − planned, service = received − sent, total = received − planned (HdrHistogram, 3 "
        "significant digits). Percentiles are medians over rounds; *sat.* counts rounds in which the "
        "system could not keep to the plan (it ended > 10 % late, or queueing p50 > 100 µs); a system "
        "saturated in most rounds of a level is not run at higher levels. Refused = refused attempts "
        "/ attempts.",
        "",
    )
    realtime = [m for m in data.ol_modes if m != NORMAL]
    if realtime:
        page.add(
            f"Two modes, each in its own table: {NORMAL} (the publisher and subscriber under the ordinary "
            f"scheduler) and {', '.join(realtime)} (both under that real-time policy and priority, "
            "`--realtime`). The real-time mode is meant to keep other threads from preempting the "
            "publisher or subscriber, which is what dominates p99 and p99.9 at low load; whether it does "
            "on this machine shows in the two tables (a real-time spinner can also be throttled by the "
            "kernel, or starve a peer's helper threads).",
            "",
        )
    for mode in data.ol_modes:
        openloop_mode(page, data, mode, len(data.ol_modes) > 1 or bool(realtime))


def openloop_mode(page, data, mode, titled):
    """The table, plot and percentile details of one scheduling mode."""
    runs, loads, systems = data.cmp_ol, data.loads, data.ol_systems
    if titled:
        page.add(f"### {mode}", "")
    in_mode = [k for k in data.cmp_ol.order if k.mode == mode]
    if in_mode:
        first = data.cmp_ol.first(in_mode[0])
        page.add(f"Each level: {first['duration_s']} s recorded after {first['warmup_s']} s of warm-up.", "")
    present = [(load, system, OpenLoopKey(system, load, mode)) for load in loads for system in systems if OpenLoopKey(system, load, mode) in runs.by_key]

    def hist(key, part, p):
        return runs.stat(key, lambda r: r[f"{part}_ns"][p])

    rows = []
    for load, system, key in present:
        ach = runs.stat(key, lambda r: r["achieved_per_s"])
        rf = runs.stat(key, lambda r: r["refused_fraction"])
        sat = sum(1 for _, _, r in runs.get(key) if r["saturated"])
        rows.append(
            (
                f"{load / 1e6:g}",
                system,
                fmt(ach[0] / 1e6, 2),
                fmt_mmm(hist(key, "total", "p50"), 0),
                fmt_ns(hist(key, "total", "p99")[0]),
                fmt_ns(hist(key, "total", "p99.9")[0]),
                fmt_ns(hist(key, "total", "max")[0]),
                fmt_ns(hist(key, "queueing", "p99")[0]),
                fmt_ns(hist(key, "service", "p99")[0]),
                fmt(rf[0] * 100, 2),
                f"{sat}/{len(runs.get(key))}",
            )
        )
    header = ["offered M msg/s", "system", "sent M msg/s", "total p50 [min, max]", "total p99", "total p99.9", "total max", "queueing p99", "service p99", "refused %", "sat."]
    page.add(md_table(header, rows, ["r", "l"] + ["r"] * 9), "")
    series = []
    for system in systems:
        for pct, dash in (("p50", None), ("p99", "7 4"), ("p99.9", "2 3")):
            pts = []
            for load in loads:
                st = hist(OpenLoopKey(system, load, mode), "total", pct)
                if st:
                    pts.append((load / 1e6, st[0]))
            if pts:
                series.append({"name": f"{system} {pct}", "color": svg.color_for(system), "dash": dash, "points": pts})
    name = "openloop-total-vs-load.svg" if mode == NORMAL else f"openloop-total-vs-load-{mode_slug(mode)}.svg"
    if svg.line_chart(
        page.plot_path(name),
        f"Open loop ({mode}): total latency (received − planned) vs offered load",
        "offered load, M msg/s (log)",
        "total latency, ns (log; medians over rounds)",
        series,
        xlog=True,
        ylog=True,
        note="solid p50, dashed p99, dotted p99.9; the last point of a system is the level where it saturated or the sweep ended",
    ):
        page.plot_ref(name, f"open-loop total latency vs load, {mode}")
    # Details: every percentile of the three histograms.
    page.add(f"<details><summary>All open-loop percentiles, {mode} (ns, medians over rounds)</summary>", "")
    rows = []
    for load, system, key in present:
        for part in ("queueing", "service", "total"):
            rows.append((f"{load / 1e6:g}", system, part, *(fmt_ns(hist(key, part, p)[0]) for p in PCTS)))
    page.add(md_table(["offered M msg/s", "system", "time", *PCTS], rows, ["r", "l", "l"] + ["r"] * 7), "", "</details>", "")

"""The latency sections: ping-pong next to the cache-line floor (both harnesses), and
open-loop latency against offered load (comparison crate)."""

import math

from . import svg
from .compute import OpenLoopKey, p50
from .load import PCTS
from .page import fmt, fmt_mmm, fmt_ns, fmt_ratio, md_table

PP_HEADER = ["system", "p50 [min, max]", "p90", "p99", "p99.9", "p99.99", "max", "samples/round", "p50 / floor", "cores"]


def pct_pos(p):
    """x position of a percentile on the usual HdrHistogram scale: -log10(1 - p)."""
    return -math.log10(1 - p / 100.0)


def one_way(p):
    return lambda r: r["one_way_ns"][p]


def pp_rows(runs, floor_key="floor"):
    rows = []
    for system in runs.order:
        st = {p: runs.stat(system, one_way(p)) for p in PCTS}
        ratio = runs.ratio(system, floor_key, p50) if system != floor_key else None
        rows.append(
            (
                system,
                fmt_mmm(st["p50"], 0),
                *(fmt_ns(st[p][0]) for p in ("p90", "p99", "p99.9", "p99.99", "max")),
                fmt_ns(st["count"][0]),
                fmt_ratio(ratio) if ratio else "–",
                f"{runs.first(system)['cores']}",
            )
        )
    return rows


def pingpong(page, data):
    cmp_pp, ipc_pp = data.cmp_pp, data.ipc_pp
    if not (cmp_pp.order or ipc_pp.order):
        return
    page.add("## Ping-pong latency next to the cache-line floor", "")
    page.add(
        "One way = round trip / 2, ns; p50 is the median over rounds [min, max], the other "
        "percentiles are medians over rounds. The floor is a bare cache-line ping-pong between "
        "the same two cores in the same invocation.",
        "",
    )
    for title, runs in (("Comparison crate:", cmp_pp), ("benches/ipc.rs:", ipc_pp)):
        if runs.order:
            page.add(title, "", md_table(PP_HEADER, pp_rows(runs), ["l"] + ["r"] * 8 + ["l"]), "")
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
        for system in ("floor", "salias"):
            if system not in runs.by_key:
                continue
            name = f"{system} ({origin})"
            vals[name] = {}
            for p in ("p50", "p90", "p99"):
                st = runs.stat(system, one_way(p))
                vals[name][p] = (st[0], st[1], st[2])
    series = []
    for name in vals:
        color = svg.color_for(name) if "comparison" in name else ("#a9a9a9" if name.startswith("floor") else "#7fa7e6")
        series.append({"name": name, "color": color, "values": vals[name]})
    if svg.hbar_chart(
        page.plot_path("salias-vs-floor.svg"),
        "salias vs the cache-line floor, one-way ns (median over rounds, whiskers min–max)",
        "one-way latency, ns",
        ["p50", "p90", "p99"],
        series,
    ):
        page.plot_ref("salias-vs-floor.svg", "salias vs floor")


def openloop(page, data):
    runs = data.cmp_ol
    if not runs.order:
        return
    loads, systems = data.loads, data.ol_systems
    first = runs.first(runs.order[0])
    page.add("## Open-loop latency vs offered load (comparison crate)", "")
    page.add(
        f"1 publisher, 1 subscriber (placement {first['placement']}), 64-byte messages sent at "
        f"planned times t0 + i·Δ (never skipped or rebased when late), {first['duration_s']} s "
        f"recorded per level after {first['warmup_s']} s of unrecorded warm-up. Queueing = "
        "sent − planned, service = received − sent, total = received − planned (HdrHistogram, 3 "
        "significant digits). Percentiles are medians over rounds; *sat.* counts rounds in which the "
        "system could not keep to the plan (it ended > 10 % late, or queueing p50 > 100 µs); a system "
        "saturated in most rounds of a level is not run at higher levels. Refused = refused attempts "
        "/ attempts.",
        "",
    )
    present = [(load, system, OpenLoopKey(system, load)) for load in loads for system in systems if OpenLoopKey(system, load) in runs.by_key]

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
                st = hist(OpenLoopKey(system, load), "total", pct)
                if st:
                    pts.append((load / 1e6, st[0]))
            series.append({"name": f"{system} {pct}", "color": svg.color_for(system), "dash": dash, "points": pts})
    if svg.line_chart(
        page.plot_path("openloop-total-vs-load.svg"),
        "Open loop: total latency (received − planned) vs offered load",
        "offered load, M msg/s (log)",
        "total latency, ns (log; medians over rounds)",
        series,
        xlog=True,
        ylog=True,
        note="solid p50, dashed p99, dotted p99.9; the last point of a system is the level where it saturated or the sweep ended",
    ):
        page.plot_ref("openloop-total-vs-load.svg", "open-loop total latency vs load")
    # Details: every percentile of the three histograms.
    page.add("<details><summary>All open-loop percentiles (ns, medians over rounds)</summary>", "")
    rows = []
    for load, system, key in present:
        for part in ("queueing", "service", "total"):
            rows.append((f"{load / 1e6:g}", system, part, *(fmt_ns(hist(key, part, p)[0]) for p in PCTS)))
    page.add(md_table(["offered M msg/s", "system", "time", *PCTS], rows, ["r", "l", "l"] + ["r"] * 7), "", "</details>", "")

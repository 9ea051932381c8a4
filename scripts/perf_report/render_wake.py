"""The wake-up latency section: one table per wake file (benches/wake, the comparison's
`--only wake`), each mechanism against the harness's reference row."""

import os

from .compute import Runs
from .load import wake_harness
from .page import fmt, fmt_mmm, fmt_ns, fmt_ratio, md_table

MECHANISMS = {
    "recv-adaptive": "`recv` (Adaptive: spin, yield, then futex)",
    "recv-park": "`recv`, parking in the futex at once",
    "watcher-eventfd": "watcher thread → eventfd in epoll",
    "fifo": "publisher writes a named FIFO in epoll",
    "fd-epoll": "the Subscriber's descriptor in epoll",
    "recv-async": "`recv_async` (tokio, current thread)",
    "event-listener": "event service `blocking_wait`",
}
# The row every other is divided by: the futex park in benches/wake, salias's `recv`
# in the comparison.
REFERENCE = {"benches/wake": ("salias", "recv-park"), "comparison": ("salias", "recv-adaptive")}


def wake_p(p):
    return lambda r: r["wake_ns"][p]


def wake(page, manifest, sources):
    if not sources:
        return
    page.add("## Wake-up latency", "")
    page.add(
        "A receiver asleep in its wait, messages a few milliseconds apart: latency from just before "
        "the publisher's commit to the woken receiver's first instruction, ns (p50 median over rounds "
        "[min, max], the other percentiles medians over rounds). The ratio is per round, p50 over the "
        "reference row's p50 of the same round. Idle CPU is the waiting side's CPU time per second of "
        "idling (utime + stime, at clock-tick resolution) and its scheduler run time per second.",
        "",
    )
    if "wake" not in manifest:
        page.add("The manifest names no wake file: these are the newest of each harness in the data directory.", "")
    for source in sources:
        harness = wake_harness(source)
        ref = REFERENCE[harness]
        runs = Runs()
        for r in source.records:
            runs.add((r["system"], r["mechanism"]), source, r)
        rows = []
        for key in runs.order:
            system, mechanism = key
            rec = runs.first(key)
            name = f"{system}: {MECHANISMS.get(mechanism, mechanism)}" + (" (prototype)" if rec["prototype"] else "")
            ratio = runs.ratio(key, ref, wake_p("p50")) if key != ref else None
            cpu = runs.stat(key, lambda r: r["idle_cpu_s_per_s"])
            runtime = runs.stat(key, lambda r: r["idle_runtime_s_per_s"])
            rows.append(
                (
                    name,
                    fmt_mmm(runs.stat(key, wake_p("p50")), 0),
                    *(fmt_ns(runs.stat(key, wake_p(p))[0]) for p in ("p99", "p99.9")),
                    fmt_ratio(ratio) if ratio else ("reference" if key == ref else "–"),
                    f"{fmt(cpu[0] * 100, 3)} %",
                    f"{fmt(runtime[0] * 1e6, 0)} µs/s",
                    rec["placement"],
                )
            )
        ref_name = f"{ref[0]}: {MECHANISMS.get(ref[1], ref[1])}"
        page.add(f"`{os.path.basename(source.path)}` ({harness}, {source.header.get('rounds', '?')} rounds):", "")
        header = ["mechanism", "p50 [min, max]", "p99", "p99.9", f"p50 ÷ {ref_name}", "idle CPU", "idle run time", "placement"]
        page.add(md_table(header, rows, ["l", "r", "r", "r", "r", "r", "r", "l"]), "")

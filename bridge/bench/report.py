#!/usr/bin/env python3
"""Writes bench/report.md from the raw results of `cargo bench --bench bridge`.

usage: python3 bench/report.py bench/results/<unix time>.jsonl [> bench/report.md]

Medians over rounds, with [min, max]; ratios are bridge / zenoh alone, taken round by
round (both ran in the same round, one after the other) and then summarised.
"""
import json
import statistics
import sys


def summary(values):
    return statistics.median(values), min(values), max(values)


def fmt_range(values, scale=1.0, digits=0):
    med, lo, hi = summary([v * scale for v in values])
    return f"{med:,.{digits}f} [{lo:,.{digits}f}, {hi:,.{digits}f}]"


def main(path):
    lines = [json.loads(line) for line in open(path)]
    header, runs = lines[0], lines[1:]
    m, c, f = header["machine"], header["clock"], header["floors"]
    out = []
    out.append(f"Raw data: `{path.split('bridge/')[-1]}`; command: `{header['command']}`.\n")
    out.append(
        f"Machine: {m['cpu']}, {m['cores']} cores, kernel {m['kernel']}; load average at start "
        f"{m['loadavg_at_start'].split()[:3]} (the machine is shared). Clock: {c['clock']}, "
        f"resolution {c['getres_ns']} ns, smallest observed step {c['smallest_step_ns']} ns. "
        f"zenoh {header['versions']['zenoh']}.\n"
    )
    p = header["placement"]
    out.append(
        f"Placement: source and `out` on core {p['source']}, `in` and sink on core {p['sink']}; "
        f"zenoh alone: publisher core {p['zenoh_publisher']}, subscriber core {p['zenoh_subscriber']}. "
        f"**Oversubscribed**: {p['note']}.\n"
    )
    out.append(
        f"Floors (same run): cache-line one-way between cores 0 and 1, p50 {f['cache_line_one_way_ns_p50']} ns; "
        f"64-byte TCP one-way over 127.0.0.1 (round trip / 2), p50 {f['tcp_loopback_64b_one_way_ns_p50']:,} ns.\n"
    )
    cfg = header["config"]
    out.append(
        f"Config: {cfg['rounds']} rounds, {cfg['message_bytes']}-byte messages, {cfg['messages']:,} per throughput run, "
        f"open loop {cfg['latency_secs']} s per load; bridge: {cfg['bridge']}, batch {cfg['batch']}, linger "
        f"{cfg['linger_us']} µs; zenoh alone: {cfg['zenoh_alone']}.\n"
    )

    def select(bench, system, rate=None):
        rows = [r for r in runs if r["bench"] == bench and r["system"] == system]
        if rate is not None:
            rows = [r for r in rows if r["offered_rate"] == rate]
        return sorted(rows, key=lambda r: r["round"])

    out.append("\n### Throughput (flood)\n")
    out.append("| system | msg/s | MB/s | offers refused |")
    out.append("|---|---|---|---|")
    for system in ["bridge", "zenoh", "salias"]:
        rows = select("throughput", system)
        if not rows:
            continue
        out.append(
            f"| {system} | {fmt_range([r['delivered_per_s'] for r in rows])} | "
            f"{fmt_range([r['bytes_per_s'] for r in rows], 1e-6, 1)} | "
            f"{fmt_range([r['refused_fraction'] for r in rows], 100, 2)} % |"
        )
    bridge, zenoh = select("throughput", "bridge"), select("throughput", "zenoh")
    ratios = [b["delivered_per_s"] / z["delivered_per_s"] for b, z in zip(bridge, zenoh)]
    out.append(f"\nbridge / zenoh alone, msg/s: **{fmt_range(ratios, 1, 2)}×**\n")

    out.append("\n### Open-loop latency (planned send time to receipt on the far channel), ns\n")
    out.append("| load msg/s | system | total p50 | p90 | p99 | p99.9 | max | service p50 | queueing p50 | count |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    rates = sorted({r["offered_rate"] for r in runs if r["bench"] == "openloop"})
    ratio_lines = []
    for rate in rates:
        for system in ["bridge", "zenoh", "salias"]:
            rows = select("openloop", system, rate)
            col = lambda kind, q: fmt_range([r[kind][q] for r in rows])  # noqa: E731
            out.append(
                f"| {rate:,} | {system} | {col('total_ns', 'p50')} | {col('total_ns', 'p90')} | "
                f"{col('total_ns', 'p99')} | {col('total_ns', 'p99.9')} | {col('total_ns', 'max')} | "
                f"{col('service_ns', 'p50')} | {col('queueing_ns', 'p50')} | {rows[0]['total_ns']['count']:,} |"
            )
        b, z = select("openloop", "bridge", rate), select("openloop", "zenoh", rate)
        ratio = [x["total_ns"]["p50"] / y["total_ns"]["p50"] for x, y in zip(b, z)]
        ratio_lines.append(f"- {rate:,} msg/s: **{fmt_range(ratio, 1, 2)}×**")
    out.append("\nbridge / zenoh alone, total p50:\n")
    out.extend(ratio_lines)
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])

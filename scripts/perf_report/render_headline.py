"""The headline table in the C++ original's shape: 2P1S and 2P2S × 1, 4 and 64 MiB, salias
FIFO `offer` (ring = size) against Aeron `try_claim` (term = size), from the records of
`comparison --headline` (bench "headline"). Runs that had more busy processes than cores
get a table of their own under a heading that says so."""

from collections import namedtuple

from .compute import Runs, delivered, size_text
from .page import fmt_mmm, fmt_ratio, md_table, oversubscribed
from .render_throughput import refused

# What identifies a headline run across rounds.
HeadlineKey = namedtuple("HeadlineKey", "system publishers subscribers ring_bytes")

HEADER = [
    "shape",
    "ring / term",
    "salias delivered M msg/s",
    "Aeron delivered M msg/s",
    "salias / Aeron",
    "salias refused %",
    "Aeron refused %",
    "placement",
    "paired rounds",
]
ALIGN = ["l", "r", "r", "r", "r", "r", "r", "l", "r"]


def headline_runs(sources):
    """The headline records of every comparison file, grouped by HeadlineKey."""
    runs = Runs()
    for s in sources["comparison"]:
        for r in s.records:
            if r["bench"] == "headline":
                runs.add(HeadlineKey(r["system"], r["publishers"], r["subscribers"], r["ring_bytes"]), s, r)
    return runs


def rows(runs):
    """(row, oversubscribed, busy processes) per shape and size, in the grid's order."""
    shapes = sorted({(k.publishers, k.subscribers) for k in runs.order})
    sizes = sorted({k.ring_bytes for k in runs.order})
    out = []
    for publishers, subscribers in shapes:
        for size in sizes:
            a = HeadlineKey("salias", publishers, subscribers, size)
            b = HeadlineKey("aeron", publishers, subscribers, size)
            records = [r for k in (a, b) for _, _, r in runs.get(k)]
            if not records:
                continue
            ratio = runs.ratio(a, b, delivered)
            row = (
                f"{publishers}P{subscribers}S",
                size_text(size),
                fmt_mmm(runs.stat(a, delivered), 2, 1e-6),
                fmt_mmm(runs.stat(b, delivered), 2, 1e-6),
                fmt_ratio(ratio),
                fmt_mmm(runs.stat(a, refused), 2, 100.0),
                fmt_mmm(runs.stat(b, refused), 2, 100.0),
                records[0]["placement"],
                ratio[3] if ratio else 0,
            )
            busy = max(r["busy_processes"] for r in records)
            out.append((row, any(oversubscribed(r) for r in records), busy))
    return out


def section(page, sources):
    """The section, or nothing when no file has headline records."""
    runs = headline_runs(sources)
    if not runs.order:
        return
    page.add("## Headline table (the C++ original's shape)", "")
    page.add(
        "From `scripts/performance-report --headline` (`comparison --headline`): two publishers and one "
        "or two subscribers, every subscriber receiving every message, 64-byte messages; salias FIFO "
        "`offer` (FifoMpsc, FifoFanout for two subscribers; ring = the size, per publisher) against Aeron "
        "IPC `try_claim` (one exclusive publication per publisher, one subscription per subscriber; term = "
        "the size). The setups alternate within each round. Delivered = messages received by all "
        "subscribers together / time until the last one had its last message; refused = refused "
        "attempts / attempts (back pressure). Ratios > 1 favour salias, paired within a round.",
        "",
    )
    found = rows(runs)
    fit = [row for row, over, _ in found if not over]
    over = [(row, busy) for row, o, busy in found if o]
    if fit:
        page.add(md_table(HEADER, fit, ALIGN), "")
    if over:
        busy = sorted({b for _, b in over})
        busy_text = f"{busy[0]}" if len(busy) == 1 else f"{busy[0]} to {busy[-1]}"
        page.add(
            "### Oversubscribed headline runs",
            "",
            f"The machine had fewer cores than busy processes ({busy_text} per run), or the grid was run "
            "with `--allow-oversubscribed` on fewer than 4 cores: the processes took turns on the cores, so "
            "these figures say as much about the scheduler as about either system, and are no headline.",
            "",
            md_table(HEADER, [row for row, _ in over], ALIGN),
            "",
        )

"""The page being written, and how its figures are formatted: the pieces every section of
the report uses."""

import math
import os


def fmt(x, digits=2):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if digits == 0:
        return f"{x:,.0f}".replace(",", " ")
    return f"{x:.{digits}f}"


def fmt_mmm(stat, digits=2, scale=1.0):
    if stat is None:
        return "–"
    m, lo, hi, _ = stat
    return f"{fmt(m * scale, digits)} [{fmt(lo * scale, digits)}, {fmt(hi * scale, digits)}]"


def fmt_ns(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return fmt(x, 0)


def fmt_ratio(stat):
    if stat is None:
        return "–"
    m, lo, hi, n = stat
    return f"**{m:.2f}×** [{lo:.2f}, {hi:.2f}]"


def fmt_states(states):
    """Each speed state's median ratio and its pair count, e.g. `line 40 ns 0.62× (2);
    line 65 ns 0.70× (3)`; empty when the runs carried no probes."""
    if not any(state for state, _ in states):
        return ""
    return "; ".join(f"{state or 'unlabelled'} {r[0]:.2f}× ({r[3]})" for state, r in states)


def api_text(batch):
    return "offer" if batch == 1 else f"batch {batch}"


def md_table(header, rows, align=None):
    align = align or ["l"] + ["r"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def oversubscribed(record):
    """Whether a throughput record ran more busy processes than the machine had cores."""
    return bool(record.get("oversubscribed"))


def split_tables(page, header, rows, align, flags, busy_note):
    """Renders `rows` as two tables: those that fit the machine, then, under a title with
    the word "oversubscribed", those whose flag in `flags` is set (their processes took
    turns on the cores, so the rate says as much about the scheduler as about the
    channel). Never one table for both."""
    fit = [r for r, o in zip(rows, flags) if not o]
    over = [r for r, o in zip(rows, flags) if o]
    if fit:
        page.add(md_table(header, fit, align), "")
    if over:
        page.add(
            f"**Oversubscribed** ({busy_note}): more busy processes than cores, which took turns; "
            "not comparable with the rows above.",
            "",
            md_table(header, over, align),
            "",
        )


class Page:
    """The report being written: its lines, and the plots it refers to."""

    def __init__(self, out, plots_dir):
        self.lines = []
        self.plots = []
        self.plots_dir = plots_dir
        self.out_dir = os.path.dirname(os.path.abspath(out))
        self.rel_plots = os.path.relpath(plots_dir, self.out_dir)

    def add(self, *lines):
        self.lines.extend(lines)

    def plot_path(self, name):
        return os.path.join(self.plots_dir, name)

    def plot_ref(self, name, caption):
        """Markdown for a plot this run wrote, which is then kept."""
        self.plots.append(name)
        self.add(f"![{caption}]({self.rel_plots}/{name})", "")

    def text(self):
        return "\n".join(self.lines).rstrip("\n") + "\n"

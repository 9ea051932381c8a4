"""The headline table: python3 -m unittest discover -s scripts/perf_report -p 'test_*.py'"""

import os
import sys
import unittest
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True

from perf_report import render_headline  # noqa: E402
from perf_report.page import Page  # noqa: E402

MIB = 1 << 20


def record(system, subscribers, size, round, delivered, over=False):
    return {
        "bench": "headline",
        "system": system,
        "round": round,
        "publishers": 2,
        "subscribers": subscribers,
        "ring_bytes": size,
        "delivered_per_s": delivered,
        "refused_fraction": 0.25,
        "placement": "S0@3 P0@0 P1@1",
        "busy_processes": 2 + subscribers,
        "oversubscribed": over,
    }


def render(records):
    page = Page("/tmp/report.md", "/tmp/plots")
    source = SimpleNamespace(path="/tmp/comparison-headline-1.jsonl", records=records)
    render_headline.section(page, {"comparison": [source], "ipc": []})
    return page.text()


class HeadlineTable(unittest.TestCase):
    def test_no_headline_records_no_section(self):
        other = dict(record("salias", 1, MIB, 0, 1e6), bench="throughput")
        self.assertEqual(render([other]).strip(), "")

    def test_rows_pair_salias_and_aeron_round_by_round(self):
        records = []
        for round, (s, a) in enumerate([(40e6, 20e6), (30e6, 10e6), (50e6, 50e6)]):
            records += [record("salias", 1, 4 * MIB, round, s), record("aeron", 1, 4 * MIB, round, a)]
        text = render(records)
        self.assertIn("## Headline table (the C++ original's shape)", text)
        row = next(line for line in text.splitlines() if line.startswith("| 2P1S | 4 MiB"))
        # per-round ratios 2, 3, 1: upper median 2, min 1, max 3
        self.assertIn("**2.00×** [1.00, 3.00]", row)
        self.assertIn("40.00 [30.00, 50.00]", row)
        self.assertIn("25.00 [25.00, 25.00]", row)
        self.assertTrue(row.endswith("| 3 |"), row)
        self.assertNotIn("versubscribed", text)

    def test_oversubscribed_runs_get_their_own_table_under_a_heading(self):
        records = [
            record("salias", 1, MIB, 0, 40e6),
            record("aeron", 1, MIB, 0, 20e6),
            record("salias", 2, MIB, 0, 40e6, over=True),
            record("aeron", 2, MIB, 0, 20e6, over=True),
        ]
        fit, over = render(records).split("### Oversubscribed")
        self.assertIn("| 2P1S | 1 MiB", fit)
        self.assertNotIn("| 2P2S", fit)
        self.assertIn("| 2P2S | 1 MiB", over)
        self.assertNotIn("| 2P1S", over)
        self.assertIn("fewer cores than busy processes", over)


if __name__ == "__main__":
    unittest.main()

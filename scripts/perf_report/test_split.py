"""Oversubscribed runs never share a table with the others:
python3 -m unittest discover -s scripts/perf_report -p 'test_*.py'"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True

from perf_report.page import Page, oversubscribed, split_tables  # noqa: E402


class SplitTables(unittest.TestCase):
    def render(self, flags):
        page = Page("/tmp/report.md", "/tmp/plots")
        rows = [(f"row{i}", "1.0") for i in range(len(flags))]
        split_tables(page, ["setup", "M/s"], rows, ["l", "r"], flags, "3 busy processes")
        return page.text()

    def test_oversubscribed_rows_get_their_own_titled_table(self):
        text = self.render([False, True, False, True])
        fit, over = text.split("**Oversubscribed**")
        self.assertIn("row0", fit)
        self.assertIn("row2", fit)
        self.assertNotIn("row1", fit)
        self.assertIn("row1", over)
        self.assertIn("row3", over)
        self.assertNotIn("row0", over)
        self.assertIn("3 busy processes", over)
        self.assertEqual(text.count("| setup | M/s |"), 2, "two tables, one header each")

    def test_no_oversubscribed_rows_no_second_table(self):
        text = self.render([False, False])
        self.assertNotIn("versubscribed", text)
        self.assertEqual(text.count("| setup | M/s |"), 1)

    def test_absent_flag_is_not_oversubscribed(self):
        self.assertFalse(oversubscribed({}))
        self.assertTrue(oversubscribed({"oversubscribed": True}))


if __name__ == "__main__":
    unittest.main()

"""The README's Python examples run as written."""

from __future__ import annotations

import re

from conftest import PACKAGE


def test_the_readme_python_examples_run():
    readme = (PACKAGE.parent / "README.md").read_text()
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "the README's From Python section has no example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})

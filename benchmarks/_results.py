"""Write a benchmark's table into its own section of benchmarks/RESULTS.md.

Each benchmark owns one section, delimited by HTML comments, so scripts never overwrite each other.
"""

from __future__ import annotations

import datetime
import platform
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")
HEADER = "# Benchmark results\n\nEach section is written by the script it names; rerun it to refresh.\n"


def update_section(key, markdown, command):
    """Replace (or append) the section ``key`` of RESULTS.md with ``markdown``, stamped with the command."""
    text = RESULTS.read_text() if RESULTS.exists() else HEADER
    start, end = f"<!-- begin {key} -->", f"<!-- end {key} -->"
    stamp = (f"_Measured {datetime.date.today().isoformat()} on {platform.machine()}, "
             f"{platform.python_implementation()} {platform.python_version()}, with `{command}`._\n")
    block = f"{start}\n{markdown.rstrip()}\n\n{stamp}{end}"
    if start in text and end in text:
        pre, rest = text.split(start, 1)
        _, post = rest.split(end, 1)
        text = pre + block + post
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text)


def publish(md, key, heading, write, script):
    """Print a section (the lines ``md`` under ``## heading``) and, with ``write``, put it in RESULTS.md as section
    ``key``, stamped with the command line that made it (``script``, e.g. "benchmarks/check_cost.py", and this
    process's arguments)."""
    import sys
    text = f"## {heading}\n\n" + "\n".join(md)
    print(text)
    if write:
        update_section(key, text, " ".join([f"python {script}"] + sys.argv[1:]))


def markdown_table(header, rows):
    """A GitHub-flavoured markdown table from a header list and rows of values."""
    out = ["| " + " | ".join(str(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows]
    return "\n".join(out)

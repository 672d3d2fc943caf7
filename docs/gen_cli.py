"""Generate the command-line reference from the ``liedyn`` parser itself (``--help`` of every
subcommand), so the page always matches the installed command."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def page():
    from catalog.cli.main import build_parser

    os.environ["COLUMNS"] = "100"          # argparse wraps at the terminal width: fix it
    p = build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    lines = ["# Command line", "",
             "`liedyn` (or `python -m catalog`) is installed with the package. Every subcommand takes a "
             "catalog name or a TOML file of one's own (see [](howto/own_system.md)) and `--json`; "
             "errors print one line `liedyn: error: ...` and exit with status 2 (`--debug` shows the "
             "traceback). This page is generated from the parser.", "",
             "```text", p.format_help().rstrip(), "```", ""]
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, sp in sub.choices.items():
        lines += [f"## liedyn {name}", "", helps.get(name) or "", "", "```text", sp.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


def write(path):
    Path(path).write_text(page(), encoding="utf-8")

"""How an integration result shows itself: a Markdown summary for notebooks, a plain-text one for
``print`` and the REPL (at most 30 lines, never the arrays), both with the drift.

Method and step, status and message, the time span, the shape of y, steps, right-hand-side
evaluations and wall time; then one row per recorded invariant with its initial value and its relative
drift max_k |I(t_k) - I(t_0)| / |I(t_0)| (``IntegrationResult.drift``; worst trajectory of a batch),
and one row per constraint with its largest residual.
"""

from __future__ import annotations

import textwrap

import numpy as np

__all__ = ["result_markdown", "result_text"]

#: the most lines ``print(result)`` writes
MAX_LINES = 30


def result_markdown(res) -> str:
    """Markdown for Jupyter: the run in one line, then the invariants' drift and constraints' residuals."""
    t = np.asarray(res.t)
    span = f"[{t[0]:.6g}, {t[-1]:.6g}]" if t.size else "[]"
    step = f", h = {res.h:.6g}" if res.h else ""
    status = {0: "reached the end", 1: "stopped by a terminal event", -1: "failed"}.get(res.status, str(res.status))
    head = (f"**IntegrationResult** ({res.method or 'method?'}{step}): {status}"
            + (f" ({res.message})" if res.message and res.status != 0 else "")
            + f"; t in {span}, y {tuple(np.shape(res.y))}, {res.nsteps} steps, {res.nfev} evaluations, "
              f"{res.wall_time:.3g} s")
    tables = []
    if res.invariants:
        rows = ["| invariant | initial value | relative drift |", "|---|---|---|"]
        for k, v in res.invariants.items():
            v0 = np.asarray(v)[0]
            v0 = f"{float(v0):.12g}" if np.ndim(v0) == 0 else f"{np.size(v0)} values"
            rows.append(f"| `{k}` | {v0} | {float(np.max(res.drift(k))):.2e} |")
        tables.append("\n".join(rows))
    if res.constraints:
        rows = ["| constraint | largest residual |", "|---|---|"]
        rows += [f"| `{k}` | {float(np.max(res.max_residual(k))):.2e} |" for k in res.constraints]
        tables.append("\n".join(rows))
    return "\n\n".join([head] + tables)


def _cut(items, most, what):
    """The first ``most`` items, and a line saying how many were left out."""
    return items[:most] + ([f"  ... {len(items) - most} more {what}"] if len(items) > most else [])


def result_text(res) -> str:
    """Plain text for ``print(res)`` and the REPL: the run, the final state, the drift of each invariant
    and the residual of each constraint, the named outputs; at most :data:`MAX_LINES` lines."""

    t = np.asarray(res.t)
    y = np.asarray(res.y)
    status = {0: "reached the end", 1: "stopped by a terminal event", -1: "failed"}.get(res.status, str(res.status))
    name = f" {res.name}" if getattr(res, "name", "") else ""
    lines = [f"IntegrationResult{name}: method {res.method or '?'}"
             + (f", h = {res.h:.6g}" if res.h else "") + f", status {res.status} ({status})"]
    if res.message and res.status != 0:
        lines += textwrap.wrap(" ".join(str(res.message).split()), 104, initial_indent="  message: ",
                               subsequent_indent="    ", max_lines=3, placeholder=" ...")
    span = f"[{t[0]:.6g}, {t[-1]:.6g}]" if t.size else "[]"
    lines.append(f"  t: {t.size} points in {span}; y: shape {tuple(y.shape)}; {res.nsteps} steps, "
                 f"{res.nfev} evaluations, {res.wall_time:.3g} s")
    labels = list(res.labels or ())
    if y.ndim == 2 and y.shape[0] and y.shape[1] <= 12 and np.issubdtype(y.dtype, np.number):
        if len(labels) != y.shape[1]:
            labels = [f"y{i + 1}" for i in range(y.shape[1])]
        final = ", ".join(f"{lab}={float(v):.8g}" for lab, v in zip(labels, y[-1]))
        lines += textwrap.wrap(final, 104, initial_indent=f"  y(t={t[-1]:.6g}): ", subsequent_indent="    ",
                               max_lines=3, placeholder=" ...")
    if res.invariants:
        rows = []
        for k, v in res.invariants.items():
            v0 = np.asarray(v)[0] if np.size(v) else np.nan
            v0 = f"{float(v0):.12g}" if np.ndim(v0) == 0 else f"{np.size(v0)} values"
            d = float(np.max(res.drift(k))) if np.size(v) else float("nan")
            rows.append(f"  {str(k)[:60]}: initial {v0}, relative drift {d:.2e}")
        lines += ["invariants:"] + _cut(rows, 8, "invariants")
    if res.constraints:
        rows = [f"  {str(k)[:60]}: largest residual {float(np.max(res.max_residual(k))):.2e}"
                for k in res.constraints if np.size(res.constraints[k])]
        lines += ["constraints:"] + _cut(rows, 5, "constraints")
    outs = [k for k in res.outputs if k not in ("z",)]
    if outs:
        lines += textwrap.wrap("outputs (res.<name>, res[name]): " + ", ".join(outs), 108, max_lines=2,
                               placeholder=" ...")
    if res.events:
        lines.append(f"events: {len(res.events)} (res.events), first {res.events[0]}")
    if res.t_events:
        lines.append("t_events: " + ", ".join(str(np.size(te)) for te in res.t_events) + " per event function")
    lines = [x if len(x) <= 112 else x[:109] + "..." for x in lines]
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES - 1] + [f"... ({len(lines) - MAX_LINES + 1} more lines)"]
    return "\n".join(lines)

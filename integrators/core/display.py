"""How an integration result shows itself in a notebook: a Markdown summary with the drift.

Method and step, status and message, the time span, the shape of y, steps, right-hand-side
evaluations and wall time; then one row per recorded invariant with its initial value and its relative
drift max_k |I(t_k) - I(t_0)| / |I(t_0)| (``IntegrationResult.drift``; worst trajectory of a batch),
and one row per constraint with its largest residual.
"""

from __future__ import annotations

import numpy as np

__all__ = ["result_markdown"]


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

"""The static HTML report: ``liedyn report --out DIR`` writes ``DIR/index.html`` and PNG figures in
``DIR/fig/``. No network, no JavaScript: plain HTML with <details> for long equations.

For every entry: description, references, parameters, equations, realizability, first integrals
with their measured drift, figures (motion and path, invariant drift of the entry's geometric
integrator next to scipy DOP853, phase portrait with invariant lines where a reduced quadratic
system exists), and one verdict line per check (PASS/FAIL with the number). Then the integrator
comparison on the entries with an exact or reference solution, the relation graph as a figure,
and a verdict per graph edge (:mod:`catalog.verify.relations`).
"""

from __future__ import annotations

import html
import time
import traceback
from pathlib import Path

from . import describe
from . import plots
from ..verify.run import Verdict, checks, drift, simulate

CSS = """body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em;color:#222}
h2{border-bottom:2px solid #8ecae6;margin-top:2em}pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:85%}
table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}
.PASS{color:#1a7f37;font-weight:bold}.FAIL{color:#c62828;font-weight:bold}img{max-width:100%}
.small{font-size:85%;color:#555}"""

#: entries of the integrator comparison: free (exact), semidirect product, second kind (Casimir F(m + lambda b)),
#: first kind (exact servo-sleigh solution)
COMPARE_ENTRIES = ("euler_top", "heavy_top", "flywheel_body", "servo_sleigh")


def _e(x):
    return html.escape(str(x))


def _verdicts_html(verdicts):
    if not verdicts:
        return "<p class='small'>(nothing to check)</p>"
    rows = "".join(f"<li><span class='{'PASS' if v.passed else 'FAIL'}'>{'PASS' if v.passed else 'FAIL'}</span> "
                   f"{_e(v.what)}: {_e(v.check)} = {v.value:.3e} (tolerance {v.tol:.2g})</li>" for v in verdicts)
    return f"<ul>{rows}</ul>"


def _img(rel, alt):
    return f"<p><img src='{_e(rel)}' alt='{_e(alt)}'></p>"


def _figure(fig, out, rel):
    plots.save(fig, out / rel)
    return rel


def entry_section(entry, out, counter):
    """HTML of one entry and its verdicts (list of :class:`Verdict`)."""
    name = entry.name
    parts = [f"<h2 id='{_e(name)}'>{_e(name)}</h2>", f"<p>{_e(entry.description)}</p>",
             f"<p class='small'>model: {_e(entry.model)}; kind: {_e(entry.kind)}; parameters: "
             + _e(", ".join(f"{k}={v}" for k, v in entry.parameters.items()) or "none") + "</p>"]
    if entry.references:
        parts.append("<p>References:</p><ul>" + "".join(f"<li>{_e(r)}</li>" for r in describe.references(entry)) + "</ul>")
    text, latex = describe.equations(entry)
    parts.append("<h3>Equations</h3><pre>" + _e("\n".join(text) or "(not available)") + "</pre>")
    if latex:
        parts.append(f"<details><summary>LaTeX</summary><pre>{_e(latex)}</pre></details>")
    r = describe.realizability(entry)
    if r is not None:
        ok = (not isinstance(r, str)) and r != 0
        expr = "(I<sup>-1</sup>a, b)" if entry.kind == "lie-group" else "(A<sup>-1</sup>M, &part;&Phi;/&part;q')"
        parts.append(f"<p>Realizability {expr} = {_e(r)}: "
                     f"{'realizable' if ok else 'not realizable'}</p>")
    verdicts = []
    run = simulate(entry)
    verdicts += checks(entry, run)
    ints = describe.integrals(entry)
    if run.invariants:
        rows = "".join(f"<tr><td>{_e(k)}</td><td>{run.invariants[k][0]:.12g}</td><td>{drift(run, k):.3e}</td></tr>"
                       for k in run.invariants)
        parts.append("<h3>First integrals and measured drift</h3><table><tr><th>integral</th><th>initial value</th>"
                     f"<th>relative drift ({_e(run.method)}, {run.nsteps} steps)</th></tr>{rows}</table>")
    sys_ints = [f for f in ints if f["source"] == "system"]
    if sys_ints:
        parts.append("<p class='small'>integrals listed by the system: "
                     + _e("; ".join(f["name"] + (f" = {f['expr']}" if f.get("expr") else "") for f in sys_ints))
                     + "</p>")
    parts.append("<h3>Figures</h3>")
    rel = _figure(plots.trajectory_figure(entry, run), out, f"fig/{counter:02d}_{name}_motion.png")
    parts.append(_img(rel, f"motion of {name}"))
    fig = plots.orientation_figure(entry, run)
    if fig is not None:
        rel = _figure(fig, out, f"fig/{counter:02d}_{name}_group.png")
        parts.append(_img(rel, f"motion of {name} on SO(3)"))
    if entry.kind == "lie-group" and run.invariants:
        try:
            ref = simulate(entry, method="scipy:DOP853", rtol=1e-8, atol=1e-10)
            rel = _figure(plots.drift_comparison_figure(entry, [run, ref]), out, f"fig/{counter:02d}_{name}_drift.png")
            parts.append(_img(rel, f"invariant drift of {run.method} and DOP853"))
        except (ValueError, ArithmeticError) as exc:
            parts.append(f"<p class='small'>(no scipy comparison: {_e(exc)})</p>")
    q = None
    try:
        q = describe.quadratic_system(entry)
    except (ValueError, ImportError, AttributeError, NotImplementedError):
        q = None
    if q is not None and q.p in (2, 3) and hasattr(q, "phase_portrait"):
        try:
            rel = _figure(plots.phase_portrait_figure(q, f"{name}: reduced system"), out,
                          f"fig/{counter:02d}_{name}_phase.png")
            parts.append(_img(rel, f"phase portrait of {name}"))
        except Exception as exc:  # a figure that cannot be drawn is noted, it does not sink the entry
            parts.append(f"<p class='small'>(no phase portrait: {_e(type(exc).__name__)}: {_e(exc)})</p>")
    parts.append("<h3>Verdicts</h3>" + _verdicts_html(verdicts))
    return "\n".join(parts), verdicts


def compare_section(entries, out):
    from ..verify.compare import compare_entry, format_summary

    parts = ["<h2 id='integrators'>Integrator comparison</h2>",
             "<p>Final error at t_end over a step-halving ladder (fixed-step methods) or a tolerance ladder "
             "(scipy), the fitted order, and the largest relative drift of the claimed first integrals.</p>"]
    for e in entries:
        rows, summary, reference = compare_entry(e)
        parts.append(f"<h3>{_e(e.name)}</h3><pre>{_e(format_summary(summary, reference))}</pre>")
        rel = _figure(plots.compare_figure(rows, f"{e.name}: work-precision"), out, f"fig/compare_{e.name}.png")
        parts.append(_img(rel, f"work-precision on {e.name}"))
    return "\n".join(parts)


def graph_section(out, names=None):
    """The relation graph figure and a verdict per edge (only edges between ``names`` if given)."""
    from ..graph import graph
    from ..verify.relations import check_edge

    G = graph()
    if names is not None:
        G = G.subgraph(names).copy()
    rel = _figure(plots.graph_figure(G), out, "fig/graph.png")
    rows, verdicts = [], []
    for u, v, d in G.edges(data=True):
        try:
            verdict = check_edge(u, v, d)
        except Exception as exc:  # a failing relation check is a FAIL in the report, not a crash
            verdict = Verdict(f"{u} -> {v}", "relation", float("nan"), 0.0, f" ({exc})")
        verdicts.append(verdict)
        status = "PASS" if verdict.passed else "FAIL"
        rows.append(f"<tr><td>{_e(u)}</td><td>{_e(d['relation'])}</td><td>{_e(v)}</td><td>{_e(d['note'])}</td>"
                    f"<td><span class='{status}'>{status}</span> {verdict.value:.3e} (tol {verdict.tol:.2g}) "
                    f"{_e(verdict.detail)}</td></tr>")
    table = ("<table><tr><th>from</th><th>relation</th><th>to</th><th>how</th><th>check</th></tr>"
             + "".join(rows) + "</table>")
    return ("<h2 id='graph'>Relations between the systems</h2>" + _img(rel, "relation graph") + table), verdicts


def write_report(out, names=None, progress=None, compare=True):
    """Write ``out/index.html`` (and ``out/fig/*.png``); return (path, list of all verdicts, failures)."""
    from ..registry import get, specs
    from ..registry import names as all_names

    out = Path(out)
    (out / "fig").mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if names is None:  # grouped by family (rigid bodies, sleighs, systems in coordinates), then by name
        order = {"rigid": 0, "sleigh": 1, "coordinates": 2}
        sp = specs()
        names = sorted(all_names(), key=lambda n: (order.get(sp[n].family, 3), n))
    names = list(names)
    sections, toc, verdicts, failures = [], [], [], []
    for i, name in enumerate(names):
        if progress is not None:
            progress.update(f"{i + 1}/{len(names)} {name}")
        try:
            entry = get(name)
            sec, vs = entry_section(entry, out, i)
        except Exception as exc:  # an entry that cannot run is reported as a failure
            failures.append((name, str(exc)))
            vs = [Verdict(name, "build/run", float("nan"), 0.0)]
            sec = (f"<h2 id='{_e(name)}'>{_e(name)}</h2><p class='FAIL'>FAIL: {_e(type(exc).__name__)}: {_e(exc)}</p>"
                   f"<details><summary>traceback</summary><pre>{_e(traceback.format_exc())}</pre></details>")
        sections.append(sec)
        verdicts += vs
        n_fail = sum(not v.passed for v in vs)
        toc.append(f"<li><a href='#{_e(name)}'>{_e(name)}</a> "
                   f"<span class='{'FAIL' if n_fail else 'PASS'}'>{'FAIL' if n_fail else 'PASS'}</span></li>")
    if progress is not None:
        progress.update("relations")
    gsec, gv = graph_section(out, names)
    verdicts += gv
    csec = ""
    if compare:
        if progress is not None:
            progress.update("integrator comparison")
        csec = compare_section([get(n) for n in COMPARE_ENTRIES if n in names], out)
    n_pass = sum(v.passed for v in verdicts)
    head = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>liedyn report</title><style>{CSS}</style>"
            f"</head><body><h1>liedyn: catalog report</h1><p>{len(names)} systems, {n_pass} of {len(verdicts)} "
            f"checks pass; generated in {time.perf_counter() - t0:.0f} s.</p><ul>{''.join(toc)}"
            "<li><a href='#graph'>relation graph</a></li><li><a href='#integrators'>integrator comparison</a></li>"
            "</ul>")
    doc = head + "\n".join(sections) + gsec + csec + "</body></html>"
    path = out / "index.html"
    path.write_text(doc)
    return path, verdicts, failures

"""The report as a small static site: ``liedyn report --out DIR`` writes

* ``DIR/index.html``: provenance (date, version, commit, library versions), one row per system (family,
  model, realizability, the checks and what they compare against, a thumbnail linking to its page);
* ``DIR/<name>.html``: one page per system: a verdict box first (each check: what it compares against -
  exact solution, conserved quantity, residual, a paper's claim, an independent reference -, value,
  tolerance, margin), description, parameters, references, the equations drawn as SVG (matplotlib's
  mathtext, no network, no JavaScript) with their LaTeX and unicode text to copy, realizability, first
  integrals as formulas with their measured drift, the figures (the motion, the path with the blade, the
  tumbling body as an animated SVG, the heavy top's apex on the sphere, the phase portrait);
* ``DIR/relations.html``: the relation graph with a verdict per edge and the log-log figure of the limit
  rates; ``DIR/integrators.html``: the integrator comparison (HTML tables, work-precision figures);
* ``DIR/style.css``, ``DIR/fig/*.svg``, ``DIR/eq/*.svg``.

Everything is written into a temporary directory beside ``DIR`` and moved into place at the end, so an
interrupted run leaves the previous report whole (never an old index.html beside a mix of figures).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import traceback
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from . import animation, describe, html_parts as hp, plots
from .mathsvg import MathRenderError, write_svg
from .progress import Steps
from .provenance import provenance
from ..verify.run import Verdict, checks, drift, simulate

#: entries of the integrator comparison: free (exact), semidirect product, second kind (Casimir F(m + lambda b)),
#: first kind (exact servo-sleigh solution)
COMPARE_ENTRIES = ("euler_top", "heavy_top", "flywheel_body", "servo_sleigh")
FAMILY_ORDER = {"rigid": 0, "sleigh": 1, "coordinates": 2}


def _status(v):
    s = "PASS" if v.passed else "FAIL"
    return hp.Markup(f"<span class='{s}'>{s}</span>")


def _margin(v):
    m = v.margin
    if not v.passed:
        return "-" if m == 0 else f"{m:.2g}x (over the tolerance)"
    return "exact (value 0)" if m == float("inf") else f"{m:.3g}x"


def against_summary(verdicts):
    """'2 conserved quantities, 1 residual': what the checks compare against, counted."""
    counts = {}
    for v in verdicts:
        counts[v.against] = counts.get(v.against, 0) + 1
    plural = {"conserved quantity": "conserved quantities", "exact solution": "exact solutions",
              "residual": "residuals", "paper's claim": "papers' claims", "independent reference":
              "independent references", "relation": "relations", "run": "runs"}
    return ", ".join(f"{n} {plural.get(k, k) if n > 1 else k}" for k, n in counts.items())


def verdict_box(verdicts, run=None):
    """The box at the top of a system page: one row per check with what it compares against (exact
    solution, conserved quantity, residual, a paper's claim, an independent reference), the value, the
    tolerance and the margin (tolerance / value)."""
    if not verdicts:
        return "<div class='verdict'><h2>Verdict</h2><p>Nothing to check.</p></div>"
    nf = sum(not v.passed for v in verdicts)
    head = (f"<span class='{'FAIL' if nf else 'PASS'}'>{'FAIL' if nf else 'PASS'}</span> "
            f"{len(verdicts) - nf} of {len(verdicts)} checks pass, against: {hp.escape(against_summary(verdicts))}")
    how = "" if run is None else f" Run: {hp.escape(run.method)}, {len(run.t)} output points to t = {run.t[-1]:.6g}."
    rows = [[_status(v), v.against, (v.check + v.detail), hp.Markup(f"<span class='num'>{v.value:.3e}</span>"),
             f"{v.tol:.2g}", _margin(v)] for v in verdicts]
    table = hp.table(["", "compared against", "check", "value", "tolerance", "margin"], rows)
    return (f"<div class='verdict{' failed' if nf else ''}'><h2>Verdict</h2><p>{head}.{how}</p>{table}"
            "<p class='small'>margin = tolerance / value: how far inside its tolerance a check lands.</p></div>")


def _figure(fig, out, rel):
    plots.save(fig, out / rel)
    return rel


def _math(latex, out, rel, alt):
    """An <img> of the formula drawn as SVG, or None when mathtext cannot draw it."""
    try:
        write_svg(latex, out / rel)
    except MathRenderError:
        return None
    return hp.img(rel, alt)


def equations_html(entry, out, name):
    """The equations drawn as SVG, aligned at the relation sign, then the LaTeX and the text to copy."""
    rows, model = describe.equation_rows(entry)
    text, latex = describe.equations(entry)
    parts = ["<h2>Equations</h2>"]
    if model:
        img = _math(model, out, f"eq/{name}_model.svg", f"model: {model}")
        mtext = describe.model_text(entry)
        parts.append(f"<p class='model'>Model: {img or '<code>' + hp.escape(mtext) + '</code>'}</p>")
    cells, drawn = [], bool(rows)
    for k, (lhs, op, rhs) in enumerate(rows):
        a = _math(lhs, out, f"eq/{name}_{k}l.svg", lhs)
        b = _math(rhs, out, f"eq/{name}_{k}r.svg", rhs)
        o = _math(op, out, f"eq/{name}_{k}o.svg", op) if op != "=" else "="
        if a is None or b is None or o is None:
            drawn = False
            break
        cells.append(f"<tr><td class='l'>{a}</td><td>{o}</td><td class='r'>{b}</td></tr>")
    if drawn:
        parts.append("<div class='scroll'><table class='eq'>" + "".join(cells) + "</table></div>")
    parts.append("<p class='small'>Text:</p><pre>" + hp.escape("\n".join(text) or "(not available)") + "</pre>")
    if latex:
        parts.append(f"<p class='small'>LaTeX (paste into a paper):</p><pre>{hp.escape(latex)}</pre>")
    return "\n".join(parts)


def _realizability_html(entry):
    v = describe.realizability_verdict(entry)
    if v is None:
        return "", "n/a"
    if v["realizable"] is None:
        short = "depends on the state"
    else:
        short = ("realizable" if v["realizable"] else "not realizable") + (
            "" if v["where"] == "everywhere" else " at the initial state")
    at = ""
    if v["where"] != "everywhere" and v["value"] is not None:
        at = f" = {v['value']:.6g} at the initial state"
    cls = "PASS" if v["realizable"] else ("FAIL" if v["realizable"] is False else "")
    return (f"<h2>Realizability</h2><p>{hp.escape(v['expr'])} = <code>{hp.escape(v['formula'])}</code>{hp.escape(at)}: "
            f"<span class='{cls}'>{hp.escape(short)}</span>"
            + ("" if v["where"] == "everywhere" else " (realizable wherever it is non-zero)") + "</p>"), short


def _num(z):
    z = complex(z)
    return f"{z.real:.6g}" if abs(z.imag) <= 1e-12 * max(1.0, abs(z)) else f"{z.real:.4g}{z.imag:+.4g}i"


def _lines_html(lines):
    """The invariant lines x = s xi, v(xi) = c xi of the reduced system, with their Kovalevskaya exponents."""
    rows = []
    for L in lines:
        rho = L.kovalevskaya_exponents
        rows.append(["(" + ", ".join(_num(x) for x in L.direction) + ")", _num(L.c), "yes" if L.is_real else "no",
                     L.multiplicity, L.stability or "-", "-" if rho is None else ", ".join(_num(x) for x in rho)])
    return ("<h2>Invariant lines of the reduced system</h2>"
            + hp.table(["direction xi", "c", "real", "multiplicity", "stability", "Kovalevskaya exponents"], rows,
                     lines.reason or ""))


def _system_integrals_html(entry, out, name):
    """The first integrals the system lists, drawn as formulas (name and expression), text to copy beside."""
    items = [f for f in describe.integrals(entry) if f["source"] == "system"]
    if not items:
        return ""
    lis = []
    for k, f in enumerate(items):
        title_tex, title_text = describe.integral_title(f["name"])
        img = None
        if f.get("latex"):
            img = _math(f"{title_tex} = {f['latex']}", out, f"eq/{name}_int{k}.svg", f"{title_text} = {f['expr']}")
        lis.append(f"<li class='int'>{img or hp.escape(title_text)}<br><span class='small'>text: "
                   f"<code>{hp.escape(title_text)} = {hp.escape(f.get('expr') or '')}</code></span></li>")
    return "<p class='small'>First integrals listed by the system itself (servo):</p><ul>" + "".join(lis) + "</ul>"


def _figures(entry, run, out, counter, name):
    """The figures of a system page as (html, thumbnail-free); each panel its own SVG."""
    from ..verify.run import heavy_top_attitude, orientation, planar_pose

    pre = f"fig/{counter:02d}_{name}"
    figs = [hp.fig_html(_figure(plots.motion_figure(entry, run), out, f"{pre}_motion.svg"), f"motion of {name}",
                      "The state against time" + (" (dotted: the exact solution)."
                                                  if run.outputs.get("exact") is not None else "."))]
    fig = plots.drift_figure(run)
    if fig is not None:
        figs.append(hp.fig_html(_figure(fig, out, f"{pre}_drift.svg"), f"drift of {name}",
                              "Relative drift of the first integrals, constraint residuals and the error against the "
                              "exact solution (log scale; below machine epsilon drawn on it)."))
    pose = planar_pose(run)
    fig = plots.path_figure(entry, run, pose)
    if fig is not None:
        cap = ("Both points in the plane; dotted segments join their positions at the same instants."
               if pose is None else ("The path of the contact point with the blade drawn along the heading at evenly "
               "spaced instants" if plots.has_blade(entry) else "The path of the body frame's origin with the heading "
               "(body axis e1) drawn as arrows at evenly spaced instants") + ("; the events where the motion leaves or joins the constraint are marked."
                                    if getattr(run, "events", None) else "."))
        figs.append(hp.fig_html(_figure(fig, out, f"{pre}_path.svg"), f"path of {name}", cap))
    R = orientation(run)
    if R is not None:
        ex = entry.extras
        w = np.asarray(run.outputs["w"], float)[:, :3] if "w" in run.outputs else None
        svg = animation.tumbling_svg(R, run.t, ex.get("inertia", np.eye(3)), w=w, a=ex.get("a"), b=ex.get("b"),
                                     title=f"{name}: the body tumbling")
        (out / f"{pre}_tumbling.svg").write_text(svg, encoding="utf-8")
        figs.append(hp.fig_html(f"{pre}_tumbling.svg", f"animation of {name}",
                              "The body tumbling (animated SVG, no script): the box of its principal axes, the body "
                              "axes, the constraint axis a and the control axis b fixed in the body, the angular "
                              "velocity R w in space."))
        figs.append(hp.fig_html(_figure(plots.orientation_figure(entry, run), out, f"{pre}_group.svg"),
                              f"motion of {name} on SO(3)", "The tips of the body axes on the unit sphere."))
        figs.append(hp.fig_html(_figure(plots.orthogonality_figure(entry, run), out, f"{pre}_orth.svg"),
                              "orthogonality defect", "|R^T R - 1| of the attitude reconstructed by g' = g w."))
    if {"chi", "Gamma0"} <= set(entry.parameters) and "w" in run.outputs:
        _, apex, gap = heavy_top_attitude(run, entry.parameters["chi"], entry.parameters["Gamma0"])
        figs.append(hp.fig_html(_figure(plots.apex_figure(entry, apex, gap), out, f"{pre}_apex.svg"),
                              f"apex of {name}", "The apex of the top's axis on the unit sphere (attitude from "
                              "R' = R Omega with R(0)^T e3 = Gamma(0))."))
    if entry.kind == "lie-group" and run.invariants:
        try:
            ref = simulate(entry, method="scipy:DOP853", rtol=1e-8, atol=1e-10)
            fig = _figure(plots.drift_comparison_figure(entry, [run, ref]), out, f"{pre}_methods.svg")
            figs.append(hp.fig_html(fig, f"invariant drift of {run.method} and DOP853",
                                    f"Drift of the integrals: {run.method} against scipy's DOP853 (rtol 1e-8)."))
        except (ValueError, ArithmeticError) as exc:
            figs.append(f"<p class='small'>(no scipy comparison: {hp.escape(exc)})</p>")
    return "<div class='figs'>" + "".join(figs) + "</div>"


def entry_page(entry, out, counter):
    """Write ``<name>.html`` and its figures; return (index row data, verdicts)."""
    name = entry.name
    run = simulate(entry)
    verdicts = list(checks(entry, run))
    parts = [f"<h1>{hp.escape(name)}</h1>", f"<p>{hp.escape(entry.description)}</p>", verdict_box(verdicts, run),
             f"<p class='small'>model: {hp.escape(entry.model)}; kind: {hp.escape(entry.kind)}</p>"]
    if entry.parameters:
        parts.append(hp.table(["parameter", "value"], [[k, v] for k, v in entry.parameters.items()]))
    if entry.references:
        parts.append("<h2>References</h2><ul>" + "".join(f"<li>{hp.escape(r)}</li>" for r in describe.references(entry))
                     + "</ul>")
    parts.append(equations_html(entry, out, name))
    rhtml, rshort = _realizability_html(entry)
    parts.append(rhtml)
    if run.invariants:
        parts.append("<h2>First integrals and measured drift</h2>" + hp.table(
            ["integral", "initial value", f"relative drift ({run.method}, {run.nsteps} steps)"],
            [[k, f"{run.invariants[k][0]:.12g}", f"{drift(run, k):.3e}"] for k in run.invariants]))
    parts.append(_system_integrals_html(entry, out, name))
    parts.append("<h2>Figures</h2>" + _figures(entry, run, out, counter, name))
    try:
        q = describe.quadratic_system(entry)
    except (ValueError, ImportError, AttributeError, NotImplementedError):
        q = None
    if q is not None and q.p in (2, 3):
        try:
            fig = plots.phase_portrait_figure(q, f"{name}: reduced system")
            if fig is None:
                parts.append("<p class='small'>The reduced quadratic field vanishes identically: every state is "
                             "an equilibrium, there is no phase portrait to draw.</p>")
            else:
                rel = _figure(fig, out, f"fig/{counter:02d}_{name}_phase.svg")
                parts.append("<div class='figs'>" + hp.fig_html(rel, f"phase portrait of {name}",
                             "Phase portrait of the reduced homogeneous quadratic system x' = v(x) with its "
                             "invariant lines.") + "</div>")
        except Exception as exc:  # a figure that cannot be drawn is noted, it does not sink the entry
            parts.append(f"<p class='small'>(no phase portrait: {hp.escape(type(exc).__name__)}: {hp.escape(exc)})</p>")
    if q is not None:
        try:
            lines = q.invariant_lines()
            parts.append(_lines_html(lines))
            iv = describe.integrability_verdict(entry, lines=lines)
        except (ValueError, ArithmeticError) as exc:
            iv = None
            parts.append(f"<p class='small'>(no invariant lines or integrability verdict: {hp.escape(exc)})</p>")
        if iv is not None:
            parts.append("<h2>Integrability at the invariant lines</h2>" + hp.table(
                iv["header"], iv["rows"], "Kovalevskaya exponents at the Darboux points d = -xi/c: a degree is ruled "
                "out when some point has no resonance (servo.quadratic.kovalevskaya)."))
    (out / f"{name}.html").write_text(hp.page(f"liedyn: {name}", "\n".join(p for p in parts if p)), encoding="utf-8")
    thumb = _figure(plots.thumbnail_figure(entry, run), out, f"fig/{counter:02d}_{name}_thumb.svg")
    return {"name": name, "model": entry.model, "realizability": rshort, "thumb": thumb}, verdicts


def compare_page(entries, out):
    from ..verify.compare import SUMMARY_HEADER, compare_entry, summary_caption, summary_rows

    parts = ["<h1>Integrator comparison</h1>",
             "<p>Final error at t_end over a step-halving ladder (fixed-step methods) or a tolerance ladder "
             "(adaptive methods), the fitted order, the largest relative drift of the claimed first integrals, and "
             "each method's time to reach a final error of 1e-8 as a ratio to scipy's DOP853. Every method keeps "
             "its colour and marker on every figure.</p>"]
    for e in entries:
        rows, summary, reference = compare_entry(e)
        parts.append(f"<h2>{hp.escape(e.name)}</h2>" + hp.table(list(SUMMARY_HEADER), summary_rows(summary),
                                                        summary_caption(reference), cls="nums"))
        figs = []
        for x, what in (("wall_time", "wall time"), ("nfev", "right-hand-side evaluations")):
            rel = _figure(plots.compare_figure(rows, f"{e.name}: error against {what}", x=x), out,
                          f"fig/compare_{e.name}_{x}.svg")
            figs.append(hp.fig_html(rel, f"work-precision on {e.name} ({what})",
                                  f"Work-precision: final error against {what}, one point per step count or tolerance."))
        parts.append("<div class='figs'>" + "".join(figs) + "</div>")
    if not entries:
        parts.append("<p class='small'>(none of the comparison entries is in this report)</p>")
    parts.append(_nonholonomic_figures(out))
    (out / "integrators.html").write_text(hp.page("liedyn: integrators", "\n".join(parts)), encoding="utf-8")


#: the figures of benchmarks/nonholonomic.py (a real run writes them; the report copies them) and their captions
NONHOLONOMIC_FIGURES = {
    "sleigh": "Chaplygin sleigh: error against the exact solution, h = 0.0125.",
    "rolling_disk": "Vertical rolling disk: error against the exact solution, h = 0.0125.",
    "vakonomic_skate": "Vakonomic skate (Kozlov): error of dvak_mid against the reduced equations, h = 0.0125.",
    "contact_oscillator": ("Contact oscillator of McLachlan and Perlmutter: largest |H - H0| and |H_y - H_y0| in each "
                           "window, 10 initial conditions, 10^5 periods."),
    "contact_oscillator_nonreversible": ("Non-reversible variant of the contact oscillator (Modin and Verdier 2020): "
                                         "the same, 1000 periods."),
    "sleigh_long": "Chaplygin sleigh: relative energy error over the long run, h = 0.05.",
    "suslov_long": "Suslov's problem: relative energy error over the long run, h = 0.05.",
}


def _nonholonomic_figures(out):
    """The section of the structure-preserving nonholonomic integrators: the figures of
    benchmarks/nonholonomic.py (one per problem, every method with its marker), copied from
    benchmarks/figures when a run has written them."""
    src = Path(__file__).resolve().parents[2] / "benchmarks" / "figures"
    figs = []
    for key, caption in NONHOLONOMIC_FIGURES.items():
        f = src / f"nonholonomic_{key}.svg"
        if f.exists():
            (out / "fig").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, out / "fig" / f.name)
            figs.append(hp.fig_html(f"fig/{f.name}", caption, caption))
    head = ("<h2>Nonholonomic integrators</h2><p>The discrete Lagrange-d'Alembert-Suslov schemes (dlas_exp, dlas_cay), "
            "the Lie-group nonholonomic RATTLE (lie_rattle_exp, lie_rattle_cay), McLachlan and Perlmutter's mp_lda, the "
            "nonholonomic RATTLE (nh_rattle) and the discrete vakonomic scheme (dvak_mid) against rk4 and DOP853, from "
            "<code>benchmarks/nonholonomic.py</code> (tables in benchmarks/RESULTS.md, section nonholonomic).</p>")
    if not figs:
        return head + "<p class='small'>(no figures: run benchmarks/nonholonomic.py to make them)</p>"
    return head + "<div class='figs'>" + "".join(figs) + "</div>"


def relations_page(out, names=None):
    """The relation graph figure, a verdict per edge (only edges between ``names`` if given) and the log-log
    figure of the limit rates."""
    from ..graph import graph
    from ..verify.relations import check_edge

    G = graph()
    if names is not None:
        G = G.subgraph(names).copy()
    rel = _figure(plots.graph_figure(G), out, "fig/graph.svg")
    rows, verdicts = [], []
    for u, v, d in sorted(G.edges(data=True), key=lambda e: (e[0], e[1])):
        try:
            verdict = check_edge(u, v, d)
        except Exception as exc:  # a failing relation check is a FAIL in the report, not a crash
            verdict = Verdict(f"{u} -> {v}", "relation", float("nan"), 0.0, f" ({exc})")
        verdicts.append(verdict)
        rows.append([hp.Markup(f"<a href='{hp.escape(u)}.html'>{hp.escape(u)}</a>"), d["relation"],
                     hp.Markup(f"<a href='{hp.escape(v)}.html'>{hp.escape(v)}</a>"), d["note"],
                     hp.Markup(f"{_status(verdict)} {verdict.value:.3e} (tol {verdict.tol:.2g})"
                               f"{hp.escape(verdict.detail)}")])
    table = hp.table(["from", "relation", "to", "how", "check"], rows) if rows else \
        "<p class='small'>(no relation between these systems)</p>"
    body = ("<h1>Relations between the systems</h1><p>An arrow u &rarr; v reads &ldquo;u is a &lt;relation&gt; "
            "v&rdquo;; each is checked numerically against something independent of the run: an exact solution, "
            "equations written by hand, or the rate promised by a theorem.</p>"
            + f"<p>{hp.img(rel, 'relation graph')}</p>" + table)
    fig = plots.rate_figure(verdicts)
    if fig is not None:
        rrel = _figure(fig, out, "fig/limit_rates.svg")
        body += ("<h2>Limit rates</h2><p>Each limit N &rarr; &infin; promises an error O(1/N): the error at five "
                 "values of N, each twice the one before, on log-log axes with the slope -1 dotted; the check passes "
                 "when every doubling of N divides the error by 2<sup>1 &plusmn; 0.15</sup>.</p><div class='figs'>"
                 + hp.fig_html(rrel, "limit rates", "Error against N, log-log.") + "</div>")
    (out / "relations.html").write_text(hp.page("liedyn: relations", body), encoding="utf-8")
    return verdicts


def _index(out, rows, n_pass, n_checks, seconds, relation_verdicts):
    prov = "".join(f"<tr><th>{hp.escape(k)}</th><td>{hp.escape(v)}</td></tr>" for k, v in provenance())
    head = ("<h1>liedyn: catalog report</h1>"
            f"<p>{len(rows)} systems, {n_pass} of {n_checks} checks pass; generated in {seconds:.0f} s. "
            f"Relations: {sum(v.passed for v in relation_verdicts)} of {len(relation_verdicts)} pass "
            "(<a href='relations.html'>graph</a>); <a href='integrators.html'>integrator comparison</a>.</p>"
            "<p class='small'>Each check says what it compares against: an <b>exact solution</b>, a <b>conserved "
            "quantity</b> (relative drift), a constraint <b>residual</b>, a <b>paper's claim</b>, or an "
            "<b>independent reference</b> (equations written by hand and solved by scipy). Click a system or its "
            "picture for its page.</p>"
            f"<div class='scroll'><table class='prov'><caption>Provenance</caption>{prov}</table></div>")
    trs = []
    for r in rows:
        vs = r["verdicts"]
        nf = sum(not v.passed for v in vs)
        status = "FAIL" if nf or r.get("error") else "PASS"
        link = f"{hp.escape(r['name'])}.html"
        thumb = (f"<a href='{link}'>{hp.img(r['thumb'], 'motion of ' + r['name'], 'thumb')}</a>"
                 if r.get("thumb") else hp.escape(r.get("error", "")))
        trs.append(f"<tr><td><a href='{link}'>{hp.escape(r['name'])}</a><br><span class='small'>"
                   f"{hp.escape(r['title'])}</span></td><td>{hp.escape(r['family'])}</td>"
                   f"<td>{hp.escape(r.get('model', ''))}</td>"
                   f"<td>{hp.escape(r.get('realizability', ''))}</td><td><span class='{status}'>{status}</span> "
                   f"{len(vs) - nf}/{len(vs)}<br><span class='small'>against: "
                   f"{hp.escape(against_summary(vs))}</span></td>"
                   f"<td>{thumb}</td></tr>")
    table = ("<div class='scroll'><table><tr><th>system</th><th>family</th><th>model</th><th>realizability</th>"
             "<th>checks</th><th>motion</th></tr>" + "".join(trs) + "</table></div>")
    (out / "index.html").write_text(hp.page("liedyn report", head + table, nav=False), encoding="utf-8")


def _move_into_place(tmp, out):
    """Replace ``out`` by the finished ``tmp`` (both in the same directory, so the renames are atomic)."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        out.rename(old)
    tmp.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build_site(out, names, progress=None, compare=True, overrides=None):
    """Write every page into the directory ``out`` (which exists); return (verdicts, failures).

    ``progress``: None (a tqdm bar on a terminal only), False (none), True (always) or an object with
    ``update(text)`` (see :mod:`catalog.output.progress`)."""
    with Steps(len(names) + 2, "report", progress) as steps:
        return _build_site(out, names, steps, compare, overrides or {})


def _build_site(out, names, progress, compare, overrides):
    from ..registry import get, specs

    (out / "fig").mkdir()
    (out / "eq").mkdir()
    (out / "style.css").write_text(hp.CSS, encoding="utf-8")
    t0 = time.perf_counter()
    sp = specs()
    rows, verdicts, failures = [], [], []
    for i, name in enumerate(names):
        progress.update(f"{i + 1}/{len(names)} {name}")
        base = {"name": name, "title": sp[name].title, "family": sp[name].family}
        try:
            row, vs = entry_page(get(name, **overrides.get(name, {})), out, i)
        except Exception as exc:  # an entry that cannot run is reported as a failure
            failures.append((name, str(exc)))
            vs = [Verdict(name, "build/run", float("nan"), 0.0)]
            row = {"name": name, "error": f"{type(exc).__name__}: {exc}"}
            body = (f"<h1>{hp.escape(name)}</h1><p class='FAIL'>FAIL: {hp.escape(type(exc).__name__)}: "
                    f"{hp.escape(exc)}</p>"
                    f"<pre>{hp.escape(traceback.format_exc())}</pre>")
            (out / f"{name}.html").write_text(hp.page(f"liedyn: {name}", body), encoding="utf-8")
        rows.append({**base, **row, "verdicts": vs})
        verdicts += vs
    progress.update("relations")
    gv = relations_page(out, names)
    verdicts += gv
    progress.update("integrator comparison" if compare else "index")
    compare_page([get(n) for n in COMPARE_ENTRIES if n in names] if compare else [], out)
    n_pass = sum(v.passed for v in verdicts)
    _index(out, rows, n_pass, len(verdicts), time.perf_counter() - t0, gv)
    return verdicts, failures


def write_report(out: str | os.PathLike, names: Iterable[str] | None = None, progress=None,
                 compare: bool = True, overrides: dict | None = None) -> tuple[Path, list, list]:
    """Write the site into ``out`` (replacing what was there only once it is complete); return
    (path of index.html, list of all verdicts, failures). ``progress``: see :func:`build_site`;
    ``overrides``: {name: {parameter: value}} passed to ``catalog.get`` (e.g. fewer steps)."""
    from ..registry import specs
    from ..registry import names as all_names

    out = Path(out).resolve()
    if names is None:  # grouped by family (rigid bodies, sleighs, systems in coordinates), then by name
        sp = specs()
        names = sorted(all_names(), key=lambda n: (FAMILY_ORDER.get(sp[n].family, 3), n))
    names = list(names)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        verdicts, failures = build_site(tmp, names, progress, compare, overrides)
        tmp.chmod(0o755)
        _move_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out / "index.html", verdicts, failures

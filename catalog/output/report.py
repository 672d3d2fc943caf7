"""The report as a small static site: ``liedyn report --out DIR`` writes

* ``DIR/index.html``: one row per system (family, model, realizability, verdicts, a thumbnail);
* ``DIR/<name>.html``: one page per system: description, references, parameters, the equations drawn
  as SVG (matplotlib's mathtext, no network, no JavaScript) with their LaTeX and unicode text to copy,
  realizability, first integrals with their measured drift, figures, one verdict line per check;
* ``DIR/relations.html``: the relation graph with a verdict per edge; ``DIR/integrators.html``: the
  integrator comparison (fitted order, error, drift, work-precision);
* ``DIR/style.css``, ``DIR/fig/*.png``, ``DIR/eq/*.svg``.

Everything is written into a temporary directory beside ``DIR`` and moved into place at the end, so an
interrupted run leaves the previous report whole (never an old index.html beside a mix of figures).
"""

from __future__ import annotations

import html
import os
import shutil
import tempfile
import time
import traceback
from collections.abc import Iterable
from pathlib import Path

from . import describe
from . import plots
from .mathsvg import MathRenderError, write_svg
from .progress import Steps
from ..verify.run import Verdict, checks, drift, simulate

CSS = """body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em;color:#222;line-height:1.4}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #8ecae6;margin-top:1.6em}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:85%}
table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:middle}
.PASS{color:#1a7f37;font-weight:bold}.FAIL{color:#c62828;font-weight:bold}img{max-width:100%}
.small{font-size:85%;color:#555}.thumb{width:200px}nav a{margin-right:1em}
table.eq td{border:none;padding:2px 4px}table.eq td.l{text-align:right}table.eq td.r{text-align:left}
table.eq img{vertical-align:middle}.model img{vertical-align:middle}"""

#: entries of the integrator comparison: free (exact), semidirect product, second kind (Casimir F(m + lambda b)),
#: first kind (exact servo-sleigh solution)
COMPARE_ENTRIES = ("euler_top", "heavy_top", "flywheel_body", "servo_sleigh")
FAMILY_ORDER = {"rigid": 0, "sleigh": 1, "coordinates": 2}


def _e(x):
    return html.escape(str(x))


def _page(title, body, nav=True):
    links = ("<nav><a href='index.html'>all systems</a><a href='relations.html'>relations</a>"
             "<a href='integrators.html'>integrators</a></nav>") if nav else ""
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
            f"<link rel='stylesheet' href='style.css'></head><body>{links}\n{body}\n</body></html>\n")


def _verdicts_html(verdicts):
    if not verdicts:
        return "<p class='small'>(nothing to check)</p>"
    rows = "".join(f"<li><span class='{'PASS' if v.passed else 'FAIL'}'>{'PASS' if v.passed else 'FAIL'}</span> "
                   f"{_e(v.what)}: {_e(v.check)} = {v.value:.3e} (tolerance {v.tol:.2g}){_e(v.detail)}</li>"
                   for v in verdicts)
    return f"<ul>{rows}</ul>"


def _img(rel, alt, cls=""):
    c = f" class='{cls}'" if cls else ""
    return f"<img src='{_e(rel)}' alt='{_e(alt)}'{c}>"


def _figure(fig, out, rel):
    plots.save(fig, out / rel)
    return rel


def _math(latex, out, rel, alt):
    """An <img> of the formula drawn as SVG, or None when mathtext cannot draw it."""
    try:
        write_svg(latex, out / rel)
    except MathRenderError:
        return None
    return _img(rel, alt)


def equations_html(entry, out, name):
    """The equations drawn as SVG, aligned at the relation sign, then the LaTeX and the text to copy."""
    rows, model = describe.equation_rows(entry)
    text, latex = describe.equations(entry)
    parts = ["<h2>Equations</h2>"]
    if model:
        img = _math(model, out, f"eq/{name}_model.svg", f"model: {model}")
        mtext = describe.model_text(entry)
        parts.append(f"<p class='model'>Model: {img or '<code>' + _e(mtext) + '</code>'}</p>")
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
        parts.append("<table class='eq'>" + "".join(cells) + "</table>")
    parts.append("<p class='small'>Text:</p><pre>" + _e("\n".join(text) or "(not available)") + "</pre>")
    if latex:
        parts.append(f"<p class='small'>LaTeX (paste into a paper):</p><pre>{_e(latex)}</pre>")
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
    return (f"<h2>Realizability</h2><p>{_e(v['expr'])} = <code>{_e(v['formula'])}</code>{_e(at)}: "
            f"<span class='{cls}'>{_e(short)}</span>"
            + ("" if v["where"] == "everywhere" else " (realizable wherever it is non-zero)") + "</p>"), short


def _num(z):
    z = complex(z)
    return f"{z.real:.6g}" if abs(z.imag) <= 1e-12 * max(1.0, abs(z)) else f"{z.real:.4g}{z.imag:+.4g}i"


def _lines_html(lines):
    """The invariant lines x = s xi, v(xi) = c xi of the reduced system, with their Kovalevskaya exponents."""
    rows = []
    for L in lines:
        rho = L.kovalevskaya_exponents
        rows.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in (
            "(" + ", ".join(_num(x) for x in L.direction) + ")", _num(L.c), "yes" if L.is_real else "no",
            L.multiplicity, L.stability or "-", "-" if rho is None else ", ".join(_num(x) for x in rho))) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("direction xi", "c", "real", "multiplicity", "stability",
                                              "Kovalevskaya exponents"))
    return (f"<h2>Invariant lines of the reduced system</h2><p class='small'>{_e(lines.reason or '')}</p>"
            f"<table><tr>{head}</tr>{''.join(rows)}</table>")


def entry_page(entry, out, counter):
    """Write ``<name>.html`` and its figures; return (index row data, verdicts)."""
    name = entry.name
    parts = [f"<h1>{_e(name)}</h1>", f"<p>{_e(entry.description)}</p>",
             f"<p class='small'>model: {_e(entry.model)}; kind: {_e(entry.kind)}</p>"]
    if entry.parameters:
        parts.append("<table><tr><th>parameter</th><th>value</th></tr>" + "".join(
            f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in entry.parameters.items()) + "</table>")
    if entry.references:
        parts.append("<h2>References</h2><ul>" + "".join(f"<li>{_e(r)}</li>" for r in describe.references(entry))
                     + "</ul>")
    parts.append(equations_html(entry, out, name))
    rhtml, rshort = _realizability_html(entry)
    parts.append(rhtml)
    run = simulate(entry)
    verdicts = list(checks(entry, run))
    if run.invariants:
        rows = "".join(f"<tr><td>{_e(k)}</td><td>{run.invariants[k][0]:.12g}</td><td>{drift(run, k):.3e}</td></tr>"
                       for k in run.invariants)
        parts.append("<h2>First integrals and measured drift</h2><table><tr><th>integral</th><th>initial value</th>"
                     f"<th>relative drift ({_e(run.method)}, {run.nsteps} steps)</th></tr>{rows}</table>")
    sys_ints = [f for f in describe.integrals(entry) if f["source"] == "system"]
    if sys_ints:
        parts.append("<p class='small'>integrals listed by the system:</p><ul>" + "".join(
            f"<li>{_e(f['name'])}" + (f": <code>{_e(f['expr'])}</code>" if f.get("expr") else "") + "</li>"
            for f in sys_ints) + "</ul>")
    parts.append("<h2>Figures</h2>")
    motion = _figure(plots.trajectory_figure(entry, run), out, f"fig/{counter:02d}_{name}_motion.png")
    parts.append(f"<p>{_img(motion, f'motion of {name}')}</p>")
    fig = plots.orientation_figure(entry, run)
    if fig is not None:
        rel = _figure(fig, out, f"fig/{counter:02d}_{name}_group.png")
        parts.append(f"<p>{_img(rel, f'motion of {name} on SO(3)')}</p>")
    if entry.kind == "lie-group" and run.invariants:
        try:
            ref = simulate(entry, method="scipy:DOP853", rtol=1e-8, atol=1e-10)
            rel = _figure(plots.drift_comparison_figure(entry, [run, ref]), out, f"fig/{counter:02d}_{name}_drift.png")
            parts.append(f"<p>{_img(rel, f'invariant drift of {run.method} and DOP853')}</p>")
        except (ValueError, ArithmeticError) as exc:
            parts.append(f"<p class='small'>(no scipy comparison: {_e(exc)})</p>")
    try:
        q = describe.quadratic_system(entry)
    except (ValueError, ImportError, AttributeError, NotImplementedError):
        q = None
    if q is not None and q.p in (2, 3) and hasattr(q, "phase_portrait"):
        try:
            fig = plots.phase_portrait_figure(q, f"{name}: reduced system")
            if fig is None:
                parts.append("<p class='small'>The reduced quadratic field vanishes identically: every state is "
                             "an equilibrium, there is no phase portrait to draw.</p>")
            else:
                rel = _figure(fig, out, f"fig/{counter:02d}_{name}_phase.png")
                parts.append(f"<p>{_img(rel, f'phase portrait of {name}')}</p>")
        except Exception as exc:  # a figure that cannot be drawn is noted, it does not sink the entry
            parts.append(f"<p class='small'>(no phase portrait: {_e(type(exc).__name__)}: {_e(exc)})</p>")
    if q is not None:
        try:
            lines = q.invariant_lines()
            parts.append(_lines_html(lines))
            iv = describe.integrability_verdict(entry, lines=lines)
        except (ValueError, ArithmeticError) as exc:
            iv = None
            parts.append(f"<p class='small'>(no invariant lines or integrability verdict: {_e(exc)})</p>")
        if iv is not None:
            head = "".join(f"<th>{_e(h)}</th>" for h in iv["header"])
            body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in iv["rows"])
            parts.append("<h2>Integrability at the invariant lines</h2><p class='small'>Kovalevskaya exponents "
                         "at the Darboux points d = -xi/c: a degree is ruled out when some point has no "
                         "resonance (servo.quadratic.kovalevskaya).</p>"
                         f"<table><tr>{head}</tr>{body}</table>")
    parts.append("<h2>Verdicts</h2>" + _verdicts_html(verdicts))
    (out / f"{name}.html").write_text(_page(f"liedyn: {name}", "\n".join(parts)), encoding="utf-8")
    thumb = _figure(plots.thumbnail_figure(entry, run), out, f"fig/{counter:02d}_{name}_thumb.png")
    return {"name": name, "model": entry.model, "realizability": rshort, "thumb": thumb}, verdicts


def compare_page(entries, out):
    from ..verify.compare import compare_entry, format_summary

    parts = ["<h1>Integrator comparison</h1>",
             "<p>Final error at t_end over a step-halving ladder (fixed-step methods) or a tolerance ladder "
             "(adaptive methods), the fitted order, the largest relative drift of the claimed first integrals, and "
             "each method's time to reach a final error of 1e-8 as a ratio to scipy's DOP853.</p>"]
    for e in entries:
        rows, summary, reference = compare_entry(e)
        parts.append(f"<h2>{_e(e.name)}</h2><pre>{_e(format_summary(summary, reference))}</pre>")
        rel = _figure(plots.compare_figure(rows, f"{e.name}: work-precision"), out, f"fig/compare_{e.name}.png")
        parts.append(f"<p>{_img(rel, f'work-precision on {e.name}')}</p>")
    if not entries:
        parts.append("<p class='small'>(none of the comparison entries is in this report)</p>")
    (out / "integrators.html").write_text(_page("liedyn: integrators", "\n".join(parts)), encoding="utf-8")


def relations_page(out, names=None):
    """The relation graph figure and a verdict per edge (only edges between ``names`` if given)."""
    from ..graph import graph
    from ..verify.relations import check_edge

    G = graph()
    if names is not None:
        G = G.subgraph(names).copy()
    rel = _figure(plots.graph_figure(G), out, "fig/graph.png")
    rows, verdicts = [], []
    for u, v, d in sorted(G.edges(data=True), key=lambda e: (e[0], e[1])):
        try:
            verdict = check_edge(u, v, d)
        except Exception as exc:  # a failing relation check is a FAIL in the report, not a crash
            verdict = Verdict(f"{u} -> {v}", "relation", float("nan"), 0.0, f" ({exc})")
        verdicts.append(verdict)
        status = "PASS" if verdict.passed else "FAIL"
        rows.append(f"<tr><td><a href='{_e(u)}.html'>{_e(u)}</a></td><td>{_e(d['relation'])}</td>"
                    f"<td><a href='{_e(v)}.html'>{_e(v)}</a></td><td>{_e(d['note'])}</td>"
                    f"<td><span class='{status}'>{status}</span> {verdict.value:.3e} (tol {verdict.tol:.2g}) "
                    f"{_e(verdict.detail)}</td></tr>")
    table = ("<table><tr><th>from</th><th>relation</th><th>to</th><th>how</th><th>check</th></tr>"
             + "".join(rows) + "</table>") if rows else "<p class='small'>(no relation between these systems)</p>"
    body = ("<h1>Relations between the systems</h1><p>An arrow u &rarr; v reads &ldquo;u is a &lt;relation&gt; "
            "v&rdquo;; each is checked numerically.</p>" + f"<p>{_img(rel, 'relation graph')}</p>" + table)
    (out / "relations.html").write_text(_page("liedyn: relations", body), encoding="utf-8")
    return verdicts


def _index(out, rows, n_pass, n_checks, seconds, relation_verdicts):
    head = ("<h1>liedyn: catalog report</h1>"
            f"<p>{len(rows)} systems, {n_pass} of {n_checks} checks pass; generated in {seconds:.0f} s. "
            f"Relations: {sum(v.passed for v in relation_verdicts)} of {len(relation_verdicts)} pass "
            "(<a href='relations.html'>graph</a>); <a href='integrators.html'>integrator comparison</a>.</p>")
    trs = []
    for r in rows:
        vs = r["verdicts"]
        nf = sum(not v.passed for v in vs)
        status = "FAIL" if nf or r.get("error") else "PASS"
        thumb = _img(r["thumb"], f"motion of {r['name']}", "thumb") if r.get("thumb") else _e(r.get("error", ""))
        trs.append(f"<tr><td><a href='{_e(r['name'])}.html'>{_e(r['name'])}</a><br><span class='small'>"
                   f"{_e(r['title'])}</span></td><td>{_e(r['family'])}</td><td>{_e(r.get('model', ''))}</td>"
                   f"<td>{_e(r.get('realizability', ''))}</td><td><span class='{status}'>{status}</span> "
                   f"{len(vs) - nf}/{len(vs)}</td><td>{thumb}</td></tr>")
    table = ("<table><tr><th>system</th><th>family</th><th>model</th><th>realizability</th><th>checks</th>"
             "<th>motion</th></tr>" + "".join(trs) + "</table>")
    (out / "index.html").write_text(_page("liedyn report", head + table, nav=False), encoding="utf-8")


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
    (out / "style.css").write_text(CSS, encoding="utf-8")
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
            body = (f"<h1>{_e(name)}</h1><p class='FAIL'>FAIL: {_e(type(exc).__name__)}: {_e(exc)}</p>"
                    f"<pre>{_e(traceback.format_exc())}</pre>")
            (out / f"{name}.html").write_text(_page(f"liedyn: {name}", body), encoding="utf-8")
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

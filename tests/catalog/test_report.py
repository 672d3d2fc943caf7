"""The report as a static site: pages, links, equations drawn as SVG, figures a reader can trust, the
atomic replacement of an old report, and a real headless browser (Chromium, when installed) loading
every page without a console error or a broken image, with a screenshot written next to the report.

Kept fast: the site is built once for two entries (the full ``make demo`` builds all of them).
"""

import html
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import catalog  # noqa: E402
from catalog.output import describe, plots  # noqa: E402
from catalog.output.mathsvg import MathRenderError, svg_of  # noqa: E402
from catalog.output.report import write_report  # noqa: E402

from ..servo.lie.test_symbolic_print import BEGHIN, SLEIGH  # noqa: E402
from .headless import CHROMIUM, Browser, svg_min_font_and_width  # noqa: E402

NAMES = ["beghin_body", "servo_sleigh", "one_sided_sleigh", "heavy_top"]
#: fewer steps than the entries' defaults keep the test fast (the equations do not depend on them); the
#: one-sided sleigh keeps its t_end = 10 so that its run includes the join at t = pi/|w0| = 4.49
QUICK = {n: {"steps": 200, "t_end": 4.0} for n in NAMES + ["chaplygin_sleigh_on_blade"]}
QUICK["one_sided_sleigh"] = {"steps": 200}

# Beghin body, written out by hand in tests/servo/lie/test_symbolic_print.py (I w' = I w x w + lambda n)
BEGHIN_ROW_2 = (r"\frac{1}{5} \dot{\omega}_{1} + 2 \dot{\omega}_{2} + \frac{3}{10} \dot{\omega}_{3} &= "
                r"\frac{2}{5} \omega_{1}^{2} + \frac{3}{10} \omega_{1} \omega_{2} - 2 \omega_{1} \omega_{3} "
                r"- \frac{1}{5} \omega_{2} \omega_{3} - \frac{2}{5} \omega_{3}^{2} + \frac{3}{5} \lambda")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    out = root / "report"
    path, verdicts, failures = write_report(out, names=NAMES, compare=False, overrides=QUICK)
    return out, path, verdicts, failures


def _refs(text):
    return re.findall(r"""(?:src|href)=['"]([^'"#]+)['"]""", text)


def test_pages_and_links(site):
    out, path, verdicts, failures = site
    assert path == out / "index.html" and not failures
    pages = sorted(p.name for p in out.glob("*.html"))
    assert not list(out.glob("fig/*.png"))                       # every figure is SVG
    assert pages == sorted(["index.html", "relations.html", "integrators.html"] + [f"{n}.html" for n in NAMES])
    for page in out.glob("*.html"):
        text = page.read_text()
        assert "<script" not in text.lower(), page
        for r in _refs(text):
            assert not re.match(r"[a-z]+:", r), f"{page.name}: network reference {r}"
            assert (out / r).is_file(), f"{page.name}: missing {r}"
    # no temporary directory left beside the report
    assert [p.name for p in out.parent.iterdir()] == ["report"]


def test_index_has_one_row_per_system(site):
    out = site[0]
    text = (out / "index.html").read_text()
    rows = re.findall(r"<tr><td><a href='([a-z_]+)\.html'>", text)
    assert rows == NAMES
    # servo-sleigh: (I^-1 a, b) = b_v = 1 with I = 1 and a = e_v -> realizable; 3 checks (integral, exact, constraint)
    row = text[text.index("href='servo_sleigh.html'"):]
    row = row[:row.index("</tr>")]
    assert "<td>sleigh</td><td>servo1</td><td>realizable</td>" in row
    assert re.search(r"PASS</span> (\d+)/\1", row)
    # ... and says against what: the exact solution u(t), the integral gamma, the residual (a, w)
    assert "against: 1 conserved quantity, 1 exact solution, 1 residual" in row
    # Beghin's body is checked against an independent reference, not only its own constraint
    row = text[text.index("href='beghin_body.html'"):]
    assert "1 independent reference" in row[:row.index("</tr>")]
    # every thumbnail links to its page
    thumbs = re.findall(r"<a href='([a-z_]+)\.html'><img src='fig/\d+_([a-z_]+)_thumb\.svg'", text)
    assert [a for a, b in thumbs] == NAMES and all(a == b for a, b in thumbs)


def test_index_says_where_the_report_comes_from(site):
    import numpy
    import scipy
    import sympy

    text = (site[0] / "index.html").read_text()
    prov = dict(re.findall(r"<tr><th>([^<]+)</th><td>([^<]*)</td></tr>", text))
    assert prov["numpy"] == numpy.__version__ and prov["scipy"] == scipy.__version__
    assert prov["sympy"] == sympy.__version__
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", prov["date"])
    assert re.match(r"[0-9a-f]{40}", prov["commit"]) or prov["commit"] == "unknown"
    assert prov["liedyn"]


def test_verdict_box_comes_first_and_says_against_what(site):
    text = (site[0] / "beghin_body.html").read_text()
    box = text[text.index("<div class='verdict"):]
    box = box[:box.index("margin = tolerance / value")]
    assert text.index("<div class='verdict") < text.index("<h2>Equations")     # at the top of the page
    rows = re.findall(r"<tr><td><span class='(PASS|FAIL)'>\1</span></td><td>([^<]+)</td><td>([^<]+)</td>"
                      r"<td><span class='num'>([^<]+)</span></td><td>([^<]+)</td><td>([^<]+)</td></tr>", box)
    assert {r[1] for r in rows} == {"residual", "independent reference"}
    for status, against, check, value, tol, margin in rows:
        v, t = float(value), float(tol)
        assert (status == "PASS") == (v <= t)
        assert margin.endswith("x") and float(margin[:-1]) == pytest.approx(t / v, rel=0.01)
    # the system's Casimir printed as a formula, never in Python syntax
    fly = (site[0] / "heavy_top.html").read_text()
    assert "**" not in fly and "casimir:" not in fly


def test_beghin_page_shows_the_equations(site):
    out = site[0]
    text = (out / "beghin_body.html").read_text()
    assert html.escape(BEGHIN_ROW_2) in text                     # the LaTeX to paste, in full
    assert html.escape(BEGHIN) in text                           # all of it, as written by hand
    assert html.escape(SLEIGH) in (out / "servo_sleigh.html").read_text()
    assert "Derivative" not in text and "0.333" not in text
    eq_imgs = re.findall(r"<img src='(eq/beghin_body_\d+[lr]\.svg)'", text)
    assert len(eq_imgs) == 8                                     # three equations and the constraint, both sides
    for rel in eq_imgs:
        svg = (out / rel).read_text()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "<path" in svg
    assert "<details" not in text                                # nothing a reader has to unfold


def test_interrupted_run_keeps_the_old_report(tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "index.html").write_text("old index")
    (out / "stale.png").write_text("old figure")

    class Interrupt(Exception):
        pass

    class Progress:
        def __init__(self):
            self.calls = 0

        def update(self, what):
            self.calls += 1
            if self.calls == 1:        # the new site has its style sheet and folders, no page yet
                raise Interrupt(what)

    with pytest.raises(Interrupt):
        write_report(out, names=["servo_sleigh", "chaplygin_sleigh_on_blade"], progress=Progress(), compare=False,
                     overrides=QUICK)
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "stale.png"]
    assert (out / "index.html").read_text() == "old index"
    assert [p.name for p in tmp_path.iterdir()] == ["report"]    # the half-written site was removed


def test_talamucci_is_realizable_at_its_initial_state():
    # nonholonomic model of x1' y2' - x2' y1' = 0: det (A^-1 dphi/dq', dphi/dq') = |dphi/dq'|^2 with A = 1,
    # dphi/dq' = (y2', -y1', -x2', x1') in (x1, y1, x2, y2): at qd0 = (1, 0.5, 0.4, 0.2) this is
    # 0.2^2 + 0.4^2 + 0.5^2 + 1 = 1.45 (whatever the ordering, the sum of the squares of qd0)
    e = catalog.get("talamucci_two_points")
    v = describe.realizability_verdict(e)
    qd0 = np.asarray(e.initial_state["qd0"])
    assert v["where"] == "at the initial state" and v["realizable"] is True
    assert v["value"] == pytest.approx(float(qd0 @ qd0), rel=1e-12)
    assert "realizable there" in describe.realizability_line(e)


def test_blade_sleigh_has_no_empty_phase_portrait():
    # centre of mass on the blade: m u' = 0 (v = 0) and I w' = 0, the reduced field is identically zero
    q = describe.quadratic_system(catalog.get("chaplygin_sleigh_on_blade"))
    assert np.all(np.asarray(q.Q) == 0)
    assert plots.phase_portrait_figure(q) is None


def test_drift_plot_draws_exact_zero_on_the_roundoff_floor():
    from integrators import IntegrationResult

    t = np.linspace(0, 1, 5)
    run = IntegrationResult(t=t, y=np.zeros((5, 1)), labels=("y",), invariants={"F": np.full(5, 3.0)})  # exact
    fig, ax = plt.subplots()
    plots.drift_panel(ax, run)
    line = [ln for ln in ax.get_lines() if ln.get_label() == "F"][0]
    assert np.all(line.get_ydata() == np.finfo(float).eps)
    assert any("round-off floor" in ln.get_label() for ln in ax.get_lines())
    assert ax.get_ylabel() and ax.get_xlabel().startswith("time")
    plt.close(fig)


def test_drift_panel_without_anything_to_track_says_so():
    from integrators import IntegrationResult

    run = IntegrationResult(t=np.linspace(0, 1, 3), y=np.zeros((3, 1)), labels=("y",))
    fig, ax = plt.subplots()
    plots.drift_panel(ax, run)
    assert not ax.get_lines() and not ax.axison and "nothing" not in ax.texts[0].get_text()
    assert ax.texts[0].get_text().startswith("no first integral")
    plt.close(fig)


def test_motion_plot_has_axis_labels():
    e = catalog.get("servo_sleigh", steps=50, t_end=1.0)
    fig = plots.trajectory_figure(e, catalog.simulate(e))
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel(), ax.get_title()
    assert "[length]" in fig.axes[2].get_xlabel()
    plt.close(fig)


def test_heavy_top_momenta_and_gamma_on_their_own_axes():
    e = catalog.get("heavy_top", steps=50, t_end=1.0)
    fig = plots.motion_figure(e, catalog.simulate(e))
    (a, b) = fig.axes
    assert a.get_ylabel().startswith("momenta M") and b.get_ylabel().startswith("vertical Gamma")
    assert [ln.get_label() for ln in a.get_lines()] == ["M1", "M2", "M3"]
    assert [ln.get_label() for ln in b.get_lines()] == ["G1", "G2", "G3"]
    plt.close(fig)


def test_no_empty_panel_when_nothing_is_tracked():
    # the skate with friction has no integral, no exact solution and no residual: no drift panel at all
    e = catalog.get("skate_friction", steps=30, t_end=1.0)
    run = catalog.simulate(e)
    assert not plots.has_drift(run) and plots.drift_figure(run) is None
    fig = plots.trajectory_figure(e, run)
    assert len(fig.axes) == 2 and all(ax.axison and ax.get_lines() for ax in fig.axes)
    plt.close(fig)


def test_methods_have_their_own_colour_and_marker():
    from catalog.verify.compare import DEFAULT_METHODS
    import integrators

    styles = [plots.method_style(m) for m in DEFAULT_METHODS]
    assert all(m in integrators.METHODS for m in DEFAULT_METHODS)
    assert len({s["color"] for s in styles}) == len(DEFAULT_METHODS)
    assert len({s["marker"] for s in styles}) == len(DEFAULT_METHODS)
    assert plots.method_style("rk4")["color"] != plots.method_style("scipy:DOP853")["color"]
    assert "#ffff00" not in {s["color"].lower() for s in styles}
    assert plots.method_style("rk4") == plots.method_style("rk4")                 # the same on every page


def test_servo_sleigh_portrait_has_one_entry_per_kind():
    # v = u w (alpha, beta): parallel everywhere; u = 0 and w = 0 are both lines of equilibria
    q = describe.quadratic_system(catalog.get("servo_sleigh"))
    fig = plots.phase_portrait_figure(q, "servo")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert sum(x.startswith("line of equilibria") for x in labels) == 1 and len(labels) == len(set(labels))
    assert any("parallel" in x for x in labels)
    assert not [c for c in fig.axes[0].collections if c.get_cmap().name == "viridis" and c.get_array() is not None]
    plt.close(fig)


def test_sleigh_path_marks_leave_and_join_where_they_happen():
    # Kozlov's one-sided sleigh from v = 0, u0 > 0, w0 < 0 leaves at once and joins after half a turn,
    # t = pi/|w0| (the entry's claim, checked against the run in catalog.verify)
    e = catalog.get("one_sided_sleigh", steps=200)
    run = catalog.simulate(e)
    from catalog.verify.run import planar_pose

    fig = plots.path_figure(e, run, planar_pose(run))
    ax = fig.axes[0]
    marks = {ln.get_label().split()[0]: ln.get_xydata()[0] for ln in ax.get_lines() if "constraint" in ln.get_label()}
    assert set(marks) == {"leaves", "joins"}
    t_join = np.pi / abs(e.parameters["w0"])
    path = run.outputs["path"]
    expect = [np.interp(t_join, run.t, path[:, 0]), np.interp(t_join, run.t, path[:, 1])]
    assert np.allclose(marks["joins"], expect, atol=1e-6)
    assert np.allclose(marks["leaves"], path[0])
    # the blade segments lie along the heading theta at their instants
    segs = [c for c in ax.collections if c.get_label().startswith("blade")][0].get_segments()
    d = segs[0][1] - segs[0][0]
    assert abs(np.arctan2(d[1], d[0]) - run.y[0, 2]) < 1e-9
    plt.close(fig)


def test_talamucci_draws_both_points():
    e = catalog.get("talamucci_two_points", steps=40)
    run = catalog.simulate(e)
    fig = plots.path_figure(e, run)
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    assert np.array_equal(lines["point 1 (x1, y1)"].get_xydata(), run.y[:, 0:2])
    assert np.array_equal(lines["point 2 (x2, y2)"].get_xydata(), run.y[:, 2:4])
    plt.close(fig)


def test_tumbling_body_animation_follows_the_attitude():
    import xml.etree.ElementTree as ET

    from catalog.output import animation
    from catalog.verify.run import orientation

    e = catalog.get("beghin_body", steps=60, t_end=2.0)
    run = catalog.simulate(e)
    R = orientation(run)
    svg = animation.tumbling_svg(R, run.t, e.extras["inertia"], w=run.outputs["w"], a=e.extras["a"],
                                 b=e.extras["b"], title="t", frames=20)
    root = ET.fromstring(svg.split("\n", 1)[1])
    assert "script" not in svg.lower() and "http" not in svg.replace("http://www.w3.org/2000/svg", "")
    paths = {p.find("{http://www.w3.org/2000/svg}title").text: p for p in root.iter("{http://www.w3.org/2000/svg}path")}
    assert {"constraint axis a (in the body)", "control axis b (in the body)", "body axis R e1"} <= set(paths)
    anim = paths["body axis R e1"].find("{http://www.w3.org/2000/svg}animate")
    frames = anim.get("values").split(";")
    assert len(frames) == 20 and anim.get("repeatCount") == "indefinite"
    # the first frame's e1 tip is R(0) e1 (length 0.8) seen from azimuth 35, elevation 20 (written out here)
    az, el = np.radians(35), np.radians(20)
    right = np.array([-np.sin(az), np.cos(az), 0])
    up = np.array([-np.sin(el) * np.cos(az), -np.sin(el) * np.sin(az), np.cos(el)])
    tip = R[0] @ np.array([0.8, 0, 0])
    x, y = map(float, frames[0].split("L")[1].split(","))
    assert x == pytest.approx(210 + 0.42 * 420 * right @ tip, abs=0.06)
    assert y == pytest.approx(220 - 0.42 * 420 * up @ tip, abs=0.06)
    last = frames[-1].split("L")[1].split(",")
    tip = R[-1] @ np.array([0.8, 0, 0])
    assert float(last[0]) == pytest.approx(210 + 0.42 * 420 * right @ tip, abs=0.06)
    with pytest.raises(ValueError, match="at least two"):
        animation.tumbling_svg(R[:1], run.t[:1], np.eye(3))


def test_relation_graph_is_deterministic_and_readable():
    G = catalog.graph()
    pos1, blocks = plots.graph_layout(G)
    pos2, _ = plots.graph_layout(G)
    assert all(np.array_equal(pos1[n], pos2[n]) for n in G)
    # families never mixed: the rectangles around each family's nodes are disjoint; the blocks go in bands
    # no wider than max_width, so the figure fits a page column (<= 10.5 in: 8.5 pt labels at >= 8 px in 730 px)
    fams = sorted({G.nodes[n]["family"] for n in G})
    rect = {f: np.array([pos1[n] for n in G if G.nodes[n]["family"] == f]) for f in fams}
    for i, f in enumerate(fams):
        for g in fams[i + 1:]:
            (a, b), (c, d) = (rect[f].min(0), rect[f].max(0)), (rect[g].min(0), rect[g].max(0))
            assert (b < c).any() or (d < a).any(), (f, g)
    assert max(p[0] for p in pos1.values()) - min(p[0] for p in pos1.values()) <= 14.0
    assert len({round(y, 6) for *_, y in blocks}) == 2               # two bands for the four families
    # no two texts (node boxes, edge labels, family titles) overlap on the drawn figure
    fig = plots.graph_figure(G)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    texts = [t for t in fig.axes[0].texts if t.get_text()]      # (the arrows are empty annotations)
    boxes = [t.get_window_extent(r) for t in texts]
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not boxes[i].overlaps(boxes[j]), (texts[i].get_text(), texts[j].get_text())
    assert fig.get_size_inches()[0] <= 10.5
    plt.close(fig)


def test_mathtext_refuses_what_it_cannot_draw():
    assert "<svg" in svg_of(r"\frac{1}{5} \dot{\omega}_{1}")
    with pytest.raises(MathRenderError, match="cannot draw"):
        svg_of(r"\begin{cases} 1 & x > 0 \end{cases}")
    with pytest.raises(MathRenderError, match="empty"):
        svg_of("  ")


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (CI installs it: .ci/run)")
def test_every_page_loads_in_a_headless_browser(site):
    """As a reader at 100 %: every page loads without a console error or a broken image, nothing is wider
    than the window, and every figure's text is drawn at 8 px or more (font size in the SVG times the
    scale at which the page draws it)."""
    out = site[0]
    shots = out.parent / "screenshots"
    shots.mkdir(exist_ok=True)
    measured = 0
    with Browser() as b:
        for page in sorted(out.glob("*.html")):
            problems = b.visit(page.as_uri(), screenshot=shots / f"{page.stem}.png")
            assert problems == [], (page.name, problems)
            png = (shots / f"{page.stem}.png").read_bytes()
            assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
            assert b.wide_elements() == [], page.name
            for img in b.images():
                if not img["src"].startswith("fig/"):
                    continue
                assert img["src"].endswith(".svg"), img["src"]            # figures are vector graphics
                font, vbw = svg_min_font_and_width(out / img["src"])
                if font is None:                                          # thumbnails carry no text
                    continue
                px = font * img["width"] / vbw
                assert px >= 8.0, (page.name, img["src"], round(px, 2))
                measured += 1
        assert measured >= 10
        # the checker sees an element wider than the page when there is one
        wide = out / "wide.html"
        wide.write_text("<!DOCTYPE html><html><body><div style='width:3000px'>x</div></body></html>")
        b.visit(wide.as_uri())
        assert b.wide_elements()
        wide.unlink()
        # the checker sees a broken image when there is one
        (out / "eq" / "beghin_body_0l.svg").unlink()
        problems = b.visit((out / "beghin_body.html").as_uri())
        assert any("broken image eq/beghin_body_0l.svg" in p for p in problems)


def test_descriptions_name_the_axes_as_the_equations_do():
    # the model prints (a, w) = 0 and lambda b: the descriptions say a and b (the parameters l, n in brackets)
    for name in ("beghin_body", "suslov"):
        e = catalog.get(name)
        assert "(a, " in describe.model_text(e) or "a" in describe.model_text(e)
        assert "axis a" in e.description and "axis l" not in e.description and "axis n" not in e.description
    assert "(I^-1 a, b)" in catalog.get("beghin_body").description
    # the two-axis bodies print (a_i, w) = 0 and sum lambda_i b_i: their descriptions say a1, a2 (and b1, b2)
    for name in ("two_axis_beghin_body", "two_axis_vakonomic_body"):
        e = catalog.get(name)
        assert "(a_i, ω) = 0" in describe.model_text(e)
        d = e.description
        assert "(a1, w) = (a2, w) = 0" in d and "nu = a1 x a2" in d and "(w, l1)" not in d and "l1 x l2" not in d
    assert "lambda1 b1 + lambda2 b2" in catalog.get("two_axis_beghin_body").description


def test_rate_figure_draws_every_n_on_log_axes():
    from catalog.verify.relations import _rate

    Ns = [25.0, 50.0, 100.0, 200.0]
    v = _rate([2.0 / N for N in Ns], Ns, "a -> b", "")
    fig = plots.rate_figure([v])
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    data = [ln for ln in ax.get_lines() if ln.get_label().startswith("a -> b")][0]
    assert np.allclose(data.get_xdata(), Ns) and np.allclose(data.get_ydata(), [2.0 / N for N in Ns])
    plt.close(fig)
    assert plots.rate_figure([]) is None

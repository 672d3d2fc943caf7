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
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import catalog  # noqa: E402
from catalog.output import describe, plots  # noqa: E402
from catalog.output.mathsvg import MathRenderError, svg_of  # noqa: E402
from catalog.output.report import write_report  # noqa: E402

from ..servo.lie.test_symbolic_print import BEGHIN, SLEIGH  # noqa: E402
from .headless import CHROMIUM, Browser  # noqa: E402

NAMES = ["beghin_body", "servo_sleigh"]
#: fewer steps than the entries' defaults keep the test fast (the equations do not depend on them)
QUICK = {n: {"steps": 200, "t_end": 4.0} for n in NAMES + ["chaplygin_sleigh_on_blade"]}

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
    fig, ax = plots.plt.subplots()
    plots._drift_panel(ax, run)
    line = [ln for ln in ax.get_lines() if ln.get_label() == "F"][0]
    assert np.all(line.get_ydata() == np.finfo(float).eps)
    assert any("round-off floor" in ln.get_label() for ln in ax.get_lines())
    assert ax.get_ylabel() and ax.get_xlabel().startswith("time")
    plots.plt.close(fig)


def test_drift_panel_without_anything_to_track_says_so():
    from integrators import IntegrationResult

    run = IntegrationResult(t=np.linspace(0, 1, 3), y=np.zeros((3, 1)), labels=("y",))
    fig, ax = plots.plt.subplots()
    plots._drift_panel(ax, run)
    assert not ax.get_lines() and not ax.axison and "nothing" not in ax.texts[0].get_text()
    assert ax.texts[0].get_text().startswith("no first integral")
    plots.plt.close(fig)


def test_motion_plot_has_axis_labels():
    e = catalog.get("servo_sleigh", steps=50, t_end=1.0)
    fig = plots.trajectory_figure(e, catalog.simulate(e))
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel(), ax.get_title()
    assert "[length]" in fig.axes[2].get_xlabel()
    plots.plt.close(fig)


def test_relation_graph_is_deterministic_and_readable():
    G = catalog.graph()
    pos1, blocks = plots.graph_layout(G)
    pos2, _ = plots.graph_layout(G)
    assert all(np.array_equal(pos1[n], pos2[n]) for n in G)
    # families side by side, never mixed: every rigid x < every sleigh x < every coordinates x
    xs = {f: [pos1[n][0] for n in G if G.nodes[n]["family"] == f] for f in ("rigid", "sleigh", "coordinates")}
    assert max(xs["rigid"]) < min(xs["sleigh"]) and max(xs["sleigh"]) < min(xs["coordinates"])
    # no two texts (node boxes, edge labels, family titles) overlap on the drawn figure
    fig = plots.graph_figure(G)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    texts = [t for t in fig.axes[0].texts if t.get_text()]      # (the arrows are empty annotations)
    boxes = [t.get_window_extent(r) for t in texts]
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not boxes[i].overlaps(boxes[j]), (texts[i].get_text(), texts[j].get_text())
    plots.plt.close(fig)


def test_mathtext_refuses_what_it_cannot_draw():
    assert "<svg" in svg_of(r"\frac{1}{5} \dot{\omega}_{1}")
    with pytest.raises(MathRenderError, match="cannot draw"):
        svg_of(r"\begin{cases} 1 & x > 0 \end{cases}")
    with pytest.raises(MathRenderError, match="empty"):
        svg_of("  ")


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (CI installs it: .ci/run)")
def test_every_page_loads_in_a_headless_browser(site):
    out = site[0]
    shots = out.parent / "screenshots"
    shots.mkdir(exist_ok=True)
    with Browser() as b:
        for page in sorted(out.glob("*.html")):
            problems = b.visit(page.as_uri(), screenshot=shots / f"{page.stem}.png")
            assert problems == [], (page.name, problems)
            png = (shots / f"{page.stem}.png").read_bytes()
            assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
        # the checker sees a broken image when there is one
        (out / "eq" / "beghin_body_0l.svg").unlink()
        problems = b.visit((out / "beghin_body.html").as_uri())
        assert any("broken image eq/beghin_body_0l.svg" in p for p in problems)

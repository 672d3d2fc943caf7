"""A tour of the catalog
=====================

A tour of the catalog: list the named systems, simulate one and check its claims, read a user's own
system from TOML, look at the invariant lines of a reduced system, and draw the relation graph.

Run:  .venv/bin/python examples/catalog_tour.py     (figures in examples/output/)
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import catalog  # noqa: E402
from catalog.output import plots  # noqa: E402
from catalog.cli.lines import lines_of  # noqa: E402

OUT = Path(__file__).parent / "output"
OUT.mkdir(exist_ok=True)
ROOT = Path(__file__).resolve().parents[1]

print("entries:", ", ".join(catalog.names()))

# 1. the Chaplygin servo-sleigh: u' = alpha u w, w' = beta u w, u = gamma / (beta + C e^(gamma t))
e = catalog.get("servo_sleigh", a_u=0.3, t_end=15.0, steps=1500)
run = catalog.simulate(e)
print(f"\n{e.name} ({run.method}, {run.nsteps} steps, {run.wall_time:.2f} s):")
for v in catalog.checks(e, run):
    print("  " + v.line())
plots.save(plots.trajectory_figure(e, run), OUT / "tour_servo_sleigh.png")

# 2. a user's system from TOML: rigid body with a flywheel (servo-constraint of the second kind)
mine = catalog.from_file(ROOT / "catalog" / "entries" / "data" / "flywheel.toml")
r2 = catalog.simulate(mine)
print(f"\n{mine.name} from TOML: " + "; ".join(v.line() for v in catalog.checks(mine, r2)))

# 3. invariant lines of its reduced homogeneous quadratic system (p = 3: w1, w2, lambda)
q, lines = lines_of(mine)
print(f"\ninvariant lines: total multiplicity {lines.total_multiplicity} (bound {2 ** q.p - 1}), "
      f"real {lines.real_count}, certified {lines.certified}")
for L in lines.real:
    print(f"  c = {complex(L.c).real:+.4f}  stability {L.stability}")

# 4. the relation graph and one relation check
G = catalog.graph()
print(f"\nrelation graph: {G.number_of_nodes()} entries, {G.number_of_edges()} labelled edges")
from catalog.verify.relations import check_edge  # noqa: E402

print("  " + check_edge("suslov", "beghin_body", G.edges["suslov", "beghin_body"]).line())
plots.save(plots.graph_figure(G), OUT / "tour_graph.png")
print(f"\nfigures in {OUT}")

"""The relation graph between catalog entries (a networkx DiGraph with labelled edges).

An edge u -> v carries ``relation`` (one of :data:`RELATIONS`), a ``note`` saying which parameter
choice or limit realises it, and ``check``: the name of a function in :mod:`catalog.verify.relations` that
verifies it numerically and returns ``(value, tolerance, what)``. Reading: u is a *special case* of v;
u is *isomorphic* to v; u tends to v in the *limit N -> infinity*; u is the *one-sided version of* v.
"""

from __future__ import annotations

import networkx as nx

from .registry import specs

RELATIONS = ("special case", "isomorphic", "limit N -> infinity", "one-sided version of")

#: (u, v, relation, note, check)
EDGES = [
    ("euler_top", "heavy_top", "special case", "mgl = 0: M' = M x Omega decouples from Gamma", "euler_in_heavy_top"),
    ("chaplygin_sleigh_on_blade", "chaplygin_sleigh", "special case", "ell = 0: centre of mass on the blade",
     "on_blade_is_ell_zero"),
    ("suslov", "beghin_body", "special case", "n = l: the control torque along the constraint axis",
     "suslov_is_beghin"),
    ("vakonomic_body", "flywheel_body", "special case", "b = a: the servo-constraint of the second kind "
     "becomes vakonomic", "vakonomic_is_flywheel"),
    ("flywheel_body", "euler_top", "isomorphic", "b2 = 0: a linear change of variables (w1, w2, lambda) -> m "
     "gives Euler's equations with moments J", "flywheel_is_euler"),
    ("chaplygin_sleigh_on_blade", "servo_sleigh", "special case", "control force along the constraint "
     "(a_u = c_w = 0): nonholonomic, u and w constant", "on_blade_is_servo"),
    ("sleigh_friction", "chaplygin_sleigh", "limit N -> infinity", "viscous friction -N v across the blade "
     "(Theorem 1 of the slides): error O(1/N)", "friction_to_sleigh"),
    ("one_sided_sleigh", "chaplygin_sleigh_on_blade", "one-sided version of", "v >= 0 instead of v = 0: "
     "on the constraint both coincide", "one_sided_on_constraint"),
    ("sleigh_one_sided_friction", "one_sided_sleigh", "limit N -> infinity", "friction -N v only where v < 0 "
     "(Kozlov 2019, section 4; Salnikova et al. 2023)", "one_sided_friction_to_one_sided"),
    ("skate_added_mass", "skate_vakonomic", "limit N -> infinity", "added mass N (a, q')^2 / 2 "
     "(Kozlov's Theorem 2)", "added_mass_to_vakonomic"),
    ("skate_friction", "skate_inclined", "limit N -> infinity", "friction -N (a, q') a (Kozlov's Theorem 1)",
     "friction_to_skate"),
]


def graph() -> nx.DiGraph:
    """The DiGraph of relations: nodes are entry names (attributes ``title``, ``family``), edges carry
    ``relation``, ``note``, ``check``."""
    sp = specs()
    G = nx.DiGraph()
    for name, s in sp.items():
        G.add_node(name, title=s.title, family=s.family)
    for u, v, rel, note, check in EDGES:
        if rel not in RELATIONS:
            raise ValueError(f"edge {u} -> {v}: unknown relation {rel!r}")
        if u in G and v in G:
            G.add_edge(u, v, relation=rel, note=note, check=check)
    return G

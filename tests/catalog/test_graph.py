"""The relation graph: labelled edges between existing entries, and each relation checked numerically."""

import pytest

import catalog
from catalog.graph import EDGES, RELATIONS
from catalog.verify.relations import check_edge


def test_graph_nodes_and_labels():
    G = catalog.graph()
    assert set(G.nodes) == set(catalog.names())
    for u, v, d in G.edges(data=True):
        assert d["relation"] in RELATIONS and d["note"] and d["check"]
    assert {d["relation"] for _, _, d in G.edges(data=True)} >= {"special case", "isomorphic"}


def test_every_edge_has_a_check_function():
    import catalog.verify.relations as rel

    for u, v, _, _, check in EDGES:
        assert callable(getattr(rel, check, None)), f"{u} -> {v}: missing check {check}"


@pytest.mark.parametrize("u, v", [(u, v) for u, v in catalog.graph().edges])
def test_edge_relation_holds(u, v):
    G = catalog.graph()
    verdict = check_edge(u, v, G.edges[u, v])
    assert verdict.passed, verdict.line()


def test_a_wrong_relation_fails():
    """flywheel_is_euler with b2 != 0 is not an Euler top: the same check must then fail."""
    import numpy as np

    import catalog.verify.relations as rel
    from catalog.registry import defaults

    orig = defaults("flywheel_body")["b2"]
    assert orig != 0
    from catalog import registry

    spec = registry._REGISTRY["flywheel_body"]
    saved = dict(spec.defaults)
    try:
        builder = spec.builder
        spec.builder = lambda **p: builder(**{**p, "b2": 0.7})
        v = rel.flywheel_is_euler()
    finally:
        spec.builder = builder
        spec.defaults = saved
    assert not v.passed and np.isfinite(v.value)

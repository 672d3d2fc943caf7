"""Every Runge-Kutta tableau of the registry, checked as data (read from METHODS and TABLEAUX, so a new
method is checked by adding it): the row-sum condition, Butcher's order conditions up to the declared
order (and that the next order fails: the order is not understated), error weights summing to 0 and an
embedded solution of the declared error order, a continuous extension that is the step at theta = 1 and
has its declared order; the creation checks of Tableau refuse broken coefficients; every Runge-Kutta
method exposes ``method.tableau`` with arrays A, b, c.

Independent reference: the order conditions are b . Phi(t) = 1/gamma(t) over the rooted trees, whose
counts 1, 1, 2, 4, 9, 20, 48, 115 (OEIS A000081) and gamma of a few trees are written out here.
"""

import numpy as np
import pytest

from integrators import METHODS, MethodError
from integrators.methods import RungeKutta
from integrators.tableaux import TABLEAUX, Tableau, TableauError, dense_defects, order_defects, rooted_trees
from integrators.tableaux.tableau import _gamma

RK_TABLEAUX = sorted({m.tableau.name for m in METHODS.values() if isinstance(m, RungeKutta)} | set(TABLEAUX))


def test_rooted_tree_counts_and_densities():
    assert [len(rooted_trees(n)) for n in range(1, 9)] == [1, 1, 2, 4, 9, 20, 48, 115]
    leaf = ()
    bushy3 = (leaf, leaf)               # [tau, tau]: gamma = 3
    tall3 = ((leaf,),)                  # [[tau]]: gamma = 3 * 2 = 6
    tall4 = (((leaf,),),)               # gamma = 4 * 3 * 2 = 24
    assert (_gamma(bushy3), _gamma(tall3), _gamma(tall4)) == (3, 6, 24)


def test_every_registered_runge_kutta_method_uses_a_registered_tableau():
    for name, m in METHODS.items():
        if isinstance(m, RungeKutta):
            assert TABLEAUX[m.tableau.name] is m.tableau, name
            assert m.order == m.tableau.order
            for key in ("A", "b", "c"):
                arr = getattr(m.tableau, key)
                assert isinstance(arr, np.ndarray) and not arr.flags.writeable, (name, key)
            if not m.fixed_step:
                assert m.tableau.E and all(isinstance(e, np.ndarray) for e in m.tableau.E), name


@pytest.mark.parametrize("name", RK_TABLEAUX)
def test_order_conditions_hold_up_to_the_declared_order_and_not_beyond(name):
    tab = TABLEAUX[name]
    np.testing.assert_allclose(tab.A.sum(axis=1), tab.c, atol=1e-14)
    worst = max(abs(d) for _, d in order_defects(tab))
    assert worst <= 5e-14, (name, worst)
    beyond = order_defects(tab, tab.order + 1)[-len(rooted_trees(tab.order + 1)):]
    assert max(abs(d) for _, d in beyond) > 1e-6, (name, "satisfies the next order too")


@pytest.mark.parametrize("name", [n for n in RK_TABLEAUX if TABLEAUX[n].E])
def test_error_weights_sum_to_zero_and_embed_a_method_of_the_error_order(name):
    tab = TABLEAUX[name]
    for e in tab.E:
        assert abs(e.sum()) <= 1e-14
    if len(tab.E) == 1:   # the embedded solution bhat = (b, 0) - E, over the stages and the FSAL stage
        s1 = tab.s + (1 if tab.fsal else 0)
        A = np.zeros((s1, s1))
        A[:tab.s, :tab.s] = tab.A
        if tab.fsal:
            A[tab.s, :tab.s] = tab.b
        bhat = np.append(tab.b, [0.0] * (s1 - tab.s)) - tab.E[0]
        emb = Tableau(name + "_embedded", A=A, b=bhat, c=np.append(tab.c, [1.0] * (s1 - tab.s)),
                      order=tab.err_order, reference="test")
        assert max(abs(d) for _, d in order_defects(emb)) <= 5e-14
        assert max(abs(d) for _, d in order_defects(emb, tab.err_order + 1)) > 1e-6
    else:                 # DOP853: the combined estimate is O(h^8); E5 and E3 are differences of order-8
        # weights and embedded solutions of orders 5 and 3
        assert tab.err_order == tab.order - 1


@pytest.mark.parametrize("name", [n for n in RK_TABLEAUX if TABLEAUX[n].P is not None])
def test_continuous_extension_is_the_step_at_one_and_has_its_order(name):
    tab = TABLEAUX[name]
    w1 = tab.weights(np.array([1.0]))[0]
    np.testing.assert_allclose(w1[:tab.s], tab.b, atol=1e-13)
    np.testing.assert_allclose(w1[tab.s:], 0.0, atol=1e-13)
    np.testing.assert_allclose(tab.weights(np.array([0.0])), 0.0, atol=0)
    assert max(abs(d) for _, d in dense_defects(tab)) <= 1e-12
    assert max(abs(d) for _, d in dense_defects(tab, tab.dense_order + 1)) > 1e-7


def test_creation_checks_refuse_broken_coefficients():
    good = dict(A=((), (0.5,)), b=(0.0, 1.0), c=(0.0, 0.5), order=2, reference="midpoint rule (test)")
    Tableau("ok", **good)
    with pytest.raises(TableauError, match="row-sum condition.*row 1"):
        Tableau("bad", **dict(good, c=(0.0, 0.6)))
    with pytest.raises(TableauError, match="strictly lower triangular"):
        Tableau("bad", **dict(good, A=((0.1, 0.0), (0.5, 0.0)), c=(0.1, 0.5)))
    with pytest.raises(TableauError, match="sum to 1"):
        Tableau("bad", **dict(good, b=(0.1, 1.0)))
    with pytest.raises(TableauError, match=r"E\[0\] must sum to 0"):
        Tableau("bad", **dict(good, E=((1.0, 0.0),), err_order=1))
    with pytest.raises(TableauError, match="err_order"):
        Tableau("bad", **dict(good, E=((1.0, -1.0),), err_order=2))
    with pytest.raises(TableauError, match="theta = 1"):
        Tableau("bad", **dict(good, P=((0.0,), (0.9,)), dense_order=1))
    with pytest.raises(TableauError, match="order must be an integer"):
        Tableau("bad", **dict(good, order=0))
    with pytest.raises(MethodError, match="differs from its tableau"):
        RungeKutta("x", 3, tableau=TABLEAUX["rk4"])
    with pytest.raises(MethodError, match="form must be one of"):
        RungeKutta("x", 4, tableau=TABLEAUX["rk4"], form="lie")


def test_the_docstring_of_integrate_lists_every_method_from_the_registry():
    from integrators import integrate

    for name, m in METHODS.items():
        assert f"``{name}``" in integrate.__doc__, name
        assert f"order {m.order}" in integrate.__doc__
    assert "{METHODS}" not in integrate.__doc__

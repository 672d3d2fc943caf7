"""The code writer of the adaptive loop of an ambient Runge-Kutta pair in mode "array" (the numpy
columns of a shared ensemble, :mod:`integrators.codegen.programs`): :class:`Source` with the stage rows in one
buffer, so every stage sum is one np.dot (as scipy's DOP853 forms them)."""

from __future__ import annotations

from .matrix_source import MatrixSource
from .writer import Source
from .source_text import lin, num


class RowSource(Source):
    """:class:`Source` for the numpy columns of a shared ensemble (mode "array") of an ambient pair, with
    fewer and cheaper ufunc calls (each costs ~5 us on 10^4 trajectories, whatever it computes):

    * the state z (row 0), the stage increments K_i (rows 1..s) and the FSAL stage Kl (row s + 1) are
      the rows of one buffer KB of shape (s + 2, n, B), allocated once per run; every linear
      combination of them (the stage points Y_i = z + sum_j a_ij K_j, the increment, the error
      vectors) is one np.dot of the coefficient row with a slice of KB seen as (rows, n B), as scipy's
      DOP853 forms its stage sums, instead of two ufunc calls per term and component;
    * a stage increment h F(Y) = ad*_{h w(Y)} Y of an unforced problem is written straight into its row
      (``out=``) with h folded into the velocity's coefficients ((h*0.5)*Y0: a float times a column).

    The same sums in exact arithmetic; the rounding differs from the scalar code (BLAS order) at
    round-off."""

    def __init__(self, st, stages):
        super().__init__(st)
        self.rows, self.krow = stages + 2, 0

    def _row(self, r):
        return [f"KB[{r}, {j}]" for j in range(self.n)]

    def coad(self, x, m, prefix="g"):
        """Source.coad with a positive term first in every component (w2*z1 - w1*z2: three ufunc calls,
        not four; negating and reordering a sum of two terms is exact)."""
        C = self.st.C
        out = []
        for j in range(self.n):
            terms = [(C[i, j, k], f"{x[i]}*{m[k]}") for i in range(self.n) for k in range(self.n) if C[i, j, k] != 0.0]
            out.append(lin(sorted(terms, key=lambda t: t[0] < 0.0)))
        return self.assign(prefix, out)

    def point(self, z, pairs):
        """Y = z + sum_j a_j K_j (one np.dot over the rows of z and the K_j)."""
        return self.combo("Y", [(1.0, self._row(0))] + list(pairs))

    def field_increment(self, z, h):
        """The next row of KB: h F(z) = ad*_{h w(z)} z (module docstring), or h*F(z) with a forcing."""
        if self.st.P is not None:
            return self._scaled_field(z, h)
        W, c, C = self.st.W, self.st.c, self.st.C
        hw = []
        for i in range(self.n):
            terms = [(f"{h}" if W[i, j] == 1.0 else f"({h}*{num(W[i, j])})") + f"*{z[j]}"
                     for j in range(self.n) if W[i, j] != 0.0]
            terms += [f"({h}*{num(c[i])})"] if c[i] != 0.0 else []
            hw.append(" + ".join(terms) or "0.0")
        x = self.assign("hw", hw)
        self.krow += 1
        row = self._row(self.krow)
        for j in range(self.n):   # (ad*_x z)_j = sum_{i,k} x_i C[i, j, k] z_k, a positive term first
            terms = sorted([(float(C[i, j, k]), x[i], z[k]) for i in range(self.n) for k in range(self.n)
                            if C[i, j, k] != 0.0], key=lambda t: t[0] < 0.0)
            self.emit(f"_o = {row[j]}")
            if not terms:
                self.emit("_o[...] = 0.0")
                continue
            c0, a, b = terms[0]
            self.emit(f"np.multiply({a}, {b}, out=_o)" if c0 == 1.0 else f"np.multiply({num(c0)}*{a}, {b}, out=_o)")
            for cj, a, b in terms[1:]:
                mag = "" if abs(cj) == 1.0 else f"{num(abs(cj))}*"
                self.emit(f"_o {'+' if cj > 0 else '-'}= {mag}{a}*{b}")
        return row

    def _scaled_field(self, z, h):
        """The next row of KB as h times the writer's field at z."""
        w = self.field(z)
        return self.assign("K", [f"{h}*{w[j]}" for j in range(self.n)])

    def assign(self, prefix, exprs):
        if prefix not in ("K", "Kl") or len(exprs) != self.n:
            return super().assign(prefix, exprs)
        if prefix == "K" and self.krow == 0:   # a new attempt: the buffer (once per run) and z in row 0
            self.emit("if nsteps + nrej == 0:")
            self.emit(f"    KB = np.empty(({self.rows}, {self.n}) + np.shape({exprs[0]}))")
            self.emit(f"    KF = KB.reshape({self.rows}, -1)")
            for j in range(self.n):
                self.emit(f"KB[0, {j}] = z{j}")
        row = self.rows - 1 if prefix == "Kl" else self.krow + 1
        self.krow = 0 if prefix == "Kl" else self.krow + 1
        for j, e in enumerate(exprs):
            self.emit(f"KB[{row}, {j}] = {e}")
        return self._row(row)

    def combo(self, prefix, pairs, scale=None):
        rows = {}
        for c, V in pairs:
            if float(c) == 0.0:
                continue
            r = V[0][3:].split(",")[0] if isinstance(V[0], str) and V[0].startswith("KB[") else None
            if scale is not None or r is None or V != self._row(r):
                return super().combo(prefix, pairs, scale)
            rows[int(r)] = rows.get(int(r), 0.0) + float(c)
        if not rows:
            return None
        lo, hi = min(rows), max(rows) + 1
        coef = ", ".join(repr(rows.get(i, 0.0)) for i in range(lo, hi))
        base = self.fresh(prefix)
        names = [f"{base}{j}" for j in range(self.n)]
        self.emit(f"{', '.join(names)}, = np.dot(np.array(({coef},)), KF[{lo}:{hi}]).reshape({self.n}, -1)")
        return names


class MatrixRowSource(RowSource, MatrixSource):
    """:class:`RowSource` for structure constants with many non-zero entries (an algebra in a random basis,
    :func:`integrators.codegen.matrix_source.matrix_form`): the stage rows and sums of :class:`RowSource`, the products
    with C (and W, P) those of :class:`integrators.codegen.matrix_source.MatrixSource` over the (n, B) stack of the
    columns (its constants in the text's preamble), where the scalar writer's ~n^3 terms cost one or two ufunc
    calls each (sp(4) in a random basis with a servo-constraint of the first kind, rk853, 4 trajectories: 23 ms a
    step). A stage increment is h F(z) from the matrix form's field, written into its row."""

    coad = MatrixSource.coad
    field_increment = RowSource._scaled_field

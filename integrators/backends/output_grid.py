"""The output grid a generated adaptive loop fills (:mod:`integrators.codegen.dense_source`): its arrays,
the arguments the loop takes for it in each mode, and the evaluation of the steps the Python loops log
(one call of the generated evaluator over all their output times)."""

from __future__ import annotations

import numpy as np


class OutputGrid:
    """The output grid a generated adaptive loop fills (:mod:`integrators.codegen.dense_source`): the times
    ``te`` (sorted in the direction of integration, within t_span), the states ``ye`` (``shape``: (G, n),
    (G, n, B) for the numpy columns, (G, B, n) for the compiled ensemble) and the next index ``GI``; the
    times equal to t0 take y0 here (:meth:`start`), the loop fills the rest as it passes them. The Python
    loops log the steps that contain output times instead, and :meth:`flush` evaluates them together with
    the generated evaluator of plan ``pl`` (``targets``: the projection's C(y0), (p,) or (B, p))."""

    def __init__(self, te, shape, pl, targets, backward=False):
        self.te = np.ascontiguousarray(te, dtype=float)
        self.backward = backward
        self.ye = np.empty(shape)
        self.GI = np.zeros(1, np.int64)
        self.pl, self.targets = pl, np.asarray(targets, dtype=float)
        self.log = []

    @property
    def te_list(self):
        """The times as Python floats (the Python-float loop indexes a list faster); made when first read."""
        if "_te_list" not in self.__dict__:
            self._te_list = self.te.tolist()
        return self._te_list

    @property
    def tu(self):
        """direction * te as Python floats, for bisect_left (the Python loops'); made when first read."""
        return (-self.te).tolist() if self.backward else self.te_list

    def start(self, t0, y0):
        """Fill the times equal to t0 with y0 (of the layout of a row of ye): a prefix of te, sorted in the
        direction of integration from t0 on."""
        k, G = 0, len(self.te)
        while k < G and self.te[k] == t0:
            k += 1
        self.ye[:k] = y0
        self.GI[0] = k

    #: the Python loops' log holds at most this many floats (an ensemble's steps are B columns each) and
    #: at most LOG_STEPS steps; the evaluator takes at most EVAL_COLUMNS (time, trajectory) columns a call
    LOG_FLOATS, LOG_STEPS, EVAL_COLUMNS = 1 << 22, 256, 1 << 16

    def args(self, mode):
        if mode == "numba":
            return self.te, self.ye, self.GI
        B = self.ye.shape[2] if self.ye.ndim == 3 else 1
        tab = self.pl.tab
        floats = B * self.pl.st.n * (1 + tab.s + (1 if tab.fsal else 0))
        cap = max(1, min(self.LOG_STEPS, self.LOG_FLOATS // floats))
        return ((self.te_list if mode == "scalar" else self.te), self.ye, self.GI, self.log, self.flush, cap,
                self.tu)

    #: up to this many logged steps of one trajectory, the extra stages of a scalar text (Plan.float_rows)
    #: are evaluated a step at a time on Python floats: numpy's cost a call outweighs its columns below ~40
    #: (dop853's three extra stages, timeit on the log of a run: rk853 on so(5), 7 steps, 1.49 -> 0.24 ms;
    #: sl(3) 0.78 -> 0.13 ms; rkmk853 on so(5), 12 steps, 11.5 -> 4.3 ms, on sl(3), 25 steps, 8.0 -> 6.6 ms;
    #: not the matrix form of a random basis, 0.33 against 1.25 ms on se(3), nor rkmk853's forced generator,
    #: 7.1 against 24 ms on so(4))
    ROW_STAGES = 32

    def _extra_stages(self, L, hs, V):
        """The interpolant's extra stages of the logged steps of one trajectory (L, k): ``hs`` their step
        sizes, ``V`` their logged values (L, fields)."""
        if len(L) <= self.ROW_STAGES and self.pl.float_rows:
            fs = self.pl.function("dense_stages", "scalar")   # the same text with the helpers' float versions
            try:
                return np.array([fs(r[4], *r[5:]) for r in L], dtype=float)
            except (ArithmeticError, ValueError):
                pass   # a division by zero or an overflow on Python floats: numpy's inf or NaN, on the columns
        fn = self.pl.function("dense_stages", "array")
        with np.errstate(all="ignore"):
            Kx = fn(hs, *V.T)
        return np.stack([np.broadcast_to(k, (len(L),)) for k in Kx], -1)

    @property
    def filled(self):
        self.flush()
        return int(self.GI[0])

    def flush(self):
        """Evaluate the logged steps' output times (one call of the generated evaluator, every output
        time of a trajectory a column) and empty the log."""
        L = self.log
        if not L:
            return
        fn = self.pl.function("dense", "array")
        g0 = np.array([r[0] for r in L], np.int64)
        cnt = np.array([r[1] for r in L], np.int64) - g0
        entry = np.repeat(np.arange(len(L)), cnt)
        g = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt) + g0[entry]
        head = np.array([r[2:5] for r in L], dtype=float)
        t, tn, hs = head[entry, 0], head[entry, 1], head[entry, 2]
        s = (self.te[g] - t) / (tn - t)
        nf = len(L[0]) - 5
        n = self.pl.st.n
        extra = len(self.pl.tab.extra_c) > 0   # the interpolant's extra stages: once per logged step
        if self.ye.ndim == 2:     # one trajectory: the logged values are floats
            V = np.array([r[5:] for r in L], dtype=float)
            if extra:
                V = np.concatenate([V, self._extra_stages(L, head[:, 2], V)], axis=1)
            VT = np.ascontiguousarray(V.T)      # (fields, steps): the evaluator's rows, a column per point
            for a in range(0, len(g), self.EVAL_COLUMNS):
                sl = slice(a, a + self.EVAL_COLUMNS)
                with np.errstate(all="ignore"):
                    out = fn(s[sl], hs[sl], VT[:, entry[sl]], *self.targets)
                Y = self.ye[g[sl]]
                for j in range(n):
                    Y[:, j] = out[j]
                self.ye[g[sl]] = Y
        else:                     # numpy columns (B,): every (time, trajectory) a column
            B = self.ye.shape[2]
            fields = [np.array([np.broadcast_to(r[5 + f], (B,)) for r in L]) for f in range(nf)]   # (L, B)
            if extra:
                ok = np.isfinite(sum(F.ravel() for F in fields))   # a lost trajectory's NaN kept to itself
                with np.errstate(all="ignore"):
                    Kx = self.pl.function("dense_stages", "array")(np.repeat(head[:, 2], B)[ok],
                                                                   *(F.ravel()[ok] for F in fields))
                for k in Kx:
                    F = np.full(len(L) * B, np.nan)
                    F[ok] = k
                    fields.append(F.reshape(len(L), B))
            per = max(1, self.EVAL_COLUMNS // B)
            for a in range(0, len(g), per):
                sl = slice(a, a + per)
                m = len(g[sl])
                rows = np.stack([F[entry[sl]] for F in fields]).reshape(len(fields), m * B)
                ok = np.isfinite(rows.sum(axis=0))   # a lost trajectory's NaN stays out of the others' batch-wide sizes
                cz = [np.tile(self.targets[:, k], m)[ok] for k in range(self.targets.shape[-1])]
                with np.errstate(all="ignore"):
                    out = fn(np.repeat(s[sl], B)[ok], np.repeat(hs[sl], B)[ok], rows[:, ok], *cz)
                Y = np.full((n, m * B), np.nan)
                for j in range(n):
                    Y[j, ok] = out[j]
                self.ye[g[sl]] = Y.reshape(n, m, B).transpose(1, 0, 2)
        L.clear()

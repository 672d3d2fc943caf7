"""Invariant lines of x' = v(x), v homogeneous quadratic: all solutions of v(xi) = c xi in CP^{p-1}.

On the line x = s xi the flow is s' = c s^2, s(t) = s0 / (1 - c s0 t) (Kozlov's lectures on
servo-constraints, slide "Общие свойства приведенных систем"). Generically there are 2^p - 1 lines
counted with multiplicity (the eigenvector count of a tensor, Cartwright & Sturmfels, "The number of
eigenvalues of a tensor", 2013, with d = 2: ((d)^p - 1)/(d - 1)).

Pipeline: (1) equilibrate Q by exact powers of 2 (servo.quadratic.certify.equilibrate: x = d * y,
c = s c', rows scaled, max |Q'| ~ 1); (2) track the 2^p paths of servo.quadratic.homotopy on the
scaled system (random patch and gamma from ``seed``); the trivial root z = [0 : ... : 0 : 1]
(multiplicity 1, since dF = [-c I | 0] there) is removed; (3) certify a posteriori: Smale's alpha
test for each simple end point (each in its own real chart), pairwise separation of the certified
balls, reality or non-reality; singular end points only if a small-integer point next to them is an
exact root with a rank-deficient Jacobian (rational arithmetic); (4) map back (exact) and
normalise. What ``certified`` then proves is in InvariantLines.

Normalisation: for c != 0 the direction xi is the unit vector with c real and > 0 (unique: it is
eta / |eta| for the unique eta with v(eta) = eta); for c = 0 the largest component of xi is real > 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import QuadraticSystemError
from .certify import (ALPHA0, alpha_test, backward_error, equilibrate, exact_jacobian_rank, exact_root,
                      normalise_line, pairwise_angles)
from .display import invariant_lines_markdown
from .homotopy import QuadraticEigenHomotopy
from .kovalevskaya import attach_exponents

__all__ = ["InvariantLine", "InvariantLines", "FamilyWitness", "invariant_lines"]

#: componentwise backward error (certify.backward_error) above which a line is not at round-off
ROUNDOFF = 1e-12
#: angle in P^p (equilibrated coordinates) assumed around a singular root in the separation check
SINGULAR_RADIUS = 1e-4


@dataclass
class InvariantLine:
    """One invariant line x = s * direction, on which s' = c s^2."""

    direction: np.ndarray
    c: complex
    multiplicity: int
    is_real: bool
    residual: float
    cycle_numbers: tuple = ()
    sphere_eigenvalues: np.ndarray | None = None
    tol: float = 1e-8
    kovalevskaya_exponents: np.ndarray | None = None   # at d = -direction / c; None if c = 0 (kovalevskaya.py)
    alpha: float = float("inf")          # Smale's alpha bound (inf: singular or not tested)
    backward_error: float = float("nan")  # certify.backward_error in the equilibrated system

    @property
    def is_equilibrium_line(self) -> bool:
        """c = 0: every point of the line is an equilibrium."""
        return abs(self.c) <= self.tol

    def blowup_time(self, s0):
        """Time at which s(t) = s0 / (1 - c s0 t) reaches infinity, for x(0) = s0 * direction.

        1 / (c s0) if c s0 > 0 (real line), +inf otherwise (the solution tends to 0 or stays fixed).
        """
        s0 = np.asarray(s0, dtype=float)
        if not self.is_real:
            raise ValueError("blow-up time is defined for real lines only; this line is complex")
        cs = np.real(self.c) * s0
        with np.errstate(divide="ignore"):
            return np.where(cs > 0, 1.0 / np.where(cs > 0, cs, 1.0), np.inf)

    def solution(self, s0, t):
        """s(t) = s0 / (1 - c s0 t) times the direction, shape t.shape + (p,)."""
        t = np.asarray(t, dtype=float)
        s = s0 / (1 - np.real(self.c) * s0 * t)
        return s[..., None] * np.real(self.direction)

    @property
    def stability(self):
        """Stability of the ray +direction as a fixed point of the flow on the sphere of directions.

        Sphere flow: xi' = v(xi) - (xi . v(xi)) xi (time d tau = |x| dt). Its linearisation at a
        fixed point has the eigenvalues lambda_k(J) - c, where J = dv(xi) and lambda_k runs over
        the eigenvalues of J other than the one along xi (J xi = 2 c xi). The ray -direction has the
        opposite eigenvalues (x(t) -> -x(-t) symmetry). None for complex lines.
        """
        if self.sphere_eigenvalues is None:
            return None
        re = np.real(self.sphere_eigenvalues)
        if re.size == 0:
            return "attracting"
        if np.all(re < -self.tol):
            return "attracting"
        if np.all(re > self.tol):
            return "repelling"
        if np.any(re < -self.tol) and np.any(re > self.tol):
            return "saddle"
        return "degenerate"

    def __repr__(self):
        d = np.array2string(np.real_if_close(self.direction), precision=4)
        return (f"InvariantLine(direction={d}, c={np.real_if_close(self.c):.6g}, "
                f"multiplicity={self.multiplicity}, real={self.is_real})")


@dataclass
class FamilyWitness:
    """A path end point lying on a positive-dimensional set of solutions of v(xi) = c xi.

    local_dimension: dimension (in CP^{p-1}) found by the local test; is_equilibria: c = 0 at the
    witness (e.g. a plane on which v vanishes); paths: how many paths ended here.
    """

    direction: np.ndarray
    c: complex
    local_dimension: int
    is_equilibria: bool
    paths: int


@dataclass
class InvariantLines:
    """All invariant lines of a QuadraticSystem, with a completeness certificate.

    ``certificate`` (``certified`` is ``certificate is not None``; ``reason`` says why or why not):

    * ``"alpha"``: a proof, up to the rounding bounds of servo.quadratic.certify: every line is a
      simple root certified by Smale's alpha test in the equilibrated system, the lines are
      pairwise distinct (disjoint certified balls), each is certified real or non-real, and there
      are 2^p - 1 of them. With the trivial root [0 : ... : 0 : 1] (always simple) that is the
      Bezout number 2^p of p quadrics in P^p, so there are no other solutions, no multiple ones and
      no positive-dimensional ones: lines, real_count and multiplicities (all 1) are exact and each
      c and direction is within the certified radius.
    * ``"alpha+count"``: as above for the simple lines; the singular lines (multiplicity > 1) have
      backward error at round-off, lie apart from the others, and the multiplicities (path
      counts) add to 2^p - 1. The singular part rests on the path count, not on a proof.
    * ``"family"``: a positive-dimensional set was found (numerical local dimension test); every
      path converged and every isolated line is at round-off.
    * ``None``: not certified (a failed path, a line not at round-off, a simple line failing the
      alpha test, two lines not told apart, a count other than 2^p - 1, undecided reality).
    """

    lines: list
    positive_dimensional: list
    p: int
    failed_paths: int
    path_result: object = field(repr=False, default=None)
    certificate: str | None = None
    reason: str = ""

    def __iter__(self):
        return iter(self.lines)

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, i):
        return self.lines[i]

    @property
    def total_multiplicity(self) -> int:
        """Sum of the multiplicities of the isolated lines (2^p - 1 when the set is finite)."""
        return int(sum(L.multiplicity for L in self.lines))

    @property
    def real(self):
        """The real lines."""
        return [L for L in self.lines if L.is_real]

    @property
    def real_count(self) -> int:
        """Number of real lines counted with multiplicity."""
        return int(sum(L.multiplicity for L in self.lines if L.is_real))

    @property
    def is_finite(self) -> bool:
        """No positive-dimensional family of solutions was found."""
        return not self.positive_dimensional

    @property
    def certified(self) -> bool:
        """``certificate`` is not None: see there for what is proved."""
        return self.certificate is not None

    @property
    def max_residual(self) -> float:
        """max |v(xi) - c xi| / |xi|^2 over the lines."""
        return max((L.residual for L in self.lines), default=0.0)

    _repr_markdown_ = invariant_lines_markdown

    def __repr__(self):
        return (f"InvariantLines(p={self.p}, lines={len(self.lines)}, total_multiplicity="
                f"{self.total_multiplicity}, real={self.real_count}, families="
                f"{len(self.positive_dimensional)}, certified={self.certified}, "
                f"certificate={self.certificate!r})")


def _proj_dist(z, w):
    """Sine of the angle between complex lines z and w (rows)."""
    zn = z / np.linalg.norm(z, axis=-1, keepdims=True)
    wn = w / np.linalg.norm(w, axis=-1, keepdims=True)
    ip = np.abs(np.einsum("...i,...i->...", zn.conj(), wn))
    return np.sqrt(np.clip(1 - ip ** 2, 0, None))


def _cluster(z, tol):
    """Greedy clustering of projective points; returns a label per row."""
    labels = -np.ones(len(z), dtype=int)
    zn = z / np.linalg.norm(z, axis=-1, keepdims=True)
    D = np.sqrt(np.clip(1 - np.abs(zn.conj() @ zn.T) ** 2, 0, None))    # all _proj_dist at once
    k = 0
    for i in range(len(z)):
        if labels[i] >= 0:
            continue
        members = (D[i] < tol) & (labels < 0)
        labels[members] = k
        k += 1
    return labels


def _local_dimension(hom, z, eps=1e-2):
    """Local dimension test at an end point z of the homotopy (t = 1).

    In the chart zhat^H w = 1 at zhat = z/|z|, for each random unit direction r of the numerical
    null space of dF (r orthogonal to zhat) solve the over-determined system F(w) = 0,
    zhat^H w = 1, r^H (w - zhat) = eps by Gauss-Newton. On a curve through zhat with a tangent
    not orthogonal to r this converges to residual ~1e-16; at an isolated root of multiplicity mu
    the residual cannot go below ~eps^mu, so with eps = 1e-2 and threshold 1e-13 roots with
    mu <= 6 are told apart from families. Returns the dimension found (0 = isolated).
    """
    zh = z / np.linalg.norm(z)
    J = np.vstack([hom.JF(zh), zh.conj()[None]])
    s, vh = np.linalg.svd(J)[1:]
    null = vh[s < 1e-6 * s[0]].conj()
    found = []
    for r in null:
        w = zh + eps * r
        for _ in range(40):
            res = np.concatenate([hom.F(w), [zh.conj() @ w - 1, r.conj() @ (w - zh) - eps]])
            A = np.vstack([hom.JF(w), zh.conj()[None], r.conj()[None]])
            dw = np.linalg.lstsq(A, res, rcond=1e-12)[0]
            w = w - dw
            if np.linalg.norm(dw) < 1e-15:
                break
        res = np.concatenate([hom.F(w), [zh.conj() @ w - 1, r.conj() @ (w - zh) - eps]])
        if np.linalg.norm(res) < 1e-13:
            found.append(w - zh)
    if not found:
        return 0
    return int(np.linalg.matrix_rank(np.array(found), tol=1e-3 * eps))


def _merge_linear_families(hom, fams, d, s):
    """Merge witnesses that lie on one linear family: F vanishes on the segment between them
    (F of the scaled system, points mapped by y = xi / d, c' = c / s)."""
    merged = []
    for f in fams:
        z1 = np.concatenate([f.direction / d, [f.c / s]])
        for g in merged:
            z0 = np.concatenate([g.direction / d, [g.c / s]])
            pts = [(1 - t) * z0 + t * z1 for t in (0.3, 0.7)] + [z0 + 1j * z1]
            if all(
                    np.linalg.norm(hom.F(w)) < 1e-9 * np.linalg.norm(w) ** 2 for w in pts):
                g.paths += f.paths
                g.local_dimension = max(g.local_dimension, f.local_dimension)
                g.is_equilibria = bool(g.is_equilibria and f.is_equilibria)
                break
        else:
            merged.append(f)
    return merged


def _sphere_eigs(q, xi, c):
    """Eigenvalues of the sphere flow at the real fixed point xi: eig(B^T J B) - c."""
    p = q.p
    if p == 1:
        return np.zeros(0)
    J = q.jacobian(xi)
    B = np.linalg.svd(xi[None])[2][1:].T          # orthonormal basis of xi-perp
    return np.linalg.eigvals(B.T @ J @ B) - c


def _check_args(q, seed, tol, cluster_tol, retries):
    """Every argument of invariant_lines, or a QuadraticSystemError naming the bad one."""
    Q = getattr(q, "Q", None)
    if not (isinstance(Q, np.ndarray) and Q.ndim == 3 and hasattr(q, "v") and hasattr(q, "is_real")):
        raise QuadraticSystemError(f"invariant_lines needs a QuadraticSystem, got {type(q).__name__}")
    for name, val in (("seed", seed), ("retries", retries)):
        if isinstance(val, (bool, np.bool_)) or not isinstance(val, (int, np.integer)):
            raise QuadraticSystemError(f"{name} must be an int, got {val!r}")
    if seed < 0:
        raise QuadraticSystemError(f"seed must be >= 0, got {seed}")
    if retries < 0:
        raise QuadraticSystemError(f"retries must be >= 0, got {retries}")
    for name, val, hi in (("tol", tol, 1e-2), ("cluster_tol", cluster_tol, 1e-2)):
        if isinstance(val, (bool, np.bool_)) or not isinstance(val, (int, float, np.floating, np.integer)):
            raise QuadraticSystemError(f"{name} must be a number, got {val!r}")
        if not (np.isfinite(val) and 0 < val <= hi):
            raise QuadraticSystemError(f"{name} must be in (0, {hi}], got {val!r}")


def invariant_lines(q, seed=0, tol=1e-8, cluster_tol=1e-6, retries=2):
    """All invariant lines of the QuadraticSystem q: solutions [xi] of v(xi) = c xi in CP^{p-1}.

    Returns InvariantLines (iterable of InvariantLine) with total_multiplicity, real_count,
    positive_dimensional (list of FamilyWitness), ``certificate`` / ``certified`` and ``reason``
    (see InvariantLines.certificate for what is proved). If a run is not certified it is repeated
    with new random gamma and patch, up to ``retries`` times; the random numbers come from ``seed``
    only, so the result is the same in every run and process. ``tol``: relative size below which
    c counts as 0 (an equilibrium line); ``cluster_tol``: angle under which path end points of the
    (equilibrated) system are one root. Bad arguments raise QuadraticSystemError (a ValueError).
    """
    _check_args(q, seed, tol, cluster_tol, retries)
    best = best_key = None
    seeds = np.random.default_rng(int(seed)).integers(0, 2 ** 31, size=int(retries) + 1)
    for s in seeds:
        res = _solve_once(q, int(s), float(tol), float(cluster_tol))
        if res.certified:
            return res
        key = (res.failed_paths, sum(not np.isfinite(L.alpha) or L.alpha >= ALPHA0 for L in res.lines))
        if best is None or key < best_key:
            best, best_key = res, key
    return best


def _line_tol(Qs, w, d, s, xi, tol):
    """c counts as 0 on the unit line xi when, in the equilibrated system (y = xi / d, c' = c / s),
    |c' w| |y| <= tol max |Q'| |y|^2 (inf-norms; the measure of certify.backward_error)."""
    y = np.abs(xi / d).max()
    return float(tol * s * np.abs(Qs).max() * y / np.abs(w).max())


def _solve_once(q, seed, tol, cluster_tol):
    p = q.p
    npaths = 2 ** p
    if not np.any(q.Q):
        w = FamilyWitness(np.eye(p)[0].astype(complex), 0.0, p - 1, True, npaths - 1)
        return InvariantLines([], [w], p, 0, None, "family", "v = 0: every line is a line of equilibria")
    Qs, wsc, dsc, ssc = equilibrate(q.Q)
    hom = QuadraticEigenHomotopy(Qs, rng=seed, w=wsc)
    pr = hom.solve()
    zs = pr.z
    ok = pr.converged & np.all(np.isfinite(zs), axis=1)
    failed = int((~ok).sum())
    idx = np.nonzero(ok)[0]
    labels = _cluster(zs[idx], cluster_tol)
    fams, cand = [], []                              # cand: (members, multiplicity, scaled z)
    trivial_seen = 0
    for lab in range(labels.max() + 1 if labels.size else 0):
        members = idx[labels == lab]
        z = zs[members].mean(axis=0)
        if np.linalg.norm(z[:-1]) < 1e-6 * abs(z[-1]):
            trivial_seen += len(members)
            continue
        mult = len(members)
        if mult > 1 and np.all(pr.regular[members]):
            failed += mult                  # two paths on one regular root: a path jumped
            continue
        if not np.all(pr.regular[members]):
            dim = _local_dimension(hom, z)
            if dim > 0 and backward_error(Qs, z[None, :-1], z[-1:], wsc)[0] > ROUNDOFF:
                failed += mult              # a "family" through a point that is no root
                continue
            if dim > 0:
                xi, c = z[:-1] * dsc, z[-1] * ssc
                d, cc = normalise_line(xi, c, _line_tol(Qs, wsc, dsc, ssc, xi / np.linalg.norm(xi), tol))
                fams.append(FamilyWitness(d, complex(cc), dim, bool(cc == 0), mult))
                continue
        cand.append((members, mult, z))
    if trivial_seen != 1:
        failed += abs(trivial_seen - 1)
    # alpha test of the simple roots in the scaled system (each in a real chart); rows that look
    # real are tested as real points first, and as complex ones if that fails
    Z = np.array([z for *_, z in cand], dtype=complex).reshape(len(cand), p + 1)
    simple = np.array([m == 1 for _, m, _ in cand], dtype=bool)
    nc = len(cand)
    alpha = np.full(nc, np.inf)
    radius = np.full(nc, np.inf)
    real = np.zeros(nc, dtype=bool)
    nonreal = np.zeros(nc, dtype=bool)
    Zc = Z.copy()
    if simple.any():
        looks_real = np.zeros(nc, dtype=bool)
        if q.is_real:
            ph = Z / Z[:, :p][np.arange(nc), np.argmax(np.abs(Z[:, :p]), axis=1)][:, None]
            looks_real = np.linalg.norm(ph.imag, axis=1) < 1e-6 * np.linalg.norm(ph, axis=1)
        for force in (True, False):
            rows = np.nonzero(simple & ~(alpha < ALPHA0) & (looks_real | (not force)))[0]
            if not rows.size:
                continue
            at = alpha_test(Qs, wsc, Z[rows], np.full(rows.size, force) & looks_real[rows])
            better = at["ok"] | ~np.isfinite(alpha[rows])
            r = rows[better]
            for key, arr in (("alpha", alpha), ("radius", radius), ("real", real), ("nonreal", nonreal)):
                arr[r] = at[key][better]
            Zc[r] = at["z"][better]
    exact = np.zeros(nc, dtype=bool)     # singular roots verified in exact arithmetic
    for k in np.nonzero(~simple)[0]:
        r = exact_root(Qs, wsc, Z[k])
        if r is not None:
            Zc[k], exact[k] = r, True
            if exact_jacobian_rank(Qs, wsc, r) == p:     # a simple root reached by several paths:
                exact[k] = False                         # other roots nearby, not resolved
    # lines in the original coordinates: xi = d * y, c = s c' (exact powers of 2)
    lines = []
    for k, (members, mult, _) in enumerate(cand):
        xi, c = Zc[k, :p] * dsc, Zc[k, p] * ssc
        n = np.linalg.norm(xi)
        ltol = _line_tol(Qs, wsc, dsc, ssc, xi / n, tol)
        d, cc = normalise_line(xi, c, ltol)
        if alpha[k] < ALPHA0:
            is_real = bool(real[k])
        else:
            is_real = bool(q.is_real and np.all(np.abs(d.imag) < 1e-7) and abs(np.imag(cc)) <= max(ltol, 1e-300))
        if is_real:
            d, cc = d.real.copy(), float(np.real(cc))
        d = np.where(np.abs(d.real) < 1e-15, 0, d.real) + (
            1j * np.where(np.abs(d.imag) < 1e-15, 0, d.imag) if np.iscomplexobj(d) else 0)
        eigs = _sphere_eigs(q, d, cc) if is_real else None
        lines.append(InvariantLine(d, cc, mult, is_real, 0.0,
                                   tuple(int(m) for m in pr.cycle[members]), eigs, ltol,
                                   alpha=float(alpha[k])))
    if lines:                                   # |v(xi) - c xi| / |xi|^2, all lines at once
        D = np.array([L.direction for L in lines], dtype=complex)
        C = np.array([L.c for L in lines], dtype=complex)
        R = np.linalg.norm(q.v(D) - C[:, None] * D, axis=1) / np.linalg.norm(D, axis=1) ** 2
        BE = backward_error(Qs, Zc[:, :p], Zc[:, p], wsc)       # in the scaled system
        for L, r, be in zip(lines, R, BE):
            L.residual, L.backward_error = float(r), float(be)
    attach_exponents(q, lines)                  # Kovalevskaya exponents, all lines in one batch
    fams = _merge_linear_families(hom, fams, dsc, ssc)
    cert, reason = _certificate(p, lines, cand, Zc, radius, real, nonreal, exact, failed, fams,
                                q.is_real)
    order = sorted(range(len(lines)), key=lambda i: (not lines[i].is_real, -abs(lines[i].c),
                                                   tuple(np.real(lines[i].direction))))
    lines = [lines[i] for i in order]
    return InvariantLines(lines, fams, p, failed, pr, cert, reason)


def _certificate(p, lines, cand, Zc, radius, real, nonreal, exact, failed, fams, qreal):
    """(certificate, reason): what InvariantLines.certificate documents, or None and why not."""
    if failed:
        return None, f"{failed} of {2 ** p} paths failed or were lost (jumped, diverged, trivial root miscounted)"
    bad = [L for L in lines if L.backward_error > ROUNDOFF]
    if bad:
        L = bad[0]
        return None, (f"{len(bad)} line(s) not at round-off: backward error {L.backward_error:.2e} > "
                      f"{ROUNDOFF:.0e} at direction {np.round(L.direction, 6)}")
    simple = np.array([m == 1 for _, m, _ in cand], dtype=bool)
    inexact = [k for k in np.nonzero(~simple)[0] if not exact[k]]
    if inexact:
        k = inexact[0]
        return None, (f"{len(inexact)} line(s) reached by several paths not verified as exact singular "
                      f"roots (near {np.round(lines[k].direction, 6)} no small-integer point solves the "
                      f"system exactly with a singular Jacobian); the alpha test cannot certify them")
    fail = [k for k in np.nonzero(simple)[0] if not np.isfinite(radius[k])]
    if fail:
        k = fail[0]
        return None, (f"{len(fail)} simple line(s) fail the alpha test (alpha = {lines[k].alpha:.3g} >= "
                      f"{ALPHA0:.4f}) at direction {np.round(lines[k].direction, 6)}")
    undecided = [k for k in np.nonzero(simple)[0] if qreal and not (real[k] or nonreal[k])]
    # separation: certified radius for simple roots, SINGULAR_RADIUS (heuristic) for clusters
    if len(cand) > 1:
        rad = np.where(simple, radius, SINGULAR_RADIUS)
        A = pairwise_angles(Zc)
        np.fill_diagonal(A, np.inf)
        close = A <= rad[:, None] + rad[None, :]
        if close.any():
            a, b = np.argwhere(close)[0]
            return None, (f"lines {np.round(lines[a].direction, 6)} and {np.round(lines[b].direction, 6)} "
                          f"are not certified distinct (angle {A[a, b]:.2e} <= {rad[a] + rad[b]:.2e})")
    total = sum(L.multiplicity for L in lines)
    if fams:
        return "family", (f"positive-dimensional solution set ({len(fams)} witness(es), numerical local "
                          f"dimension test); {total} isolated line(s) with multiplicity, not proved complete")
    if total != 2 ** p - 1:
        return None, f"multiplicities add to {total}, not 2^p - 1 = {2 ** p - 1}"
    if undecided:
        k = undecided[0]
        return None, f"reality of line {np.round(lines[k].direction, 6)} not certified"
    if simple.all():
        return "alpha", (f"{total} = 2^p - 1 distinct simple roots, each certified by the alpha test "
                         f"(max alpha {max(L.alpha for L in lines):.2e} < {ALPHA0:.4f}); with the "
                         f"simple trivial root that is the Bezout number 2^p, so there is nothing else")
    return "alpha+count", (f"{int(simple.sum())} simple roots certified by the alpha test; "
                           f"{int((~simple).sum())} singular root(s) verified exactly (rational arithmetic: "
                           f"F = 0 and dF rank-deficient), "
                           f"their multiplicities from the path count; total {total} = 2^p - 1 (the "
                           f"multiplicities of the singular roots are not proved)")

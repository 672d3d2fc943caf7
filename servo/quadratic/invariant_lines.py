"""Invariant lines of x' = v(x), v homogeneous quadratic: all solutions of v(xi) = c xi in CP^{p-1}.

On the line x = s xi the flow is s' = c s^2, s(t) = s0 / (1 - c s0 t) (Kozlov, slide "Общие свойства
приведенных систем", seeds/004). Generically there are 2^p - 1 lines counted with multiplicity (the
eigenvector count of a tensor, Cartwright & Sturmfels, "The number of eigenvalues of a tensor", 2013,
with d = 2: ((d)^p - 1)/(d - 1)). They are found by the homotopy of servo.quadratic.homotopy; the trivial
root z = [0 : ... : 0 : 1] (multiplicity 1, since dF = [-c I | 0] there) is removed.

Normalisation: for c != 0 the direction xi is the unit vector with c real and > 0 (unique: it is
eta / |eta| for the unique eta with v(eta) = eta); for c = 0 the largest component of xi is real > 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .display import invariant_lines_markdown
from .homotopy import QuadraticEigenHomotopy

__all__ = ["InvariantLine", "InvariantLines", "FamilyWitness", "invariant_lines"]


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
    """All invariant lines of a QuadraticSystem, with a completeness certificate."""

    lines: list
    positive_dimensional: list
    p: int
    failed_paths: int
    path_result: object = field(repr=False, default=None)

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
        """Complete: every path converged and the multiplicities add to 2^p - 1, or a family was found."""
        if self.failed_paths:
            return False
        return self.total_multiplicity == 2 ** self.p - 1 or bool(self.positive_dimensional)

    @property
    def max_residual(self) -> float:
        """max |v(xi) - c xi| / |xi|^2 over the lines."""
        return max((L.residual for L in self.lines), default=0.0)

    _repr_markdown_ = invariant_lines_markdown

    def __repr__(self):
        return (f"InvariantLines(p={self.p}, lines={len(self.lines)}, total_multiplicity="
                f"{self.total_multiplicity}, real={self.real_count}, families="
                f"{len(self.positive_dimensional)}, certified={self.certified})")


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


def _merge_linear_families(hom, fams, scale):
    """Merge witnesses that lie on one linear family: F vanishes on the segment between them."""
    merged = []
    for f in fams:
        z1 = np.concatenate([f.direction, [f.c / scale]])
        for g in merged:
            z0 = np.concatenate([g.direction, [g.c / scale]])
            pts = [(1 - s) * z0 + s * z1 for s in (0.3, 0.7)] + [z0 + 1j * z1]
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


def _normalise(xi, c, tol):
    """Unit direction, with c real > 0 if c != 0, else largest component real > 0."""
    n = np.linalg.norm(xi)
    xi, c = xi / n, c / n
    if abs(c) > tol:
        ph = np.exp(-1j * np.angle(c))
    else:
        ph = np.exp(-1j * np.angle(xi[np.argmax(np.abs(xi))]))
        c = 0.0
    return xi * ph, c * ph


def _polish(q, xi, c, iters=3):
    """Batched Newton on v(xi) = c xi, x0^H xi = 1 (x0 = starting xi); rows (B, p), (B,).

    Rows whose Jacobian is singular keep their input values."""
    Q = q.Q.astype(complex)
    p, B = q.p, xi.shape[0]
    x0 = xi.copy()
    z = np.concatenate([xi, c[:, None]], axis=1)
    idx = np.arange(p)
    for _ in range(iters):
        x, cc = z[:, :-1], z[:, -1]
        A = np.einsum("ijk,bk->bij", Q, x)
        F = np.concatenate([np.einsum("bij,bj->bi", A, x) - cc[:, None] * x,
                            (np.einsum("bi,bi->b", x0.conj(), x) - 1)[:, None]], axis=1)
        J = np.zeros((B, p + 1, p + 1), dtype=complex)
        J[:, :p, :p] = 2 * A
        J[:, idx, idx] -= cc[:, None]
        J[:, :p, p] = -x
        J[:, p, :p] = x0.conj()
        from .homotopy import _solve
        dz = _solve(J, F)
        good = np.all(np.isfinite(dz), axis=1)
        z[good] -= dz[good]
    return z[:, :-1], z[:, -1]


def invariant_lines(q, rng=0, tol=1e-8, cluster_tol=1e-6, retries=2):
    """All invariant lines of the QuadraticSystem q: solutions [xi] of v(xi) = c xi in CP^{p-1}.

    Returns InvariantLines (iterable of InvariantLine) with total_multiplicity, real_count,
    positive_dimensional (list of FamilyWitness) and certified. If a run is not certified (a
    failed path or a count that is off) it is repeated with new random gamma and patch, up to
    `retries` times.
    """
    best = None
    seeds = np.random.default_rng(rng).integers(0, 2 ** 31, size=retries + 1)
    for seed in seeds:
        res = _solve_once(q, int(seed), tol, cluster_tol)
        if res.certified:
            return res
        if best is None or res.failed_paths < best.failed_paths:
            best = res
    return best


def _solve_once(q, seed, tol, cluster_tol):
    p = q.p
    scale = max(np.abs(q.Q).max(), 1e-300)
    if np.abs(q.Q).max() == 0:
        w = FamilyWitness(np.eye(p)[0].astype(complex), 0.0, p - 1, True, 2 ** p - 1)
        return InvariantLines([], [w], p, 0, None)
    hom = QuadraticEigenHomotopy(q.Q / scale, rng=seed)
    pr = hom.solve()
    zs = pr.z
    ok = pr.converged & np.all(np.isfinite(zs), axis=1)
    failed = int((~ok).sum())
    idx = np.nonzero(ok)[0]
    labels = _cluster(zs[idx], cluster_tol)
    lines, fams = [], []
    trivial_seen = 0
    atol = tol * scale
    cand = []
    for lab in range(labels.max() + 1 if labels.size else 0):
        members = idx[labels == lab]
        z = zs[members].mean(axis=0)
        xi, c = z[:-1], z[-1] * scale
        if np.linalg.norm(xi) < 1e-6 * abs(z[-1]):
            trivial_seen += len(members)
            continue
        mult = len(members)
        if mult > 1 and np.all(pr.regular[members]):
            failed += mult                  # two paths on one regular root: a path jumped
            continue
        if not np.all(pr.regular[members]):
            dim = _local_dimension(hom, z)
            if dim > 0:
                d, cc = _normalise(xi, c, atol)
                fams.append(FamilyWitness(d, complex(cc), dim, bool(abs(cc) <= atol), mult))
                continue
        cand.append((members, mult, *_normalise(xi, c, atol)))
    simple = [i for i, cd in enumerate(cand) if cd[1] == 1]
    if simple:
        X, C = _polish(q, np.array([cand[i][2] for i in simple]), np.array([cand[i][3] for i in simple]))
        for j, i in enumerate(simple):
            cand[i] = cand[i][:2] + _normalise(X[j], C[j], atol)
    for members, mult, d, cc in cand:
        is_real = bool(np.all(np.abs(d.imag) < 1e-7) and abs(np.imag(cc)) < 1e-7 * scale)
        if is_real:
            d, cc = d.real.copy(), float(np.real(cc))
        d = np.where(np.abs(d.real) < 1e-15, 0, d.real) + (
            1j * np.where(np.abs(d.imag) < 1e-15, 0, d.imag) if np.iscomplexobj(d) else 0)
        eigs = _sphere_eigs(q, d, cc) if is_real else None
        lines.append(InvariantLine(d, cc, mult, is_real, 0.0,
                                   tuple(int(m) for m in pr.cycle[members]), eigs, atol))
    if lines:                                   # |v(xi) - c xi| / |xi|^2, all lines at once
        D = np.array([L.direction for L in lines], dtype=complex)
        C = np.array([L.c for L in lines], dtype=complex)
        R = np.linalg.norm(q.v(D) - C[:, None] * D, axis=1) / np.linalg.norm(D, axis=1) ** 2
        for L, r in zip(lines, R):
            L.residual = float(r)
    fams = _merge_linear_families(hom, fams, scale)
    if trivial_seen != 1:
        failed += abs(trivial_seen - 1)
    lines.sort(key=lambda L: (not L.is_real, -abs(L.c), tuple(np.real(L.direction))))
    return InvariantLines(lines, fams, p, failed, pr)

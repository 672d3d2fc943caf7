"""Benchmark: invariant lines v(xi) = c xi of random quadratic systems by homotopy continuation.

Part 1, timing. For p = 2..8, random systems Q ~ N(0, 1) (200 per p, 50 for p = 7, 8): fraction
certified (target 100 %), of it by the alpha test alone, max residual |v(xi) - c xi| / |xi|^2
(target 1e-12), median and max wall time per system (targets: median < 0.1 s for p <= 6, < 1 s for
p = 8), and, interleaved on the same systems, the median time of the tracking alone (equilibrate +
the 2^p paths), so that the cost of the certification is the ratio of the two. Side by side:
- the exact sympy path (servo.quadratic.exact: binary cubic for p = 2, Groebner + fglm for
  p = 3, 4) on integer systems, with agreement of the line sets;
- the PyPI package `bertini` (Bertini 2 binding), a comparator only, if importable: the affine
  system v(eta) = eta, whose finite roots are eta = 0 and one eta per line with c != 0.

Part 2 (``--fuzz N``, run alone, own section): the fuzz, in benchmarks/_lines_fuzz.py (its docstring says what it
draws and checks); ``--large`` and ``--bertini-hard``: benchmarks/_lines_large.py; the Bertini 2 comparator:
benchmarks/_lines_bertini.py. Results go to benchmarks/RESULTS.md (section invariant_lines, and the sections
each part names).

Run: .venv/bin/python benchmarks/invariant_lines.py [--quick]; ... --fuzz N [--seed S]
OPENBLAS_NUM_THREADS defaults to 1 here: with 2 threads the many tiny batched solves were 3-8x
slower on the shared 2-core machine.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _results import markdown_table, update_section  # noqa: E402

from servo import QuadraticSystem  # noqa: E402
from servo.quadratic.certify import equilibrate  # noqa: E402
from servo.quadratic.exact import compare_with_exact, exact_invariant_lines  # noqa: E402
from servo.quadratic.homotopy import QuadraticEigenHomotopy  # noqa: E402

COUNTS = {2: 200, 3: 200, 4: 200, 5: 200, 6: 200, 7: 50, 8: 50}
SYMPY = {2: 20, 3: 4, 4: 1}
BERTINI = {2: 10, 3: 10, 4: 5, 5: 3, 6: 2, 7: 1, 8: 1}


def homotopy_stats(p, n):
    """Per system, interleaved: the full invariant_lines and the tracking alone (same seed)."""
    times, track, cert, alpha, res, lines = [], [], 0, 0, 0.0, []
    for k in range(n):
        q = QuadraticSystem(np.random.default_rng([7, p, k]).normal(size=(p, p, p)))
        t0 = time.perf_counter()
        L = q.invariant_lines()
        times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        Qs, w, _, _ = equilibrate(q.Q)
        QuadraticEigenHomotopy(Qs, rng=int(np.random.default_rng(0).integers(0, 2 ** 31)), w=w).solve()
        track.append(time.perf_counter() - t0)
        cert += L.certified
        alpha += L.certificate == "alpha"
        res = max(res, L.max_residual)
        lines.append(L)
    return np.array(times), np.array(track), cert / n, alpha / n, res, lines


def same(L, E):
    return not compare_with_exact(L, E)


def sympy_stats(p, n):
    times, agree = [], 0
    for k in range(n):
        q = QuadraticSystem(np.random.default_rng([11, p, k]).integers(-3, 4, size=(p, p, p)).astype(float))
        t0 = time.perf_counter()
        E = exact_invariant_lines(q)
        times.append(time.perf_counter() - t0)
        agree += same(q.invariant_lines(), E)
    return np.array(times), agree
from _lines_bertini import bertini_stats  # noqa: E402
from _lines_fuzz import fuzz_report, merge_parts, recheck, write_fuzz  # noqa: E402
from _lines_large import bertini_hard, large_report  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a tenth of the systems, no RESULTS.md update")
    ap.add_argument("--fuzz", type=int, default=0, help="run only the fuzz, on this many systems")
    ap.add_argument("--seed", type=int, default=0, help="seed of the fuzz run")
    ap.add_argument("--large", action="store_true", help="p = 10, 12, 14 with the certificate, and Bertini 2 "
                    "(own section invariant_lines_large)")
    ap.add_argument("--pmax", type=int, default=14, help="with --large: the largest p run")
    ap.add_argument("--bertini-pmax", type=int, default=0, help="with --large: run Bertini 2 up to this p (its "
                    "total-degree run took 4.9 s at p = 6 and 160 s at p = 8 here, one system each)")
    ap.add_argument("--high", action="store_true", help="with --fuzz: p = 4, 5, 6, each answer checked against a "
                    "second solve in other coordinates (own section invariant_lines_fuzz_high)")
    ap.add_argument("--wide", action="store_true", help="with --fuzz: the wide-scale p = 3 systems of issue 25 "
                    "(entries +-{1, 2, 3} 2^e, |e| <= 40); printed only")
    ap.add_argument("--bertini-hard", action="store_true", help="ours against Bertini 2 on the hard systems of "
                    "issue 25 and a few plain ones (own section invariant_lines_bertini; skipped without bertini)")
    ap.add_argument("--save", default="", help="with --fuzz: also write the counts to this JSON file (a part)")
    ap.add_argument("--merge", nargs="+", default=[], help="merge the JSON parts of --fuzz ... --save runs (distinct "
                    "seeds, same kind) and write the RESULTS section from all of them")
    ap.add_argument("--recheck", nargs="+", default=[], help="with --merge: the logs of those runs; every system "
                    "they list as uncertified is solved again on this tree (and checked by second solves), and the "
                    "section gives both counts")
    args = ap.parse_args(argv)
    if args.recheck and not args.merge:
        raise SystemExit("--recheck needs --merge (the parts whose uncertified systems the logs list)")
    if args.merge:
        parts = merge_parts(args.merge)
        return write_fuzz(parts, args, recheck(args.recheck, parts) if args.recheck else None)
    if args.bertini_hard:
        try:
            import bertini  # noqa: F401
        except Exception as exc:                  # a comparator only: skipped cleanly without it
            print(f"--bertini-hard skipped: bertini not available ({exc})")
            return None
        return bertini_hard(args)
    try:
        import bertini  # noqa: F401
        have_bertini = True
    except Exception as exc:                      # a comparator only
        have_bertini = False
        print(f"bertini not available: {exc}")
    if args.fuzz:
        return fuzz_report(args)
    if args.large:
        return large_report(args, have_bertini)
    rows = []
    for p, n in COUNTS.items():
        n = max(3, n // 10) if args.quick else n
        t, tr, cert, alpha, res, lines = homotopy_stats(p, n)
        row = [p, n, f"{cert:.1%}", f"{alpha:.1%}", f"{res:.1e}", f"{np.median(t):.3f}", f"{t.max():.3f}",
               f"{np.median(tr):.3f}", f"{np.median(t) / np.median(tr):.2f}"]
        if p in SYMPY:
            ts, ag = sympy_stats(p, SYMPY[p])
            row += [f"{ag}/{SYMPY[p]} agree, median {np.median(ts):.2f} s"]
        else:
            row += ["not run (Groebner cost grows steeply: see p = 4)"]
        if have_bertini and p in BERTINI:
            tb, ag = bertini_stats(p, lines[:BERTINI[p]])
            row += [f"{ag}/{BERTINI[p]} agree, median {np.median(tb):.3f} s"]
        else:
            row += ["-"]
        rows.append(row)
        print(" | ".join(map(str, row)), flush=True)
    header = ["p", "systems", "certified", "by alpha test", "max residual", "median s", "max s",
              "tracking only, median s", "full / tracking", "sympy exact (integer Q)", "bertini 2.0.0 (PyPI)"]
    table = markdown_table(header, rows)
    print(table)
    if not args.quick:
        note = ("Homotopy continuation in numpy (servo.quadratic.invariant_lines), all 2^p paths in one batch, "
                "on the equilibrated system, then every line certified a posteriori (Smale's alpha test "
                "for simple lines, exact rational arithmetic for singular ones; see InvariantLines.certificate); "
                "targets: 100 % certified, residual < 1e-12, median < 0.1 s for p <= 6 and < 1 s for "
                "p = 8, small cost of certification (full / tracking, same systems, interleaved). Wall "
                "times on a 2-core machine shared with other jobs (load average 5-11 during this run), "
                "OPENBLAS_NUM_THREADS=1.")
        update_section("invariant_lines", "## Invariant lines (issue 4)\n\n" + note + "\n\n" + table,
                       ".venv/bin/python benchmarks/invariant_lines.py")


if __name__ == "__main__":
    main()

"""The fuzz of benchmarks/invariant_lines.py (``--fuzz N [--high] --seed S [--save PART]``, ``--merge PARTS
[--recheck LOGS]``): N systems (p = 2 for 9 in 10, p = 3 otherwise; with --high p = 4, 5, 6; the issue asks for
10^4 and 10^3, `make fuzz-lines`) of three kinds: integer entries in [-3, 3] with 30 % zeros; mixed scale
(entries +-{1, 2, 3} * 2^e, e uniform in [-66, 66], 30 % zeros); degenerate (a variable absent from some terms,
one entry plus 2^27, v = l(x) A x with a family of equilibria, 70 % zeros, an integer system times 10^8).
At p = 2, 3 every certified answer is compared with the exact path (servo.quadratic.exact, itself verified:
binary cubic for p = 2, Groebner for p = 3) by exact.compare_with_exact (count, reality, multiplicities, c,
directions), and an answer certified "exact" (its multiple lines from that same path) also by another way
(``independent_check``); at p = 4..6 with a second solve in other coordinates. Target: 0 certified-but-wrong, >= 99.9 %
certified. Certified answers that cannot be checked are counted apart. Parts (``--save``) are merged into the
sections invariant_lines_fuzz / invariant_lines_fuzz_high of benchmarks/RESULTS.md."""
from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _results import markdown_table, update_section  # noqa: E402

from servo import QuadraticSystem  # noqa: E402
from servo.errors import ExactCheckError  # noqa: E402
from servo.quadratic.exact import compare_with_exact, exact_invariant_lines  # noqa: E402


KINDS = ("integer", "mixed", "degenerate")
#: the wide-scale systems of issue 25: p = 3, entries +-{1, 2, 3} 2^e, e uniform in [-40, 40], 30 % zeros
WIDE_EXPONENT = 40
#: the mixed-scale kind of the fuzz: entries +-{1, 2, 3} 2^e, e uniform in [-66, 66] (1e-20..1e20, issue 25;
#: it was [-27, 27], 1e-8..1e8, before)
MIXED_EXPONENT = 66


def fuzz_system(kind, p, rng):
    """One random system of the given kind (see the module docstring), Q exactly symmetric in (j, k)."""
    Q = rng.integers(-3, 4, size=(p, p, p)).astype(float)
    if kind == "integer":
        Q[rng.random(Q.shape) < 0.3] = 0
    elif kind in ("mixed", "wide"):
        e = MIXED_EXPONENT if kind == "mixed" else WIDE_EXPONENT
        Q = (rng.integers(1, 4, size=Q.shape) * rng.choice([-1, 1], size=Q.shape)
             * np.ldexp(1.0, rng.integers(-e, e + 1, size=Q.shape)))
        Q[rng.random(Q.shape) < 0.3] = 0
    else:
        mode = int(rng.integers(0, 5))
        if mode == 0:                                   # a variable absent from some terms
            Q[:, int(rng.integers(p)), :] = 0
            Q[:, :, int(rng.integers(p))] = 0
        elif mode == 1:                                 # one huge entry
            Q[tuple(rng.integers(0, p, 3))] += 2.0 ** 27
        elif mode == 2:                                 # v = l(x) A x: a family of equilibria
            Q = np.einsum("j,ik->ijk", rng.integers(-2, 3, p), rng.integers(-2, 3, (p, p))).astype(float)
        elif mode == 3:
            Q[rng.random(Q.shape) < 0.7] = 0
        else:
            Q *= 1e8
    J, K = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
    return QuadraticSystem(np.where((J <= K)[None], Q, Q.transpose(0, 2, 1)))


def transformed(q, rng):
    """The system in the coordinates x = T y, T = P D (P a permutation, D random signs times powers of 2 in
    [2^-8, 2^8]): Q'[i] = sum_a T^-1[i, a] Q[a](T., T.), exact in floats. Its lines are eta = T^-1 xi with the
    same c: an independent second solve (other paths, other seed) for the systems the exact path cannot do."""
    p = q.p
    perm = rng.permutation(p)
    dexp = rng.integers(-8, 9, size=p)
    sign = rng.choice([-1.0, 1.0], size=p)
    T = np.zeros((p, p))
    T[perm, np.arange(p)] = sign * np.ldexp(1.0, dexp)
    Ti = np.linalg.inv(T)                               # a signed permutation of powers of 2: exact
    Q2 = np.einsum("ia,ajk,jb,kc->ibc", Ti, q.Q, T, T)
    return QuadraticSystem(Q2), T


def compare_transformed(L, L2, T, rtol=1e-6):
    """Disagreements between the lines L of q and L2 of the transformed system (eta = T^-1 xi, same c)."""
    out = []
    if L.total_multiplicity != L2.total_multiplicity or L.real_count != L2.real_count:
        out.append(f"counts {L.total_multiplicity}/{L.real_count} real vs {L2.total_multiplicity}/{L2.real_count}")
    for l2 in L2:
        xi = T @ l2.direction
        n = np.linalg.norm(xi)
        d, c = xi / n, l2.c / n
        # c = 0 is a convention below a tolerance relative to each system's scale (InvariantLine.tol), not part of
        # the proof: a c under the threshold of one system may be over it in the other; allow both thresholds
        tol2 = l2.tol * np.abs(T).max() / n
        hit = [l for l in L if abs(abs(np.vdot(l.direction, d)) - 1) < rtol and l.multiplicity == l2.multiplicity
               and l.is_real == l2.is_real and abs(abs(l.c) - abs(c)) <= rtol * abs(c) + 2 * (l.tol + tol2)]
        if not hit:
            out.append(f"line {np.round(d, 6)} (c = {complex(c):.6g}) of the transformed system not found")
    return out


def fuzz(n, seed=0, log=print, wide=False, high=False, progress=None, every=25):
    """Run n fuzz systems; returns {(kind, p): counts} and the wrong cases (kind, p, Q, problems).
    wide=True: the wide-scale kind only, p = 3. high=True: p = 4, 5, 6 in turn, each certified answer checked
    against a second solve in other coordinates (``transformed``), the exact path being too slow there."""
    rng = np.random.default_rng(seed)
    stats, wrong = {}, []
    uncertified = []                                  # (kind, p, reason): every one is listed in the report
    for k in range(n):
        if progress is not None and k and k % every == 0:
            progress(stats, wrong, uncertified, k)     # a part cut short still counts the systems it did
        if k and k % 250 == 0:
            log(f"{k}/{n} systems, {sum(s['wrong'] for s in stats.values())} certified but wrong so far")
        kind = "wide" if wide else KINDS[k % 3]
        p = 3 if wide else (4 + (k // 3) % 3) if high else 2 if rng.random() < 0.9 else 3
        q = fuzz_system(kind, p, rng)
        s = stats.setdefault((kind, p), dict(n=0, alpha=0, count=0, family=0, ball=0, exact=0, wrong=0, unchecked=0,
                                             noreason=0))
        s["n"] += 1
        try:
            L = q.invariant_lines()
        except Exception as exc:                      # a crash is an answer without a reason: counted, run goes on
            s["noreason"] += 1
            uncertified.append((kind, p, f"CRASH {type(exc).__name__}: {exc}"))
            log(f"CRASH {kind} p={p}: {type(exc).__name__}: {exc} Q={q.Q.tolist()}")
            continue
        if not L.certified:
            s["noreason"] += not L.reason.strip()
            uncertified.append((kind, p, L.reason))
            log(f"uncertified {kind} p={p}: {L.reason} Q={q.Q.tolist()}")
            continue
        s[{"alpha": "alpha", "alpha+count": "count", "family": "family", "krawczyk": "ball",
           "krawczyk+count": "ball", "alpha+krawczyk": "ball", "exact": "exact",
           "alpha+multiplicity": "exact", "krawczyk+multiplicity": "exact"}[L.certificate]] += 1
        if high:
            q2, T = transformed(q, rng)
            L2 = q2.invariant_lines(seed=k + 1)
            if not L2.certified:
                s["unchecked"] += 1
                log(f"unchecked {kind} p={p}: the transformed system is not certified ({L2.reason}) Q={q.Q.tolist()}")
                continue
            bad = compare_transformed(L, L2, T)
            if bad:
                s["wrong"] += 1
                wrong.append((kind, p, q.Q.tolist(), bad))
                log(f"WRONG {kind} p={p} {L.certificate}: {bad} Q={q.Q.tolist()}")
            continue
        try:
            E = exact_invariant_lines(q, dyadic=True)
        except ExactCheckError as exc:
            s["unchecked"] += 1
            log(f"unchecked {kind} p={p}: {exc}")
            continue
        bad = compare_with_exact(L, E)
        if not bad and L.certificate == "exact":
            bad, why = independent_check(q, L, np.random.default_rng([seed, k]), k)  # the draw of systems unchanged
            if why:
                s["unchecked"] += 1
                log(f"unchecked {kind} p={p}: {why} Q={q.Q.tolist()}")
                continue
        if bad:
            s["wrong"] += 1
            wrong.append((kind, p, q.Q.tolist(), bad))
            log(f"WRONG {kind} p={p} {L.certificate}: {bad} Q={q.Q.tolist()}")
    return stats, wrong, uncertified


def independent_check(q, L, rng, k):
    """An answer certified "exact" takes its multiple lines from the exact path, the same code as the check: it is
    also checked by another way (disagreements, why it could not be): at p = 2 the Groebner path (the library's
    fallback and the default check use the binary cubic), at p = 3 a second solve of the system in other
    coordinates (``transformed``: other paths, another chart and separating form if it goes to the exact path)."""
    if q.p == 2:
        try:
            return compare_with_exact(L, exact_invariant_lines(q, method="groebner", dyadic=True)), ""
        except ExactCheckError as exc:
            return [], f"the Groebner path cannot check the binary cubic's answer ({exc})"
    q2, T = transformed(q, rng)
    L2 = q2.invariant_lines(seed=k + 1)
    if not L2.certified:
        return [], f"the transformed system is not certified ({L2.reason})"
    return compare_transformed(L, L2, T), ""


STAT_KEYS = ("n", "alpha", "count", "family", "ball", "exact", "unchecked", "wrong", "noreason")


def fuzz_report(args):
    """Run the fuzz (``--fuzz N --seed S``); with ``--save FILE`` its counts go to a JSON part (merged later by
    ``--merge``), otherwise straight into the RESULTS section."""
    t0, c0 = time.perf_counter(), time.process_time()
    commit = _commit()

    def part_of(stats, wrong, uncertified, done):
        return dict(n=done, seeds=[args.seed], high=bool(args.high), wide=bool(args.wide),
                    minutes=(time.perf_counter() - t0) / 60, cpu_minutes=(time.process_time() - c0) / 60,
                    commit=commit, stats={f"{k}|{p}": s for (k, p), s in stats.items()}, wrong=wrong,
                    uncertified=uncertified, complete=done == args.fuzz)

    def save(*state):            # the part so far, rewritten every few systems (a run may be stopped early)
        if args.save:
            Path(args.save).write_text(json.dumps(part_of(*state)))
    stats, wrong, uncertified = fuzz(args.fuzz, args.seed, wide=args.wide, high=args.high,
                                     log=lambda *a: print(*a, flush=True), progress=save)
    part = part_of(stats, wrong, uncertified, args.fuzz)
    if args.save:
        Path(args.save).write_text(json.dumps(part))
        print(f"part saved to {args.save}")
    write_fuzz([part], args)


def _commit():
    """The commit of the tree the fuzz ran on (with '+' when the tree had changes), or '?'."""
    import subprocess
    try:
        root = Path(__file__).resolve().parents[1]
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
        return rev + ("+" if dirty else "")
    except Exception:                             # not a git checkout: the figure still stands
        return "?"


def merge_parts(files):
    """The JSON parts of ``--save`` runs (same kind of fuzz, distinct seeds), checked and listed in seed order."""
    parts = [json.loads(Path(f).read_text()) for f in files]
    if len({(q["high"], q["wide"]) for q in parts}) != 1:
        raise SystemExit("--merge: the parts are of different fuzz kinds (--high / --wide)")
    seeds = [s for q in parts for s in q["seeds"]]
    if len(set(seeds)) != len(seeds):
        raise SystemExit(f"--merge: a seed occurs in two parts ({sorted(seeds)})")
    return sorted(parts, key=lambda q: q["seeds"][0])


def recheck(logs, parts, checks=3):
    """The systems the fuzz logs list as uncertified (lines 'uncertified KIND p=P: REASON Q=[...]'), solved again
    on this tree; each certified answer is compared with ``checks`` second solves in other coordinates (as the
    fuzz does). Returns dict(n, certified, wrong, unchecked, rows, commit, minutes)."""
    t0 = time.perf_counter()
    systems = []
    for log in logs:
        # a record can span several lines (a reason may print a numpy array); Q is its last, JSON, part
        for m in re.finditer(r"^((?:uncertified|CRASH) \w+ p=\d+):.*? Q=(\[\[\[.*?\]\]\])", Path(log).read_text(),
                             re.S | re.M):
            systems.append((m.group(1), np.array(json.loads(m.group(2)))))
    listed = sum(len(q["uncertified"]) for q in parts)
    if len(systems) != listed:
        raise SystemExit(f"--recheck: the logs list {len(systems)} uncertified systems, the parts {listed}")
    out = dict(n=len(systems), certified=0, wrong=0, unchecked=0, rows=[], commit=_commit())
    for k, (what, Q) in enumerate(systems):
        q = QuadraticSystem(Q)
        t = time.perf_counter()
        L = q.invariant_lines()
        secs = time.perf_counter() - t
        verdict = "not certified: " + L.reason[:200] if not L.certified else "checked"
        if L.certified:
            out["certified"] += 1
            rng = np.random.default_rng(10_000 + k)
            for s in range(checks):
                q2, T = transformed(q, rng)
                L2 = q2.invariant_lines(seed=s + 1)
                if not L2.certified:
                    verdict = f"second solve {s + 1} not certified"
                    out["unchecked"] += 1
                    break
                bad = compare_transformed(L, L2, T)
                if bad:
                    verdict = f"WRONG: {bad}"
                    out["wrong"] += 1
                    break
        out["rows"].append([what, L.certificate or "-", f"{secs:.1f}", verdict])
        print(" | ".join(out["rows"][-1]), flush=True)
    out["minutes"] = (time.perf_counter() - t0) / 60
    return out


def write_fuzz(parts, args, rechecked=None):
    """The fuzz table (printed; into RESULTS.md unless --quick or --wide) from one or more parts."""
    stats = {}
    for q in parts:
        for key, s in q["stats"].items():
            kind, p = key.split("|")
            t = stats.setdefault((kind, int(p)), dict.fromkeys(STAT_KEYS, 0))
            for k in STAT_KEYS:
                t[k] += s[k]
    high = parts[0]["high"]
    frows = []
    for (kind, p), s in sorted(stats.items()):
        cert = s["alpha"] + s["count"] + s["family"] + s["ball"] + s["exact"]
        frows.append([kind, p, s["n"], f"{cert} ({cert / s['n']:.2%})", s["alpha"], s["count"], s["family"],
                      s["ball"], s["exact"], s["unchecked"], s["wrong"], s["noreason"]])
    tot = {k: sum(s[k] for s in stats.values()) for k in STAT_KEYS}
    cert = tot["alpha"] + tot["count"] + tot["family"] + tot["ball"] + tot["exact"]
    frows.append(["all", "4, 5, 6" if high else "2, 3", tot["n"], f"{cert} ({cert / tot['n']:.2%})", tot["alpha"],
                  tot["count"], tot["family"], tot["ball"], tot["exact"], tot["unchecked"], f"**{tot['wrong']}**",
                  tot["noreason"]])
    ftable = markdown_table(["kind", "p", "systems", "certified", "alpha", "alpha+count", "family",
                             "krawczyk (ball arithmetic)", "exact (multiple lines; multiplicities proved)",
                             "certified, exact path cannot check", "certified but wrong",
                             "uncertified without a reason"], frows)
    print(ftable)
    rate = cert / tot["n"]
    wrong = tot["wrong"]
    again = ""
    if rechecked is not None:
        # the systems left uncertified, solved again on this tree: the rate counts them as this tree answers them
        cert += rechecked["certified"] - rechecked["wrong"]
        wrong += rechecked["wrong"]
        again = (f"; the {rechecked['n']} uncertified system(s) solved again at {rechecked['commit']} "
                 f"({rechecked['minutes']:.1f} min): {rechecked['certified']} certified, each checked against "
                 f"{3} second solves in other coordinates ({rechecked['wrong']} wrong, {rechecked['unchecked']} "
                 f"unchecked), so {cert} of {tot['n']} certified ({cert / tot['n']:.2%})")
        rate = cert / tot["n"]
    verdict = (f"Targets (issue 25): 0 certified-but-wrong: {'met' if wrong == 0 else 'NOT met'} "
               f"({wrong}); >= 99.9 % certified: {'met' if rate >= 0.999 else 'NOT met'} ({rate:.2%}{again}); every "
               f"uncertified answer with its reason: {'met' if tot['noreason'] == 0 else 'NOT met'}.")
    print(verdict)
    minutes = sum(q["minutes"] for q in parts)
    cpu = sum(q.get("cpu_minutes", 0.0) for q in parts)
    seeds = ", ".join(f"{q['seeds'][0]} ({q['n']}{'' if q.get('complete', True) else ', stopped early'})"
                      for q in parts)
    commits = ", ".join(sorted({q["commit"] for q in parts}))
    runs = (f"{len(parts)} part(s) by seed (systems per seed: {seeds}), {minutes:.1f} min wall, {cpu:.1f} min CPU, "
            f"at commit {commits}")
    why = "; ".join(f"{kind} p = {p}: {reason}" for q in parts for kind, p, reason in q["uncertified"])
    unc = f" The uncertified answers and their reasons: {why}." if why else ""
    if rechecked is not None:
        ftable += "\n\n" + markdown_table(["uncertified at the run (kind, p)", "certificate now", "s",
                                            "check against second solves"], rechecked["rows"])
    if args.quick or args.wide:
        return
    cmd = (" ".join(["--merge"] + list(args.merge) + (["--recheck"] + list(args.recheck) if args.recheck else []))
           if args.merge else
           f"--fuzz {args.fuzz}{' --high' if high else ''} --seed {args.seed}")
    if high:
        fnote = (f"**Fuzz at p = 4, 5, 6, {tot['n']} systems** ({runs}; kinds as below, mixed scale 1e-20..1e20): the "
                 f"exact path is too slow at p >= 4 but for small coefficients, so every certified answer is "
                 f"compared with a certified second solve of the same system in other coordinates (x = P D y, P a "
                 f"permutation, D signed powers of 2, another seed), line by line. " + verdict + unc)
        update_section("invariant_lines_fuzz_high", "## Invariant lines: fuzz at p = 4..6\n\n" + fnote + "\n\n"
                       + ftable, f".venv/bin/python benchmarks/invariant_lines.py {cmd}")
    else:
        fnote = (f"**Fuzz, {tot['n']} systems** ({runs}; mixed scale 1e-20..1e20): every certified answer compared "
                 f"with the verified exact path (count, reality decided exactly, multiplicities, c, directions; the "
                 f"coordinates from the rational univariate representation in ball arithmetic), and an answer "
                 f"certified \"exact\" also by another way (p = 2: the Groebner path against the binary cubic the "
                 f"library's fallback used; p = 3: a certified second solve in other coordinates). "
                 + verdict + " Uncertified answers are not counted as wrong." + unc)
        update_section("invariant_lines_fuzz", "## Invariant lines: fuzz against the exact path\n\n" + fnote
                       + "\n\n" + ftable, f".venv/bin/python benchmarks/invariant_lines.py {cmd}")


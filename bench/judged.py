"""Coverage of the judge-corrected success rate's intervals, by simulation (issue 38).

The grid: true success rate 0.2 / 0.5 / 0.8; the judge's sensitivity and specificity each 0.7 /
0.85 / 0.95 (all nine pairs); 500 judged trials; 50, 100 and 200 of them labelled by a simple
random sample: 81 cells. Each replicate draws the trials' true outcomes, the judge's verdicts
(with the cell's error rates) and the labelled sample, then calls the real estimator
(``JudgedTrials.corrected_rate``, what ``corrected_success_rate`` calls) once per method; the
raw judged rate's Wilson interval is beside. A refused estimate counts as not covering. The
table gives, per method, the mean coverage over the grid (and at each label count), the lowest
cell, the cells that never covered, every cell outside 93-97 % with where its misses fell (below
/ above the truth) and how often a verdict's labels all agreed (a stratum whose spread is
estimated as 0), and the mean widths side by side.

    python bench/judged.py            # quick: 200 replicates a cell (about 35 s of CPU)
    python bench/judged.py --full     # 2,000 replicates a cell (the README's table, ~6 min CPU)
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import math
import random
import sys
import time

from ek.agents.judge import JudgedTrials
from ek.stats import wilson_interval

N_TRIALS = 500
RATES = (0.2, 0.5, 0.8)
ACCURACIES = (0.7, 0.85, 0.95)
LABELS = (50, 100, 200)
METHODS = ("ppi++", "ppi++-asymptotic", "rogan-gladen", "labels-only")
SHOWN = {
    "ppi++": "ppi++ (ek default)",
    "ppi++-asymptotic": "ppi++-asymptotic (ppi-python)",
    "rogan-gladen": "rogan-gladen",
    "labels-only": "labels only",
    "rogan-gladen-bootstrap": "rogan-gladen bootstrap",
    "raw": "raw judged rate (Wilson)",
}


def draw(rng: random.Random, theta: float, sens: float, spec: float, n: int) -> tuple:
    """One replicate as the six counts :class:`JudgedTrials` holds: the n labelled trials'
    (label, verdict) kinds and the unlabelled trials' verdicts. The labels are a simple random
    sample of N independent trials, so the labelled trials are n independent draws of (truth,
    verdict) and the rest N - n independent verdicts."""
    p11, p10 = theta * sens, theta * (1 - sens)
    p01 = (1 - theta) * (1 - spec)
    cuts = (p11, p11 + p10, p11 + p10 + p01)
    lab = [0, 0, 0, 0]
    for _ in range(n):
        lab[bisect.bisect(cuts, rng.random())] += 1
    judged_pass = p11 + p01
    u1 = sum(rng.random() < judged_pass for _ in range(N_TRIALS - n))
    return (*lab, u1, N_TRIALS - n - u1)


def flat_stratum(counts: tuple) -> bool:
    """True when, within a judge verdict, every label agrees (that stratum's spread reads 0)."""
    a, b, c, d = counts[:4]
    return (a + c > 0 and a * c == 0) or (b + d > 0 and b * d == 0)


class Tally:
    """Coverage, misses below / above and widths of one method in one cell."""

    def __init__(self) -> None:
        self.n = self.covered = self.below = self.above = self.refused = 0
        self.flat_misses = 0
        self.widths: list[float] = []

    def add(self, low: float, high: float, theta: float, flat: bool) -> None:
        self.n += 1
        if math.isnan(low) or math.isnan(high):
            self.refused += 1
            return
        self.widths.append(high - low)
        if low <= theta <= high:
            self.covered += 1
        else:
            self.below += high < theta
            self.above += low > theta
            self.flat_misses += flat

    @property
    def coverage(self) -> float:
        return self.covered / self.n

    @property
    def width(self) -> float:
        return math.fsum(self.widths) / len(self.widths) if self.widths else math.nan


def run_cell(rng, theta, sens, spec, n, reps, boot_reps):
    tallies = {m: Tally() for m in (*METHODS, "raw", "rogan-gladen-bootstrap")}
    for r in range(reps):
        counts = draw(rng, theta, sens, spec, n)
        trials = JudgedTrials.from_counts(counts)
        flat = flat_stratum(counts)
        for m in METHODS:
            iv = trials.corrected_rate(method=m).interval
            tallies[m].add(iv.low, iv.high, theta, flat)
        w = wilson_interval(counts[0] + counts[2] + counts[4], N_TRIALS)
        tallies["raw"].add(w.low, w.high, theta, flat)
        if r < boot_reps:
            iv = trials.corrected_rate(
                method="rogan-gladen-bootstrap", n_resamples=500, seed=r
            ).interval
            tallies["rogan-gladen-bootstrap"].add(iv.low, iv.high, theta, flat)
    return tallies


def report(results, shown_methods, reps):
    print(f"\n## Coverage of the 95 % intervals ({reps} replicates a cell, {len(results)} cells)\n")
    print("| method | mean coverage | by labels | lowest cell | cells < 92 % | cells outside 93-97 % | cells never covering | mean width by labels |")  # fmt: skip
    print("|---|---:|---|---:|---:|---:|---:|---|")
    label_counts = sorted({key[3] for key in results})
    for m in shown_methods:
        covs = [t[m].coverage for t in results.values() if t[m].n]
        if not covs:
            continue
        widths, by_labels = [], []
        for n in label_counts:
            cells = [t[m] for key, t in results.items() if key[3] == n and t[m].n]
            widths.append(f"{math.fsum(c.width for c in cells) / len(cells):.3f}")
            by_labels.append(f"{100 * math.fsum(c.coverage for c in cells) / len(cells):.1f}")
        outside = sum(1 for c in covs if not 0.93 <= c <= 0.97)
        print(
            f"| {SHOWN[m]} | {100 * sum(covs) / len(covs):.1f} % | {' / '.join(by_labels)} | "
            f"{100 * min(covs):.1f} % | {sum(c < 0.92 for c in covs)} | {outside} | "
            f"{sum(c == 0 for c in covs)} | {' / '.join(widths)} |"
        )


def outside_cells(results, method):
    print(f"\n### {SHOWN[method]}: cells outside 93-97 %\n")
    print("| rate | sens | spec | labels | coverage | misses below / above | refused | misses with a flat stratum |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---|---:|---:|")
    for key, t in sorted(results.items(), key=lambda kv: (kv[0][3], kv[0][:3])):
        x = t[method]
        if x.n and not 0.93 <= x.coverage <= 0.97:
            misses = x.n - x.covered - x.refused
            flat = f"{x.flat_misses}/{misses}" if misses else "-"
            print(
                f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {100 * x.coverage:.1f} % | "
                f"{x.below} / {x.above} | {x.refused} | {flat} |"
            )


def narrower(results):
    bad = [k for k, t in results.items() if not t["ppi++"].width < t["labels-only"].width]
    print(
        f"\nppi++ narrower than the labels alone (mean width) in {len(results) - len(bad)} of "
        f"{len(results)} cells" + (f"; not in {bad}" if bad else "")
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="2,000 replicates a cell")
    ap.add_argument("--reps", type=int, default=None, help="replicates a cell (default 200)")
    ap.add_argument(
        "--bootstrap", type=int, default=0, help="replicates a cell for the bootstrap (slow)"
    )
    ap.add_argument("--labels", type=int, nargs="*", default=list(LABELS))
    ap.add_argument("--seed", type=int, default=20261203)
    args = ap.parse_args(argv)
    reps = args.reps or (2000 if args.full else 200)
    rng = random.Random(args.seed)
    results = {}
    start = time.process_time()
    for n in args.labels:
        for theta, sens, spec in itertools.product(RATES, ACCURACIES, ACCURACIES):
            results[(theta, sens, spec, n)] = run_cell(
                rng, theta, sens, spec, n, reps, min(args.bootstrap, reps)
            )
        print(f"{n} labels done ({time.process_time() - start:.0f} s CPU)", file=sys.stderr)
    shown = [*METHODS, "rogan-gladen-bootstrap", "raw"] if args.bootstrap else [*METHODS, "raw"]
    report(results, shown, reps)
    narrower(results)
    for m in shown[:-1]:
        outside_cells(results, m)
    print(f"\n{time.process_time() - start:.0f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Exact infinity-Wasserstein distance: time against its own lower-level work.

On the line, ``w_infinity`` between two samples of 10^6 points should take under
1 s and a small factor of sorting both samples (the sort is the bulk of the
exact algorithm). In R^5, the bottleneck distance between two clouds of 2,000
points should take under 10 s; its baseline is computing the 2,000 x 2,000 L1
distance matrix with ``cdist``, which the binary search then reuses.

Run ``python benchmarks/bench_wasserstein.py --help`` for the options; the exit
code is 1 if any case misses its time or ratio target.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import scipy
from _timing import best_times
from scipy.spatial.distance import cdist

from skattr.wasserstein import w_infinity

LINE_SECONDS = 1.0
LINE_RATIO = 10.0
CLOUD_SECONDS = 10.0


def line_cases(n_points: int, repeats: int, seed: int = 0) -> list[dict]:
    """Samples of equal and unequal sizes, and weighted supports, on the line."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n_points)
    b = rng.normal(0.1, 1.2, size=n_points)
    b_short = b[:-1]
    wa = rng.random(n_points)
    wa /= wa.sum()
    wb = rng.random(n_points)
    wb /= wb.sum()

    def sort_both(x, y):
        return lambda: (np.sort(x), np.sort(y))

    cases = [
        (f"samples {n_points:,} vs {n_points:,}", sort_both(a, b),
         lambda: w_infinity(a, b)),
        (f"samples {n_points:,} vs {n_points - 1:,}", sort_both(a, b_short),
         lambda: w_infinity(a, b_short)),
        (f"weighted {n_points:,} vs {n_points:,}",
         lambda: (np.argsort(a), np.argsort(b)),
         lambda: w_infinity(a, b, wa, wb)),
    ]
    rows = []
    for case, baseline, skattr_call in cases:
        best = best_times({"baseline": baseline, "skattr": skattr_call}, repeats)
        rows.append({"case": case, "baseline": best["baseline"],
                     "skattr": best["skattr"],
                     "ratio": best["skattr"] / best["baseline"],
                     "seconds_target": LINE_SECONDS, "ratio_target": LINE_RATIO})
    rows[-1]["case"] += " (baseline argsort)"
    return rows


def cloud_case(n_points: int, dim: int, repeats: int, seed: int = 0) -> dict:
    """Bottleneck distance between two point clouds in R^dim."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n_points, dim))
    b = rng.normal(0.1, 1.0, size=(n_points, dim))
    best = best_times({"baseline": lambda: cdist(a, b, "cityblock"),
                       "skattr": lambda: w_infinity(a, b)}, repeats)
    return {"case": f"cloud {n_points:,} vs {n_points:,} in R^{dim}",
            "baseline": best["baseline"], "skattr": best["skattr"],
            "ratio": best["skattr"] / best["baseline"],
            "seconds_target": CLOUD_SECONDS, "ratio_target": None}


def print_rows(title: str, rows: list[dict]) -> bool:
    """Print one line per case; return True if every target is met."""
    print(title)
    header = (f"{'case':<52} {'baseline s':>11} {'skattr s':>10} {'ratio':>8}"
              "  result")
    print(header)
    print("-" * len(header))
    passed = True
    for row in rows:
        ok = row["skattr"] <= row["seconds_target"]
        target = f"<= {row['seconds_target']:g} s"
        if row["ratio_target"] is not None:
            ok &= row["ratio"] <= row["ratio_target"]
            target += f", ratio <= {row['ratio_target']:g}"
        passed &= ok
        print(f"{row['case']:<52} {row['baseline']:>11.4f} {row['skattr']:>10.4f} "
              f"{row['ratio']:>8.2f}  {'PASS' if ok else 'FAIL'} ({target})")
    return passed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--line-points", type=int, default=10**6,
                        help="points per sample on the line (default 10^6)")
    parser.add_argument("--cloud-points", type=int, default=2000,
                        help="points per cloud (default 2000)")
    parser.add_argument("--dim", type=int, default=5,
                        help="dimension of the clouds (default 5)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed rounds on the line after one warm-up; best "
                             "is kept (default 5)")
    parser.add_argument("--cloud-repeats", type=int, default=2,
                        help="timed rounds for the clouds (default 2)")
    args = parser.parse_args(argv)
    rows = line_cases(args.line_points, args.repeats)
    rows.append(cloud_case(args.cloud_points, args.dim, args.cloud_repeats))
    title = ("w_infinity: time and ratio to the baseline, best of the rounds "
             f"(numpy {np.__version__}, scipy {scipy.__version__})")
    return 0 if print_rows(title, rows) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Target (A): fitting the moment model costs at most 3x a pandas groupby.

Fits ``AttributePrivateGaussian`` (the default theta="auto": per-group mean and
covariance through the data seam, and 50 bootstrap replicates of them) on a
reference frame of numeric columns plus a string-valued
sensitive column, and compares it with
``reference.groupby(sensitive)[columns].agg(["mean", "var"])``, which computes
the same per-group first and second moments (the variances only). Both are
timed in the same process, interleaved, best of ``--repeats``.

Run ``python benchmarks/bench_fit.py --help`` for the options; the exit code is
1 if any ratio exceeds ``--target``.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from _timing import best_times, print_table

import skattr
from skattr.mechanisms import AttributePrivateGaussian

TARGET = 3.0
SENSITIVE = "sex"
# object: strings as Python objects (pandas < 3 default, and what groupby sees
# in most existing code); str: pandas' own string dtype (the default from
# pandas 3); category: pandas Categorical.
SENSITIVE_DTYPES = ("object", "str", "category")
PRIMARY = "object"


def make_reference(n_rows: int, n_columns: int, sensitive_dtype: str,
                   seed: int = 0) -> pd.DataFrame:
    """Numeric columns x0.. (float64) and a "Female"/"Male" column ``sex``."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"x{i}": rng.normal(40.0 + i, 10.0, n_rows)
                          for i in range(n_columns)})
    labels = np.where(rng.random(n_rows) < 0.5, "Female", "Male")
    frame[SENSITIVE] = pd.Series(labels, dtype=sensitive_dtype)
    return frame


def measure(n_rows: int, n_columns: int = 5, sensitive_dtype: str = PRIMARY,
            repeats: int = 7) -> dict:
    """Best times of the groupby baseline and of ``fit``, and their ratio."""
    reference = make_reference(n_rows, n_columns, sensitive_dtype)
    columns = [c for c in reference.columns if c != SENSITIVE]

    def baseline():
        reference.groupby(SENSITIVE, observed=True)[columns].agg(["mean", "var"])

    def fit():
        AttributePrivateGaussian(
            law="gaussian", query=skattr.Query.mean(columns),
            secret=skattr.Secret.proportion(SENSITIVE, "Female",
                                            pairs=[(0.45, 0.55)]),
            epsilon=1.0, delta=1e-3,
        ).fit(reference)

    best = best_times({"baseline": baseline, "skattr": fit}, repeats)
    return {"case": f"sensitive {sensitive_dtype}"
                    f"{' (primary)' if sensitive_dtype == PRIMARY else ''}",
            "baseline": best["baseline"], "skattr": best["skattr"],
            "ratio": best["skattr"] / best["baseline"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10**6,
                        help="reference rows (default 10^6)")
    parser.add_argument("--columns", type=int, default=5,
                        help="numeric columns (default 5)")
    parser.add_argument("--repeats", type=int, default=7,
                        help="timed rounds after one warm-up; best is kept "
                             "(default 7)")
    parser.add_argument("--dtypes", nargs="+", choices=SENSITIVE_DTYPES,
                        default=list(SENSITIVE_DTYPES),
                        help="dtypes of the sensitive column (default: all)")
    parser.add_argument("--target", type=float, default=TARGET,
                        help=f"largest ratio that passes (default {TARGET:g})")
    args = parser.parse_args(argv)
    rows = [measure(args.rows, args.columns, dtype, args.repeats)
            for dtype in args.dtypes]
    title = (f"Target (A): fit <= {args.target:g} x groupby; {args.rows:,} rows x "
             f"{args.columns} columns, best of {args.repeats} "
             f"(numpy {np.__version__}, pandas {pd.__version__})")
    return 0 if print_table(title, rows, args.target) else 1


if __name__ == "__main__":
    sys.exit(main())

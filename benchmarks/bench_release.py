"""Target (B): a release costs at most 1.3x ``df[columns].mean()``.

Fits ``AttributePrivateGaussian`` on a small reference frame (not timed), then
times ``release`` and ``transform`` on a large private frame against the exact
pandas mean of the same columns, in the same process, interleaved, best of
``--repeats``. The noise plan for the private frame's n is computed in the
warm-up and cached, as for every later release at that n; its one-off cost is
printed separately.

The model samples with replacement: a reference smaller than the private data
cannot be sampled without replacement into it.

Run ``python benchmarks/bench_release.py --help`` for the options; the exit code
is 1 if any ratio exceeds ``--target``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd
from _timing import best_times, print_table
from bench_fit import SENSITIVE, make_reference

import skattr
from skattr.mechanisms import AttributePrivateGaussian

TARGET = 1.3
NUMERIC_DTYPES = ("float64", "float32", "int64")


def make_private(n_rows: int, n_columns: int, numeric_dtype: str,
                 seed: int = 1) -> pd.DataFrame:
    """Like the reference frame, with numeric columns of ``numeric_dtype``."""
    frame = make_reference(n_rows, n_columns, "object", seed=seed)
    if numeric_dtype != "float64":
        columns = [c for c in frame.columns if c != SENSITIVE]
        frame = frame.astype(dict.fromkeys(columns, numeric_dtype))
    return frame


def measure(n_rows: int, n_columns: int = 5, numeric_dtype: str = "float64",
            repeats: int = 7, reference_rows: int = 10**5) -> list[dict]:
    """Best times of the pandas mean, ``release`` and ``transform``, and ratios."""
    reference = make_reference(reference_rows, n_columns, "object")
    columns = [c for c in reference.columns if c != SENSITIVE]
    mechanism = AttributePrivateGaussian(
        law=skattr.laws.AssumeGaussian(sampling="with-replacement"),
        query=skattr.Query.mean(columns),
        secret=skattr.Secret.proportion(SENSITIVE, "Female", pairs=[(0.45, 0.55)]),
        epsilon=1.0, delta=1e-3,
    ).fit(reference)
    private = make_private(n_rows, n_columns, numeric_dtype)

    start = time.perf_counter()
    mechanism.plan(n=n_rows)
    plan_seconds = time.perf_counter() - start

    best = best_times({
        "baseline": lambda: private[columns].mean(),
        "release": lambda: mechanism.release(private),
        "transform": lambda: mechanism.transform(private),
    }, repeats)
    return [{"case": f"{method} ({numeric_dtype})", "baseline": best["baseline"],
             "skattr": best[method], "ratio": best[method] / best["baseline"],
             "plan": plan_seconds}
            for method in ("release", "transform")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10**7,
                        help="private rows (default 10^7)")
    parser.add_argument("--columns", type=int, default=5,
                        help="numeric columns (default 5)")
    parser.add_argument("--reference-rows", type=int, default=10**5,
                        help="reference rows the mechanism is fit on (default "
                             "10^5; not timed)")
    parser.add_argument("--repeats", type=int, default=7,
                        help="timed rounds after one warm-up; best is kept "
                             "(default 7)")
    parser.add_argument("--dtypes", nargs="+", choices=NUMERIC_DTYPES,
                        default=["float64"],
                        help="dtypes of the numeric columns (default float64)")
    parser.add_argument("--target", type=float, default=TARGET,
                        help=f"largest ratio that passes (default {TARGET:g})")
    args = parser.parse_args(argv)
    rows = [row for dtype in args.dtypes
            for row in measure(args.rows, args.columns, dtype, args.repeats,
                               args.reference_rows)]
    title = (f"Target (B): release <= {args.target:g} x df[columns].mean(); "
             f"{args.rows:,} rows x {args.columns} columns, best of "
             f"{args.repeats} (numpy {np.__version__}, pandas {pd.__version__})")
    passed = print_table(title, rows, args.target)
    print(f"one-off noise plan for n = {args.rows:,} (cached afterwards): "
          f"{rows[0]['plan']:.4f} s")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

"""The resampling Theta: drawing datasets of n records from the reference data.

The target: 10^4 subsets of 100 rows from 25,000 reference rows in under
5 s, each with the secret's exact property value, and the statistic evaluated on
every subset. The baseline is the paper-style approach (App. C.1 of Chen and
Ohrimenko): a Python loop of ``DataFrame.sample`` calls, one per subset, and the
statistic computed by pandas.

Run ``python benchmarks/bench_resample.py --help`` for the options; the exit
code is 1 if any case misses its time target.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from _timing import best_times

import skattr
from skattr.theta import Resample

SECONDS = 5.0


def reference(n_rows: int, seed: int = 0) -> pd.DataFrame:
    """Adult-like reference data: a binary group and two numeric columns."""
    rng = np.random.default_rng(seed)
    rich = rng.random(n_rows) < 0.25
    return pd.DataFrame({"rich": rich,
                         "age": np.round(rng.normal(38, 9, n_rows) + 6 * rich),
                         "hours": np.round(rng.normal(38, 8, n_rows) + 5 * rich)})


def cases(n_rows: int, n_draws: int, n: int, repeats: int) -> list[dict]:
    """Time the draws and the statistic for several statistics."""
    frame = reference(n_rows)
    secret = skattr.Secret.proportion("rich", True, pairs=[(0.2, 0.3)])
    k = round(0.3 * n)
    rich, poor = frame[frame.rich], frame[~frame.rich]
    statistics = {
        "median": (skattr.Statistic.median("age"),
                   lambda d: d["age"].median()),
        "quantiles 0.1, 0.9": (skattr.Statistic.quantile("age", [0.1, 0.9]),
                               lambda d: d["age"].quantile([0.1, 0.9])),
        "OLS hours ~ age": (skattr.Statistic.ols("hours", ["age"]), None),
        "a callable (one call per subset)": (
            skattr.Statistic.function(lambda d: d["age"].median(),
                                      names=["age"], columns=["age"]), None),
    }
    rows = []
    for name, (statistic, pandas_stat) in statistics.items():
        columns = statistic.resolve_columns(frame, exclude=["rich"])
        counter = iter(range(10**9))

        def skattr_call(statistic=statistic, columns=columns, counter=counter):
            # A fresh seed each call, so the cache never answers.
            laws = Resample(random_state=next(counter)).fit(
                frame, statistic, columns, secret)
            return laws.drawn_law(0.3, n, "dataset", n_draws)

        timings = {"skattr": skattr_call}
        if pandas_stat is not None and name == "median":
            def paper_loop(pandas_stat=pandas_stat):
                # One tenth of the draws: the loop is slow; scaled below.
                return [pandas_stat(pd.concat([rich.sample(k), poor.sample(n - k)]))
                        for _ in range(n_draws // 10)]
            timings["paper loop"] = paper_loop
        best = best_times(timings, repeats)
        rows.append({"case": f"{name}: {n_draws:,} subsets of {n} from "
                             f"{n_rows:,} rows",
                     "skattr": best["skattr"],
                     "paper": 10 * best["paper loop"] if "paper loop" in best
                     else None})
    return rows


def main(argv=None) -> int:
    """Run the benchmark and print a table; exit 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=25_000)
    parser.add_argument("--draws", type=int, default=10_000)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    ok = True
    print(f"{'case':<55} {'skattr (s)':>10} {'paper loop (s)':>15}  target")
    for row in cases(args.rows, args.draws, args.n, args.repeats):
        passed = row["skattr"] < SECONDS
        ok &= passed
        paper = f"{row['paper']:.2f}" if row["paper"] is not None else ""
        print(f"{row['case']:<55} {row['skattr']:>10.3f} {paper:>15}  "
              f"under {SECONDS:g} s: {'PASS' if passed else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

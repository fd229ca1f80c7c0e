"""skattr on Dask DataFrames against Dask's own aggregations, same persisted data.

Targets (the Dask issue), as ratios in one run on the same persisted data
(10^7 rows, 4 float columns and a secret with 4 groups, 16 partitions, on
``LocalCluster(n_workers=2, threads_per_worker=1)``):

- release (an estimator already fitted): at most 1.2x
  ``ddf[cols].mean().compute()``;
- fit of the moment model (``theta="moments"``, per-group counts, means and
  centred cross-products): at most 2x
  ``ddf.groupby(s)[cols].mean(split_out=1).compute()`` and at least 5x faster
  than ``ddf.groupby(s)[cols].cov()``;
- exact median of one column: faster than Dask's shuffle-based
  ``groupby(...).median()`` of the same column.

Run: ``python benchmarks/bench_dask.py [rows]``.
"""

import sys

import numpy as np
import pandas as pd
from _timing import best_times

import skattr


def make_frame(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 4, rows)
    data = {"s": group}
    for j in range(4):
        data[f"x{j}"] = rng.normal(10.0 * j + group, 1.0 + j, rows)
    return pd.DataFrame(data)


def main(rows: int = 10_000_000) -> None:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    columns = ["x0", "x1", "x2", "x3"]
    secret = skattr.Secret.proportion("s", 1, pairs=[(0.2, 0.3)])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        ddf = dd.from_pandas(make_frame(rows), npartitions=16).persist()
        client.wait_for_workers(2)
        reference = make_frame(20_000, seed=1)
        est = skattr.mechanisms.AttributePrivateGaussian(
            query=skattr.Query.mean(columns), secret=secret, theta="moments",
            law=skattr.laws.AssumeGaussian(sampling="with-replacement"),
            random_state=0).fit(reference)

        def fit():
            return skattr.mechanisms.AttributePrivateGaussian(
                query=skattr.Query.mean(columns), secret=secret, law="gaussian",
                theta="moments").fit(ddf)

        def median():
            from skattr.backends import _dask
            return _dask.exact_statistic(ddf, skattr.Statistic.median(["x1"]),
                                         ["x1"])

        times = best_times({
            "mean": lambda: ddf[columns].mean().compute(),
            "release": lambda: est.release(ddf),
            "groupby mean": lambda: ddf.groupby("s")[columns].mean(
                split_out=1).compute(),
            "fit": fit,
            # Without split_out=1 it raises in make_meta from 16 partitions.
            "groupby cov": lambda: ddf.groupby("s")[columns].cov(
                split_out=1).compute(),
            "groupby median": lambda: ddf.groupby("s")["x1"].median().compute(),
            "median": median,
        }, repeats=3)
        # The exact median equals NumPy's on the whole column.
        exact = np.median(ddf["x1"].compute().to_numpy())
        assert median()[1][0] == exact
    lines = [
        ("release vs ddf[cols].mean()", times["release"], times["mean"], 1.2),
        ("fit vs groupby mean", times["fit"], times["groupby mean"], 2.0),
        ("fit vs groupby cov", times["fit"], times["groupby cov"], 0.2),
        ("exact median vs groupby median", times["median"],
         times["groupby median"], 1.0),
    ]
    print(f"{rows:,} rows, 4 float columns, 16 partitions, 2 workers x 1 thread")
    for name, ours, theirs, target in lines:
        ratio = ours / theirs
        print(f"{name:<34} skattr {ours:7.3f} s  Dask {theirs:7.3f} s  ratio "
              f"{ratio:5.2f}  target <= {target:g}: "
              f"{'PASS' if ratio <= target else 'MISS'}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000)

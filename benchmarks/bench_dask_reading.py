"""The CPU cost of checking that a Dask release's passes read the same data.

Every pass over a Dask frame reports, per partition, its row count and a
hash sum of each column it read (``skattr._data.column_hash_sums``), so that
a source changing between the passes of one release is refused (issue 42).
This script measures what that costs in CPU time: the same releases with
the hashing patched out (every sum 0, so every check passes), in the same
process, interleaved, best of ``--repeats``.

The frame is in memory (``from_pandas``) and computed by the synchronous
scheduler, so that every CPU second is this process's and the reading of
the data costs nothing: the worst case for the check, whose cost is then set
against sums alone. One job reads a quarter of the rows from 16 CSV files,
as data read from files is: each pass parses them again.

Run: ``python benchmarks/bench_dask_reading.py [--rows 4000000] [--repeats 5]``.
"""

import argparse
import shutil
import tempfile
import time

import numpy as np
import pandas as pd

import skattr


def make_frame(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 4, rows)
    data = {"s": group}
    for j in range(4):
        data[f"x{j}"] = rng.normal(10.0 * j + group, 1.0 + j, rows)
    return pd.DataFrame(data)


def best_cpu(functions: dict, repeats: int) -> dict:
    """Best CPU time (``time.process_time``) of each function, interleaved."""
    for function in functions.values():
        function()
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.process_time()
            function()
            best[name] = min(best[name], time.process_time() - start)
    return best


def main(rows: int, repeats: int) -> None:
    import dask
    import dask.dataframe as dd

    from skattr.backends import _dask

    columns = ["x0", "x1", "x2", "x3"]
    secret = skattr.Secret.proportion("s", 1, pairs=[(0.2, 0.3)])
    ddf = dd.from_pandas(make_frame(rows), npartitions=16)
    est = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean(columns), secret=secret, theta="moments",
        law=skattr.laws.AssumeGaussian(sampling="with-replacement"),
        random_state=0).fit(make_frame(20_000, seed=1))
    real = _dask.column_hash_sums

    def unchecked(job):
        def run():
            _dask.column_hash_sums = lambda part, read: (0,) * len(read)
            try:
                return job()
            finally:
                _dask.column_hash_sums = real
        return run

    folder = tempfile.mkdtemp()
    small = make_frame(rows // 4)
    edges = np.linspace(0, len(small), 17).astype(int)
    for i in range(16):
        small.iloc[edges[i]:edges[i + 1]].to_csv(f"{folder}/part{i:02d}.csv",
                                                 index=False)
    from_csv = dd.read_csv(f"{folder}/part*.csv", blocksize=None)
    jobs = {
        "release of 4 means": lambda: est.release(ddf),
        "the same, CSV, rows / 4": lambda: est.release(from_csv),
        "exact median of 1 column": lambda: _dask.exact_statistic(
            ddf, skattr.Statistic.median(["x1"]), ["x1"]),
        "std of 4 columns": lambda: _dask.exact_statistic(
            ddf, skattr.Statistic.std(columns), columns),
    }
    functions = {}
    for name, job in jobs.items():
        functions[name, "checked"] = job
        functions[name, "unchecked"] = unchecked(job)
    try:
        with dask.config.set(scheduler="sync"):
            times = best_cpu(functions, repeats)
    finally:
        shutil.rmtree(folder)
    print(f"{rows:,} rows x 4 float columns, 16 partitions in memory, "
          f"synchronous scheduler; CPU seconds, best of {repeats}")
    print(f"{'job':<28} {'unchecked':>10} {'checked':>10} {'overhead':>9}")
    for name in jobs:
        off, on = times[name, "unchecked"], times[name, "checked"]
        print(f"{name:<28} {off:10.3f} {on:10.3f} {on / off - 1:9.0%}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    main(args.rows, args.repeats)

"""
Census-sized data with Dask: releases from data bigger than the workers' memory
===============================================================================

A synthetic census of 50 million records is written as partitioned Parquet
(or an existing one is read), and a public reference extract beside it. On a
``LocalCluster`` whose workers' memory limits add up to less than a third of
the census's in-memory size, skattr fits its moment Theta on the reference in
one pass and releases the mean age, years of education and commute, the
number of high earners and the median income, hiding whether women are 45%
or 55% of the census. Income differs between women and men, so the count of
high earners and the median income reveal the share of women unless their
noise covers that difference: their noise is much larger than the means',
whose columns do not differ between the groups. Each release reads the
census once, partition by partition (the exact median in three passes of
histograms, never a shuffle); the noise is drawn once, on the driver.

The median's Theta is the resampling model with replacement: a census of n
records is n draws from the reference records of each group, so its exact
law follows by convolution of two binomials, at any n.

Run: ``python examples/dask_census.py [--rows N] [--path DIR]`` (needs
``pip install 'skattr[dask]'``). Writing the Parquet files takes a minute
or two and about 5 GB of disk at the default size.
"""

from __future__ import annotations

import argparse
import pathlib
import tempfile
import time

import numpy as np
import pandas as pd

import skattr

#: Numeric columns besides the released ones: a census extract is wide.
OTHER = [f"survey_{i}" for i in range(6)]
SECRET = skattr.Secret.proportion("sex", "female", pairs=[(0.45, 0.55)])


def census_partition(rows: int, rng: np.random.Generator) -> pd.DataFrame:
    """One partition of the synthetic census: women earn and work a little less."""
    female = rng.random(rows) < 0.5
    age = rng.normal(42.0, 13.0, rows).clip(18, 90)
    hours = rng.normal(np.where(female, 36.0, 41.0), 9.0).clip(1, 99)
    income = np.exp(rng.normal(np.where(female, 10.55, 10.7), 0.6)) * hours / 40
    return pd.DataFrame({
        "sex": pd.Categorical(np.where(female, "female", "male"),
                              categories=["female", "male"]),
        "age": age,
        "income": income,
        "hours": hours,
        "education": rng.normal(13.5, 2.5, rows).clip(0, 25),
        "commute": rng.exponential(25.0, rows),
        "savings": rng.lognormal(9.0, 1.5, rows),
        **{name: rng.random(rows) for name in OTHER},
    })


def write_parquet(path: pathlib.Path, rows: int, seed: int,
                  partition_rows: int) -> None:
    """Write ``rows`` records as Parquet files, one partition in memory at a time."""
    path.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for i, start in enumerate(range(0, rows, partition_rows)):
        part = census_partition(min(partition_rows, rows - start), rng)
        part.to_parquet(path / f"part-{i:05d}.parquet", index=False)


def main(rows: int = 50_000_000, path: str | None = None,
         reference_rows: int = 2_000_000, partition_rows: int = 500_000,
         min_worker_memory: int = 640 * 2**20) -> dict:
    """Write (or read) the census, release from it, and return what was measured."""
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    workdir = None
    if path is None:
        workdir = tempfile.TemporaryDirectory(prefix="skattr-census-")
        path = workdir.name
        start = time.perf_counter()
        write_parquet(pathlib.Path(path) / "census", rows, 0, partition_rows)
        write_parquet(pathlib.Path(path) / "reference", reference_rows, 1,
                      partition_rows)
        print(f"wrote {rows:,} census and {reference_rows:,} reference records "
              f"in {time.perf_counter() - start:.1f} s")
    root = pathlib.Path(path)
    # The census's size in memory, from one partition's, scaled.
    import pyarrow.parquet as pq

    files = sorted((root / "census").glob("*.parquet"))
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    first = pd.read_parquet(files[0])
    in_memory = first.memory_usage(deep=True).sum() / len(first) * rows
    workers = 2
    # Together under a third of the data (30%). A worker holds skattr and its
    # libraries (about 260 MiB) before any data: below min_worker_memory it
    # would pause at once.
    limit = max(int(0.3 * in_memory / workers), min_worker_memory)
    print(f"census in memory: {in_memory / 2**30:.2f} GiB; {workers} workers "
          f"limited to {limit / 2**20:.0f} MiB each "
          f"({workers * limit / in_memory:.0%} of the data)")
    out = {"in_memory": in_memory, "worker_memory": workers * limit}
    try:
        with LocalCluster(n_workers=workers, threads_per_worker=1,
                          processes=True, memory_limit=limit,
                          dashboard_address=None) as cluster, Client(cluster):
            census = dd.read_parquet(root / "census")
            reference = dd.read_parquet(root / "reference")

            start = time.perf_counter()
            means = skattr.mechanisms.AttributePrivateGaussian(
                query=skattr.Query.mean(["age", "education", "commute"]),
                secret=SECRET, theta="moments",
                law=skattr.laws.AssumeGaussian(sampling="with-replacement"),
                epsilon=1.0, delta=1e-6,
                random_state=0).fit(reference)
            fitted = time.perf_counter() - start
            rel = means.release(census)
            released = time.perf_counter() - start - fitted
            print(f"\nTheta fitted on the reference in {fitted:.1f} s (one pass); "
                  f"means released in {released:.1f} s (one pass)")
            print(rel.summary())

            start = time.perf_counter()
            count = census.attrpriv.count(
                ["income"], lambda v: v > 75_000, secret=SECRET,
                reference=reference, theta="moments",
                law=skattr.laws.AssumeGaussian(sampling="with-replacement"),
                mechanism="apgm", epsilon=1.0,
                delta=1e-6, random_state=1)
            counted = time.perf_counter() - start
            print(f"\nhigh earners released in {counted:.1f} s (Theta fitted "
                  "and the census read, one pass each, plus a row count)")
            print(count.summary())
            start = time.perf_counter()
            median = census.attrpriv.median(
                ["income"], secret=SECRET, reference=reference,
                mechanism="approx-wasserstein",
                theta=skattr.theta.Resample(replace=True), epsilon=1.0,
                delta=1e-6, random_state=2)
            medianed = time.perf_counter() - start
            print(f"\nmedian income released in {medianed:.1f} s (exact laws "
                  "of the median from the reference; exact median of the "
                  "census from histogram passes)")
            print(median.summary())
            out.update(means=rel, count=count, median=median,
                       seconds=(fitted, released, counted, medianed))
    finally:
        if workdir is not None:
            workdir.cleanup()
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--rows", type=int, default=50_000_000)
    parser.add_argument("--path", default=None,
                        help="a folder holding census/ and reference/ Parquet "
                             "files (written to a temporary folder otherwise)")
    args = parser.parse_args()
    main(rows=args.rows, path=args.path)

"""The default median against the resampling model (issue 27).

Since skattr 0.3 the default Theta of one median or quantile of one column is
the reference's 0.999 confidence bands (``skattr.theta.ConfidenceBand``, with
the spacings' bounds), certified by the approximate Wasserstein mechanism
for the population the reference was sampled from. This script measures
what that costs, in the same process, against 0.2's default, the
resampling model (``theta=Resample()``: datasets drawn from the reference's
records, not valid for the population): W of the median (the Laplace scale
at epsilon 1) and the planning time, for LogNormal(0.3, 0.5) in the group
and LogNormal(0, 1) outside, pair 0.4 / 0.6, delta 1e-3.

    python benchmarks/population_medians.py
    python benchmarks/population_medians.py --sizes 1000 --n 105 1005
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import skattr
from skattr.theta import Resample


def _w(reference, secret, n, **options):
    start = time.perf_counter()
    mech = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Statistic.median(["x"]), secret=secret, **options)
    try:
        plan = mech.fit(reference).plan(n=n)
    except skattr.exceptions.NotCertifiableError:
        return float("nan"), time.perf_counter() - start
    return plan.sensitivity, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[300, 1_000, 10_000, 100_000],
                        help="reference records per group")
    parser.add_argument("--n", type=int, nargs="+", default=[1_005],
                        help="private records")
    args = parser.parse_args(argv)
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    rng = np.random.default_rng(0)
    print("| reference per group | n | default (bands) | planning | resampling "
          "model | planning | default / resampling |")
    print("|---|---|---|---|---|---|---|")
    for size in args.sizes:
        g = np.repeat([1, 0], size)
        x = np.where(g == 1, rng.lognormal(0.3, 0.5, 2 * size),
                     rng.lognormal(0, 1, 2 * size))
        reference = pd.DataFrame({"g": g, "x": x})
        for n in args.n:
            band, seconds = _w(reference, secret, n)
            # The resampling model draws datasets of n reference records:
            # refused (nan) when a group holds too few.
            old, old_seconds = _w(reference, secret, n,
                                  theta=Resample(random_state=0))
            print(f"| {size:,} | {n:,} | {band:.3f} | {seconds:.2f} s | "
                  f"{old:.3f} | {old_seconds:.2f} s | {band / old:.2f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

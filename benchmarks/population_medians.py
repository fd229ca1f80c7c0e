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
    python benchmarks/population_medians.py --several-only

``--several-only`` measures several quantiles or medians at once (the
default since 0.3 is the joint bound over the bands,
``skattr.laws._joint_band``): the expected L2 error of the default against
the resampling model and against the median alone, and the planning time,
on the LogNormal pair, the synthetic hospital and (with SKATTR_DATA) Adult.
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


def _error(query, reference, secret, n, **options):
    start = time.perf_counter()
    mech = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=query, secret=secret, **options)
    try:
        plan = mech.fit(reference).plan(n=n)
    except skattr.exceptions.NotCertifiableError:
        return float("nan"), time.perf_counter() - start
    return plan.expected_error, time.perf_counter() - start


def _several_row(label, query, alone, reference, secret, n, **options):
    band, seconds = _error(query, reference, secret, n, **options)
    old, old_seconds = _error(query, reference, secret, n,
                              theta=Resample(random_state=0), **options)
    single, _ = _error(alone, reference, secret, n, **options)
    print(f"| {label} | {n:,} | {band:.3g} | {seconds:.2f} s | {old:.3g} | "
          f"{old_seconds:.2f} s | {single:.3g} | {band / old:.2f} | "
          f"{band / single:.1f} |", flush=True)


def several(data_home=None) -> int:
    """Quartiles of one column, medians of two: the joint default's cost."""
    print("\nseveral quantiles at once, epsilon 1, delta 1e-3; expected error "
          "(L2)")
    print("| statistics (reference) | n | default (bands) | planning | "
          "resampling model (not valid) | planning | the median alone "
          "(bands) | default / resampling | default / median alone |")
    print("|---|---|---|---|---|---|---|---|---|")
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    rng = np.random.default_rng(0)
    quartiles = skattr.Query.quantile("x", q=[0.25, 0.5, 0.75])
    median = skattr.Query.median("x")
    for size in (300, 1_000, 10_000, 100_000):
        g = np.repeat([1, 0], size)
        x = np.where(g == 1, rng.lognormal(0.3, 0.5, 2 * size),
                     rng.lognormal(0, 1, 2 * size))
        reference = pd.DataFrame({"g": g, "x": x})
        for n in (105, 1_005):
            _several_row(f"LogNormal quartiles ({size:,} a group)", quartiles,
                         median, reference, secret, n,
                         bounds={"x": (0, 20)})
    reference = skattr.datasets.make_hospital(2000, random_state=0)
    gender = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    _several_row("hospital weight quartiles (2,000 in all)",
                 skattr.Query.quantile("weight", q=[0.25, 0.5, 0.75]),
                 skattr.Query.median("weight"), reference, gender, 200)
    _several_row("hospital medians of weight, temperature (2,000 in all)",
                 skattr.Query.median(["weight", "temperature"]),
                 skattr.Query.median("weight"), reference, gender, 200)
    try:
        adult = skattr.datasets.load_adult(data_home=data_home)
    except (OSError, ValueError) as why:
        print(f"(Adult skipped: {why})")
        return 0
    women = skattr.Secret.proportion("sex", "Female", pairs=[(0.3, 0.4)])
    _several_row(f"Adult age quartiles ({len(adult):,} in all)",
                 skattr.Query.quantile("age", q=[0.25, 0.5, 0.75]),
                 skattr.Query.median("age"), adult, women, 1_000,
                 bounds={"age": (17, 90)})
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[300, 1_000, 10_000, 100_000],
                        help="reference records per group")
    parser.add_argument("--n", type=int, nargs="+", default=[1_005],
                        help="private records")
    parser.add_argument("--several-only", action="store_true",
                        help="only several quantiles at once")
    parser.add_argument("--data-home", default=None,
                        help="where the Adult files are (else SKATTR_DATA)")
    args = parser.parse_args(argv)
    if args.several_only:
        return several(args.data_home)
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
    return several(args.data_home)


if __name__ == "__main__":
    raise SystemExit(main())

"""The default mean against the Gaussian opt-in and 0.2's default (issue 27).

Since skattr 0.3 the default Theta of one column's sum or mean is the
reference's 0.999 confidence bands (``skattr.theta.ConfidenceBand``),
certified through the swap coupling: it holds for the population the
reference was sampled from. This script measures what that costs, in the
same process, against two baselines that do not hold for the population:
0.2's default (the approximate Wasserstein mechanism over the resampling
model, ``theta=Resample()``: datasets drawn from the reference's records) and
the Gaussian opt-in (apgm with ``law="gaussian"``: the bootstrap moments
taken as a Gaussian law). Two data sets: a normal column at reference sizes
from 100 to 10^6 records a group (group means 45 and 50, sd 10, clipped to
(0, 100)) and the synthetic hospital's columns (2,000 reference patients).
Each row prints the expected error of ``mechanism="auto"`` and the
baselines', the ratio to the Gaussian opt-in and the default's planning time;
then Chen and Ohrimenko's Adult setting one statistic at a time (n = 100,
0.45 vs 0.55 earning more than 50K), when the Adult files are found.

    python benchmarks/population_means.py
    python benchmarks/population_means.py --sizes 100 1000 --n 1000
    python benchmarks/population_means.py --stacked-only   # several at once
    python benchmarks/population_means.py --std-only       # one std
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import skattr
from skattr.theta import Resample


def _plan(private, reference, secret, column, **options):
    start = time.perf_counter()
    try:
        plan = private.attrpriv.plan([column], secret=secret,
                                     reference=reference, **options)
    except skattr.exceptions.NotCertifiableError:
        return None, time.perf_counter() - start
    return plan, time.perf_counter() - start


def _row(label, n, private, reference, secret, column, resample=True):
    default, seconds = _plan(private, reference, secret, column)
    old = (_plan(private, reference, secret, column,
                 mechanism="approx-wasserstein", theta=Resample(random_state=0))[0]
           if resample else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gaussian, _ = _plan(private, reference, secret, column,
                            mechanism="apgm", law="gaussian")
    e = [p.expected_error if p is not None else float("nan")
         for p in (default, old, gaussian)]
    print(f"| {label} | {n:,} | {e[0]:.3g} ({default.mechanism}) | "
          f"{e[1]:.3g} | {e[2]:.3g} | {e[0] / e[2]:.2f} | {seconds:.2f} s |",
          flush=True)


def _stacked(private, reference, secret, statistic, epsilon, **options):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            plan = private.attrpriv.plan(statistic=statistic, secret=secret,
                                         reference=reference, epsilon=epsilon,
                                         **options)
        except skattr.exceptions.NotCertifiableError:
            return None, time.perf_counter() - start
    return plan, time.perf_counter() - start


def stacked_rows(private, reference, secret, statistic, label, bounds,
                 epsilons=(0.2, 1.0, 5.0)):
    """Several statistics at once: the default against the baselines."""
    for epsilon in epsilons:
        default, seconds = _stacked(private, reference, secret, statistic,
                                    epsilon, bounds=bounds)
        old, _ = _stacked(private, reference, secret, statistic, epsilon,
                          bounds=bounds, mechanism="approx-wasserstein",
                          theta=Resample(random_state=0))
        optimal, _ = _stacked(private, reference, secret, statistic, epsilon,
                              bounds=bounds, mechanism="optimal",
                              law="gaussian")
        e = [p.expected_error if p is not None else float("nan")
             for p in (default, old, optimal)]
        print(f"| {label} | {epsilon:g} | {e[0]:.3g} | {e[1]:.3g} | "
              f"{e[2]:.3g} | {e[0] / e[2]:.1f} | {seconds:.2f} s |", flush=True)


def stds(sizes) -> int:
    """One std: the default (bands) against the resampling model (not valid)."""
    print("\nstd, groups N(50, 12) and N(45, 8) clipped to (0, 100), n = 1,000, "
          "pair 0.4 / 0.6, epsilon 1, delta 1e-3; expected error")
    print("| reference per group | default (bands) | resampling (not valid) | "
          "ratio | planning |")
    print("|---|---|---|---|---|")
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    rng = np.random.default_rng(0)
    for size in sizes:
        g = np.repeat([1, 0], size)
        x = np.clip(np.where(g == 1, rng.normal(50, 12, 2 * size),
                             rng.normal(45, 8, 2 * size)), 0, 100)
        reference = pd.DataFrame({"g": g, "x": x})
        private = reference.sample(1000, replace=True, random_state=1)
        start = time.perf_counter()
        default = private.attrpriv.plan(["x"], statistic="std", secret=secret,
                                        reference=reference,
                                        bounds={"x": (0, 100)})
        seconds = time.perf_counter() - start
        old = private.attrpriv.plan(
            ["x"], statistic="std", secret=secret, reference=reference,
            bounds={"x": (0, 100)}, mechanism="approx-wasserstein",
            theta=Resample(replace=True, random_state=0))
        print(f"| {size:,} | {default.expected_error:.3g} | "
              f"{old.expected_error:.3g} | "
              f"{default.expected_error / old.expected_error:.1f} | "
              f"{seconds:.2f} s |", flush=True)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[100, 1_000, 10_000, 100_000, 1_000_000],
                        help="reference records per group (normal column)")
    parser.add_argument("--n", type=int, nargs="+", default=[100, 1_000],
                        help="private records")
    parser.add_argument("--data-home", default=None,
                        help="where the UCI Adult files are (default: "
                             "$SKATTR_DATA)")
    parser.add_argument("--stacked-only", action="store_true",
                        help="only several statistics at once")
    parser.add_argument("--std-only", action="store_true",
                        help="only one column's std")
    args = parser.parse_args(argv)
    if args.stacked_only:
        return stacked(args.data_home)
    if args.std_only:
        return stds([300, 1_000, 10_000, 100_000])
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    rng = np.random.default_rng(0)
    print("mean, pair 0.4 / 0.6, epsilon 1, delta 1e-3; expected error")
    print("| data (reference per group) | n | default (auto) | 0.2's default "
          "(resampling) | Gaussian opt-in | default / Gaussian | planning |")
    print("|---|---|---|---|---|---|---|")
    for size in args.sizes:
        g = np.repeat([1, 0], size)
        x = np.clip(rng.normal(45 + 5 * g, 10), 0, 100)
        reference = pd.DataFrame({"g": g, "x": x})
        for n in args.n:
            private = reference.sample(n, replace=True, random_state=1)
            _row(f"normal ({size:,})", n, private, reference, secret, "x",
                 resample=size <= 100_000)
    reference = skattr.datasets.make_hospital(2000, random_state=0)
    private = skattr.datasets.make_hospital(200, random_state=1)
    gender = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    for column in ("weight", "height", "blood_pressure", "temperature"):
        _row(f"hospital {column} (2,000 in all)", 200, private, reference,
             gender, column)
    # Chen and Ohrimenko's Adult setting, one statistic at a time: n = 100
    # records, hiding whether 45% or 55% earn more than 50K, the rest of
    # Adult as the reference (needs SKATTR_DATA or --data-home).
    try:
        adult = skattr.datasets.load_adult(data_home=args.data_home)
    except (OSError, ValueError) as why:
        print(f"(Adult skipped: {why})")
        return 0
    rich = skattr.Secret.proportion("income", ">50K", pairs=[(0.45, 0.55)])
    private = adult.sample(100, random_state=1)
    for column in ("age", "education-num", "hours-per-week"):
        _row(f"Adult {column} ({len(adult):,} in all)", 100, private, adult,
             rich, column)
    stacked(args.data_home)
    return stds([300, 1_000, 10_000, 100_000])


def stacked(data_home) -> int:
    """Several statistics at once: the README's two means, Adult's five."""
    print("\nseveral statistics at once, delta 1e-3; expected error (L2)")
    print("| statistics | epsilon | default (bands) | 0.2's default "
          "(resampling) | optimal, Gaussian opt-in | default / optimal | "
          "planning |")
    print("|---|---|---|---|---|---|---|")
    reference = skattr.datasets.make_hospital(2000, random_state=0)
    private = skattr.datasets.make_hospital(200, random_state=1)
    gender = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    stacked_rows(private, reference, gender,
                 skattr.Query.mean(["weight", "blood_pressure"]),
                 "hospital weight, blood pressure (n = 200)", "reference",
                 epsilons=(1.0,))
    try:
        adult = skattr.datasets.load_adult(data_home=data_home)
    except (OSError, ValueError) as why:
        print(f"(Adult skipped: {why})")
        return 0
    query = (skattr.Query.mean(["age", "education-num"])
             + skattr.Query.count("marital-status", "Never-married")
             + skattr.Query.count("sex", "Female")
             + skattr.Query.mean("hours-per-week"))
    rich = skattr.Secret.proportion("income", ">50K", pairs=[(0.45, 0.55)])
    bounds = {"age": (17, 90), "education-num": (1, 16),
              "hours-per-week": (1, 99)}
    stacked_rows(adult.sample(100, random_state=1), adult, rich, query,
                 "Adult's five (n = 100)", bounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

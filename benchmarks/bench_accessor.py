"""Issue 28: an accessor release on the README's data, first and again.

The README's hospital (2,000 reference patients, 200 private ones, the share
of women hidden between 0.4 and 0.6), each statistic released through
``df.attrpriv`` with no options: once with the fit cache empty (a fit and a
plan) and once again on the same data (the fitted Theta reused: a plan). The
baseline is pandas' ``describe()`` of the same columns, in the same process.

Run ``python benchmarks/bench_accessor.py``; best of ``--repeats``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import skattr
from skattr.datasets import make_hospital
from skattr.mechanisms import _fit_cache


def _best(function, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    reference = make_hospital(2000, random_state=0)
    private = make_hospital(200, random_state=1)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    common = dict(secret=secret, reference=reference)
    releases = {
        "mean of weight": lambda: private.attrpriv.mean(["weight"], **common),
        "means of weight, blood pressure": lambda: private.attrpriv.mean(
            ["weight", "blood_pressure"], **common),
        "proportion of 'other'": lambda: private.attrpriv.proportion(
            "gender", "other", **common),
        "median of weight": lambda: private.attrpriv.median(["weight"],
                                                            **common),
        "quartiles of weight": lambda: private.attrpriv.quantile(
            ["weight"], [0.25, 0.5, 0.75], **common),
        "std of weight": lambda: private.attrpriv.std(["weight"], **common),
    }
    baseline = _best(lambda: private[["weight", "blood_pressure"]].describe(),
                     args.repeats)
    for release in releases.values():
        release()                         # imports, warm caches
    print(f"baseline: describe() {baseline * 1e3:.2f} ms")
    print("| release | first (fit and plan) | / describe() | again (plan) | "
          "/ describe() |")
    print("|---|---|---|---|---|")
    for label, release in releases.items():
        def first(release=release):
            _fit_cache.clear()
            release()
        cold = _best(first, args.repeats)
        release()
        warm = _best(release, args.repeats)
        print(f"| {label} | {cold:.3f} s | {cold / baseline:,.0f} | "
              f"{warm:.3f} s | {warm / baseline:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

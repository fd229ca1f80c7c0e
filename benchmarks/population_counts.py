"""The default count against the plug-in and the Gaussian opt-in (issue 27).

Since skattr 0.3 a count's default Theta is the reference's 0.999 confidence
box (``skattr.theta.ConfidenceBox``), certified through the swap coupling:
it holds for the population the reference was sampled from. This script
measures what that costs, in the same process, against two baselines that do
not hold for the population: the plug-in (``theta="moments"``, the
reference's frequencies taken as the truth, which 0.2's default resembled)
and the Gaussian opt-in (apgm with
``law=AssumeGaussian(sampling="with-replacement")``: the bootstrap moments
taken as a Gaussian law). For each reference size per group it prints the
expected error of ``mechanism="auto"`` under each Theta, their ratios and the
default's planning time.

    python benchmarks/population_counts.py
    python benchmarks/population_counts.py --sizes 100 1000 --n 1000
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import skattr


def _plan(private, reference, secret, **options):
    start = time.perf_counter()
    plan = private.attrpriv.plan(["x"], statistic="count", value=1,
                                 secret=secret, reference=reference, **options)
    return plan, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[100, 1_000, 10_000, 100_000, 1_000_000],
                        help="reference records per group")
    parser.add_argument("--n", type=int, nargs="+", default=[100, 1_000],
                        help="private records")
    parser.add_argument("--p", type=float, nargs=2, default=(0.3, 0.2),
                        metavar=("IN", "OUT"),
                        help="counting probability in and outside the group")
    args = parser.parse_args(argv)
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    rng = np.random.default_rng(0)
    print(f"count of x = 1, P = {args.p[0]} in the group and {args.p[1]} "
          "outside, pair 0.4 / 0.6, epsilon 1, delta 1e-3")
    print("| per group | n | default (auto) | plug-in | Gaussian opt-in | "
          "default / plug-in | default / Gaussian | planning |")
    print("|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        g = np.repeat([1, 0], size)
        x = (rng.random(2 * size) < np.where(g == 1, *args.p)).astype(np.int8)
        reference = pd.DataFrame({"g": g, "x": x})
        for n in args.n:
            private = reference.sample(n, replace=True, random_state=1)
            default, seconds = _plan(private, reference, secret)
            plug_in, _ = _plan(private, reference, secret, theta="moments")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                gaussian, _ = _plan(
                    private, reference, secret, mechanism="apgm",
                    law=skattr.laws.AssumeGaussian(sampling="with-replacement"))
            e = [p.expected_error for p in (default, plug_in, gaussian)]
            print(f"| {size:,} | {n:,} | {e[0]:.2f} ({default.mechanism}) | "
                  f"{e[1]:.2f} ({plug_in.mechanism}) | {e[2]:.2f} | "
                  f"{e[0] / e[1] if e[1] else float('inf'):.2f} | {e[0] / e[2]:.2f} | "
                  f"{seconds:.2f} s |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Exact laws of medians and quantiles against drawn datasets, in one run.

Targets: a median and two quantiles released at n = 3,000 from 5,000
reference rows by the Approximate Wasserstein Mechanism (``theta=Resample()``)
in under 2 s each, with the same certificate as drawing datasets or a tighter
one. The baseline is the same mechanism drawing datasets
(``Resample(exact_quantiles=False)``), timed in the same process: a fresh
fit and plan each time, then the release.

Run: ``python benchmarks/bench_quantile_laws.py``.
"""

import time

import numpy as np
import pandas as pd

import skattr
from skattr.theta import Resample


def frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rich = rng.random(n) < 0.3
    return pd.DataFrame({"rich": rich,
                         "age": np.round(rng.normal(40, 10, n) + 5 * rich, 1)})


def main(n: int = 3000, reference_rows: int = 5000) -> bool:
    reference, private = frame(reference_rows, 0), frame(n, 1)
    secret = skattr.Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    cases = {"median": skattr.Statistic.median("age"),
             "quantiles [0.25, 0.75]": skattr.Statistic.quantile(
                 "age", q=[0.25, 0.75])}
    ok = True
    print(f"{'statistic':24} {'theta':7} {'W':>8} {'seconds':>8}")
    for name, query in cases.items():
        found = {}
        for how, exact in (("exact", True), ("drawn", False)):
            start = time.perf_counter()
            mech = skattr.mechanisms.ApproximateWassersteinMechanism(
                query=query, secret=secret, delta=1e-3, epsilon=1.0,
                theta=Resample(random_state=0, exact_quantiles=exact),
                random_state=0).fit(reference)
            mech.release(private)
            seconds = time.perf_counter() - start
            found[how] = (mech.plan(n=n).sensitivity, seconds)
            print(f"{name:24} {how:7} {found[how][0]:8.4g} {seconds:8.2f}")
        (w_exact, t_exact), (w_drawn, t_drawn) = found["exact"], found["drawn"]
        passed = t_exact < 2.0 and w_exact <= w_drawn
        ok &= passed
        print(f"{'':24} exact/drawn time {t_exact / t_drawn:.4f}, W "
              f"{w_exact / w_drawn:.3f}: {'PASS' if passed else 'FAIL'}")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)

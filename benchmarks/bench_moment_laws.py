"""Moment bounds on the law of a mean against drawn datasets, in one run.

The Approximate Wasserstein Mechanism on a mean under the resampling Theta:
``Resample(moment_bounds=True)`` bounds the law from the groups' reference
values (Chernoff, Berry-Esseen, the swap coupling), ``False`` draws datasets
as for any statistic, the baseline, timed in the same process (a fresh fit
and plan each time). The hospital's mean weight, 0.4 against 0.6 women,
delta = 0.001. The target: a mean at n = 3,000 from 5,000 reference rows in
under 2 s (the draws took minutes and 9.8 GB).

Run: ``python benchmarks/bench_moment_laws.py`` (add ``--drawn-large`` to
draw at n = 3,000 too, which takes minutes).
"""

import sys
import time

import skattr
from skattr.datasets import make_hospital
from skattr.theta import Resample


def plan(reference, n: int, moment_bounds, replace: bool = False):
    start = time.perf_counter()
    mech = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.mean(["weight"]),
        secret=skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)]),
        delta=1e-3, epsilon=1.0,
        theta=Resample(random_state=0, moment_bounds=moment_bounds,
                       replace=replace)).fit(reference)
    found = mech.plan(n=n)
    return found.sensitivity, time.perf_counter() - start


def main(drawn_large: bool = False) -> bool:
    ok = True
    print(f"{'n (reference rows)':20} {'replace':8} {'theta':8} {'W':>8} "
          f"{'seconds':>8}")
    for n, rows in ((300, 1000), (3000, 5000)):
        reference = make_hospital(rows, random_state=0)
        for replace in (False, True):
            found = {"moments": plan(reference, n, True, replace)}
            if n < 1000 or drawn_large:
                found["drawn"] = plan(reference, n, False, replace)
            for how, (w, seconds) in found.items():
                print(f"{f'{n:,} ({rows:,})':20} {str(replace):8} {how:8} "
                      f"{w:8.4g} {seconds:8.2f}")
            passed = found["moments"][1] < 2.0
            if "drawn" in found:
                print(f"{'':29} moments/drawn time "
                      f"{found['moments'][1] / found['drawn'][1]:.4f}, W "
                      f"{found['moments'][0] / found['drawn'][0]:.3f}")
            ok &= passed
    print("PASS" if ok else "FAIL")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main("--drawn-large" in sys.argv) else 1)

"""The ledger's joint certificate: 20 Gaussian releases of 5 statistics each.

Target: the joint certificate of 20 releases of 5 statistics each
(100 released values) in under 2 s, reported as a ratio to certifying the
last release alone (``plan``) in the same process. Two cases: the same 5
means released 20 times (the joint law lives in the span of 5 statistics)
and 20 releases of 5 different columns each (100 distinct statistics).
Theta is skattr's default (the reference's fit and 50 bootstrap replicates).
A third case times the joint certificate of two different statistics with
Laplace noise (:func:`laplace`).
Run: ``python benchmarks/bench_ledger.py``.
"""

import numpy as np
import pandas as pd
from _timing import best_times

import skattr


def frame(n, k, rng):
    s = rng.random(n) < 0.5
    data = {"s": s}
    for j in range(k):
        data[f"x{j}"] = rng.normal(0.3 * s * (j % 3), 1.0, n)
    return pd.DataFrame(data)


def main():
    rng = np.random.default_rng(0)
    secret = skattr.Secret.proportion("s", True, pairs=[(0.4, 0.6)])
    for name, k, columns_of in [
        ("same 5 means x 20", 5, lambda i: [f"x{j}" for j in range(5)]),
        ("100 distinct means", 100,
         lambda i: [f"x{j}" for j in range(5 * i, 5 * i + 5)]),
    ]:
        private, reference = frame(2000, k, rng), frame(5000, k, rng)
        ledger = private.attrpriv.ledger(
            secret=secret, reference=reference, budget=(1e6, 1e-3),
            law="gaussian", random_state=0)
        for i in range(19):
            ledger.mean(columns_of(i), epsilon=1.0)
        last = columns_of(19)

        def joint(ledger=ledger, last=last):
            return ledger.plan(last, statistic="mean", epsilon=1.0)

        # The joint certificate alone: the last release already planned.
        est, _, statistics, noise_cov, _ = ledger._planned(
            skattr.Query.mean(last), {"epsilon": 1.0})

        def certificate(ledger=ledger, est=est, statistics=statistics,
                        noise_cov=noise_cov):
            ledger._gaussian._cache = None       # refit the joint Theta too
            return ledger._joint_epsilon(est, statistics, noise_cov)

        def alone(private=private, reference=reference, last=last):
            return private.attrpriv.plan(
                last, statistic="mean", secret=secret, reference=reference,
                law="gaussian", mechanism="apgm", epsilon=1.0)

        times = best_times({"joint": joint, "alone": alone,
                            "certificate": certificate}, repeats=3)
        t_joint, t_alone = times["joint"], times["alone"]
        _, eps = joint()
        print(f"{name}: joint certificate {times['certificate']:.2f} s "
              f"(epsilon {eps:.3g}); with the last release's own plan "
              f"{t_joint:.2f} s; last release alone {t_alone:.2f} s, ratio "
              f"{t_joint / t_alone:.1f}x")


def laplace():
    """Laplace noise on different statistics: the joint from one drawn coupling.

    A median of height and a standard deviation of weight on the synthetic
    hospital (200 records, 3,000 reference records, the share of women hidden
    between 0.4 and 0.6), each at (1, 0.001). The joint certificate draws
    50,000 coupled pairs of datasets and evaluates both statistics on them
    (the draws cleared before each run); the baseline is the last release's
    own plan alone.
    """
    from skattr.datasets import make_hospital
    from skattr.theta import Resample

    private = make_hospital(200, random_state=1)
    reference = make_hospital(3000, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    ledger = private.attrpriv.ledger(
        secret=secret, reference=reference, budget=(1e6, 1e-3),
        theta=Resample(random_state=0), random_state=0)
    ledger.median(["height"], epsilon=1.0)
    found = ledger._planned(skattr.Statistic.std(["weight"]), {"epsilon": 1.0})
    entries = [e.laplace for e in ledger.releases] + [found[4]]

    def certificate():
        ledger._laplace.laws.clear()             # draw the coupling again
        return ledger._laplace.epsilon(entries)

    def alone():
        return private.attrpriv.plan(
            ["weight"], statistic="std", secret=secret, reference=reference,
            theta=Resample(random_state=0), epsilon=1.0)

    times = best_times({"certificate": certificate, "alone": alone}, repeats=3)
    print(f"median + std, Laplace: joint certificate {times['certificate']:.2f} s "
          f"(epsilon {certificate():.3g}); last release alone "
          f"{times['alone']:.2f} s, ratio "
          f"{times['certificate'] / times['alone']:.2f}x")


def laplace_bands():
    """The same two statistics by default: the joint over the bands.

    No Theta is chosen: each release is certified over the reference's
    confidence bands, and their joint from one band law over both values.
    Also times ``epsilon="remaining"`` for a third statistic (the
    estimator fitted once and replanned at each epsilon tried).
    """
    import time

    from skattr.datasets import make_hospital

    private = make_hospital(200, random_state=1)
    reference = make_hospital(3000, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    ledger = private.attrpriv.ledger(secret=secret, reference=reference,
                                     budget=(12.0, 1e-3), random_state=0)
    ledger.median(["height"], epsilon=1.0)
    found = ledger._planned(skattr.Statistic.std(["weight"]), {"epsilon": 1.0})
    entries = [e.laplace for e in ledger.releases] + [found[4]]

    def certificate():
        ledger._laplace.banded.clear()           # refit the bands each time
        return ledger._laplace.epsilon(entries)

    def alone():
        return private.attrpriv.plan(["weight"], statistic="std",
                                     secret=secret, reference=reference,
                                     epsilon=1.0)

    times = best_times({"certificate": certificate, "alone": alone}, repeats=3)
    print(f"median + std, Laplace, over the bands: joint certificate "
          f"{times['certificate']:.2f} s (epsilon {certificate():.3g}); last "
          f"release alone {times['alone']:.2f} s, ratio "
          f"{times['certificate'] / times['alone']:.2f}x")
    ledger.std(["weight"], epsilon=1.0)
    start = time.perf_counter()
    plan = ledger.plan(skattr.Statistic.quantile(["height"], q=[0.25, 0.75]),
                       epsilon="remaining")
    print(f"epsilon='remaining' for quartiles after two releases: "
          f"{time.perf_counter() - start:.2f} s (own epsilon "
          f"{plan[0].epsilon:.3g}, joint {plan[1]:.4g} of 12)")


if __name__ == "__main__":
    main()
    laplace()
    laplace_bands()

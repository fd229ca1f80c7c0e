"""Bounded work: the reliability review's slow cases, finished or refused.

Each case is timed once (they take seconds; the refusals take what the work
before them takes) next to a baseline run in the same process:

- Song, Wang and Chaudhuri's chain search at T = 10^3 and 10^6 entries,
  against T vector-matrix products (the entries' laws: the least any search
  must compute); it was O(T^2) (43.6 s at T = 10^3, over 300 s at 10^6);
- their search over a 14-node network (a binary tree), refused before it
  starts with the max_quilt_size that fits;
- a count's plan on 10^7 records (87 s when four count laws on 0..10^7 were
  computed per pair), against one Binomial(10^7) pmf;
- the Gaussian search over a window secret with law="gaussian" (820 pairs,
  3 columns), refused before its first round (it allocated 177 GiB at
  20,100 pairs, and ran for over ten minutes at 820).

Run: ``python benchmarks/bench_bounded_work.py``.
"""

import time

import numpy as np
import pandas as pd
from scipy import stats

import skattr
from skattr.bayes import ParameterNetwork
from skattr.exceptions import WorkLimitError
from skattr.mechanisms import MarkovQuiltMechanism
from skattr.mechanisms._chain_quilts import chain_scales


def timed(function):
    start = time.perf_counter()
    try:
        out = function()
    except WorkLimitError as exc:
        out = f"refused: {str(exc)[:90]}..."
    return time.perf_counter() - start, out


def chain_baseline(T):
    K = np.array([[0.9, 0.1], [0.2, 0.8]])
    m = np.array([0.5, 0.5])
    for _ in range(T):
        m = m @ K
    return m


def tree(T):
    parents = {f"v{i}": ([f"v{(i - 1) // 2}"] if i else []) for i in range(T)}
    return ParameterNetwork(
        parents=parents, grids={v: [0, 1] for v in parents},
        cpts={v: ([0.5, 0.5] if not ps else [[0.8, 0.2], [0.3, 0.7]])
              for v, ps in parents.items()})


def main():
    K = np.array([[0.9, 0.1], [0.2, 0.8]])
    for T in (10**3, 10**6):
        t, b = timed(lambda T=T: chain_scales(np.array([0.5, 0.5]), K, T, 1.0))
        base, _ = timed(lambda T=T: chain_baseline(T))
        print(f"chain search, T = {T:,}: {t:.2f} s ({t / base:.0f}x {T:,} "
              f"vector-matrix products, {base:.3f} s); b_max {b.max():.4f}")

    rows = pd.DataFrame({"v": np.ones(14)})
    mech = MarkovQuiltMechanism(query=skattr.Query.sum("v"), network=tree(14),
                                bounds=(0.0, 1.0)).fit(rows)
    t, out = timed(lambda: mech.plan(rows))
    print(f"network search, 14 nodes: {t:.2f} s, {out}")

    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"rich": rng.random(20_000) < 0.3,
                        **{f"c{j}": rng.normal(40, 10, 20_000).round()
                           for j in range(3)}})
    secret = skattr.Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    count = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.count("c0", lambda a: a > 40), secret=secret,
        delta=1e-9).fit(ref)
    t, plan = timed(lambda: count.plan(n=10**7))
    base, _ = timed(lambda: stats.binom.pmf(np.arange(10**7 + 1), 10**7, 0.3))
    print(f"count plan, n = 10^7: {t:.2f} s ({t / base:.1f}x one "
          f"Binomial(10^7) pmf, {base:.2f} s); noise sd "
          f"{float(plan.noise_std[0]):.1f}")

    data = ref.sample(40, random_state=1)
    window = skattr.Secret.proportion("rich", True, window=1.0,
                                      support=(0.0, 1.0))
    t, out = timed(lambda: data.attrpriv.mean(
        ["c0", "c1", "c2"], secret=window, reference=ref, delta=1e-5,
        mechanism="apgm", law="gaussian"))
    print(f"Gaussian search, 820 pairs x 3 columns: {t:.2f} s, {out}")


if __name__ == "__main__":
    main()

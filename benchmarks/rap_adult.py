"""DPRAP on UCI Adult: fit time and marginal error (issue 30, items 4 and 5).

The slides' setting: every column of Adult (numeric ones binned by fixed,
public edges), 64 random 3-way marginals, T = 1, n' = 1,000 relaxed records,
1,000 Adam steps. Reported: the fit time against one pass of the same
marginals over the real one-hot table (the least any method answering them
must compute), and the max and mean error of the 64 marginals of the
synthetic table against the real ones, next to the Gaussian mechanism
answering the same marginals directly at the same epsilon.

Run: ``SKATTR_DATA=../shared/data python benchmarks/rap_adult.py``.
"""

import time

import numpy as np

from skattr.datasets import load_adult
from skattr.synth import (
    DPRAP,
    OneHotDomain,
    answer,
    bin_columns,
    marginal_errors,
)

BINS = {
    "age": [0, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, np.inf],
    "fnlwgt": [0, 1e5, 1.5e5, 2e5, 2.5e5, 3e5, 4e5, np.inf],
    "education-num": [0, 5, 9, 10, 11, 13, 14, np.inf],
    "capital-gain": [-np.inf, 1, 5000, 10000, np.inf],
    "capital-loss": [-np.inf, 1, 1500, 2000, np.inf],
    "hours-per-week": [0, 20, 35, 40, 41, 50, 60, np.inf],
}


def main(epsilons=(0.1, 0.5, 1.0, 2.0)):
    adult = load_adult()
    binned, labels = bin_columns(adult, BINS)
    categories = {c: labels.get(c) or sorted(binned[c].unique(), key=str)
                  for c in binned.columns}
    domain = OneHotDomain(categories)
    print(f"Adult: {len(binned):,} records, {len(domain.columns)} columns, "
          f"{domain.width} one-hot features")
    onehot = domain.onehot(binned)
    for eps in epsilons:
        start = time.perf_counter()
        rap = DPRAP(categories=categories, epsilon=eps, delta=1e-6, k=3,
                    n_marginals=64, n_synthetic=1000, iterations=1000,
                    random_state=0).fit(binned)
        fit = time.perf_counter() - start
        start = time.perf_counter()
        truth = [answer(onehot, m) for m in rap.workload_]
        base = time.perf_counter() - start
        synthetic = rap.sample(len(binned), random_state=1)
        worst, mean = marginal_errors(domain, rap.workload_, binned, synthetic)
        rng = np.random.default_rng(2)
        direct = np.concatenate([np.abs(s * rng.standard_normal(t.size))
                                 for s, t in zip(rap.sigma_, truth,
                                                 strict=True)])
        print(f"epsilon {eps}: fit {fit:.1f} s ({fit / base:.0f}x one pass "
              f"of the marginals, {base:.2f} s); synthetic max error "
              f"{worst:.4f}, mean {mean:.5f}; Gaussian answers directly: max "
              f"{direct.max():.4f}, mean {direct.mean():.5f}")


if __name__ == "__main__":
    main()

"""The property-inference attack on synthetic tables of Adult (issue 30, item 4).

The attacker tells apart datasets of 2,000 Adult records whose share of women
is 0.3 or 0.4, seeing only a synthetic table made from each: the shadow
datasets are drawn from one half of Adult (skattr.attacks' exact-count
draws), the test datasets from the other; the features are the table's share
of every category of every column (its 1-way marginals), the
meta-classifier the attack's standardising logistic regression. Defences:

- none: the attacker sees the true dataset's shares;
- DPRAP (epsilon 1, delta 1e-6): differential privacy of each record;
- AttributePrivateRAP (epsilon 1, delta 1e-3, hiding 0.3 vs 0.4,
  distributional): the table's share of women is the stated 0.35.

Each defence answers 8 random 3-way marginals (n' = 200, 300 Adam steps:
a smaller setting than rap_adult.py's, since every dataset is synthesised).
A certificate at (epsilon, delta) bounds any attacker's accuracy on the
pair by (e^epsilon + delta) / (1 + e^epsilon): 0.731 at epsilon 1.

Run: ``SKATTR_DATA=../shared/data python benchmarks/synth_attack.py``.
"""

import math
import time

import numpy as np
from rap_adult import BINS
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from statsmodels.stats.proportion import proportion_confint

from skattr import Secret
from skattr.attacks._property_inference import sample_indices
from skattr.datasets import load_adult
from skattr.synth import DPRAP, AttributePrivateRAP, OneHotDomain, bin_columns

N, SHADOWS, TESTS, VALUES = 2000, 100, 100, (0.3, 0.4)


def features(domain, table):
    """The table's share of every category of every column."""
    return np.concatenate([block.mean(axis=0) for block in
                           domain.onehot(table)])


def defended(name, categories, frame, seed):
    """The table the attacker sees: the frame itself, or a synthetic one."""
    if name == "none":
        return frame
    common = dict(categories=categories, epsilon=1.0, k=3, n_marginals=8,
                  n_synthetic=200, iterations=300, progress=False,
                  random_state=seed)
    if name == "DPRAP":
        rap = DPRAP(delta=1e-6, **common)
    else:
        rap = AttributePrivateRAP(
            secret=Secret.proportion("sex", "Female", pairs=[VALUES]),
            privacy="distributional", **common)
    return rap.fit(frame).sample(len(frame), random_state=seed + 1)


def draws(pool, count, rng):
    member = (pool.sex == "Female").to_numpy()
    labels = np.repeat([0, 1], count // 2)
    counts = np.array([round(VALUES[y] * N) for y in labels])
    return sample_indices(member, counts, N, rng), labels


def main():
    adult = load_adult()
    binned, labels = bin_columns(adult, BINS)
    categories = {c: labels.get(c) or sorted(binned[c].unique(), key=str)
                  for c in binned.columns}
    domain = OneHotDomain(categories)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(binned))
    shadow_pool = binned.iloc[order[: len(binned) // 2]]
    test_pool = binned.iloc[order[len(binned) // 2:]]
    shadow_rows, shadow_y = draws(shadow_pool, SHADOWS, rng)
    test_rows, test_y = draws(test_pool, TESTS, rng)
    bound = (math.e + 1e-3) / (1 + math.e)
    for name in ("none", "DPRAP", "AttributePrivateRAP"):
        start = time.perf_counter()
        train = np.array([features(domain, defended(
            name, categories, shadow_pool.iloc[r], 10 * i))
            for i, r in enumerate(shadow_rows)])
        test = np.array([features(domain, defended(
            name, categories, test_pool.iloc[r], 10 * i + 5))
            for i, r in enumerate(test_rows)])
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        clf.fit(train, shadow_y)
        hits = int((clf.predict(test) == test_y).sum())
        low, high = proportion_confint(hits, TESTS, method="wilson")
        print(f"{name:20s} accuracy {hits / TESTS:.2f} (95% CI {low:.2f}-"
              f"{high:.2f}, {TESTS} test datasets; {time.perf_counter() - start:.0f} s)"
              + (f"; certified bound {bound:.3f}"
                 if name == "AttributePrivateRAP" else ""))


if __name__ == "__main__":
    main()

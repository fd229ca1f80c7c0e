"""The property-inference attack on synthetic tables of Adult (issue 30, item 4).

The attacker tells apart datasets of 2,000 Adult records whose share of women
is 0.3 or 0.4, seeing only a synthetic table made from each:
``skattr.attacks.PropertyInferenceAttack`` with ``synthesizer=`` (each
dataset synthesised by a fresh clone of the defence), shadow datasets drawn
from one half of Adult and test datasets from the other; the features are
the table's share of every category of every column (its 1-way
marginals), the meta-classifier the attack's standardising logistic
regression. Defences:

- none: the attacker sees the true dataset's shares;
- DPRAP (epsilon 1, delta 1e-6): differential privacy of each record;
- AttributePrivateRAP (hiding 0.3 vs 0.4 under distributional privacy:
  each group subsampled to its binomial quantile, the share's delta 1e-6;
  each record (1, 1e-6)-DP): the table's share of women is the stated 0.35.

Each defence answers 8 random 3-way marginals (n' = 200, 300 Adam steps:
a smaller setting than rap_adult.py's, since every dataset is synthesised).
A certificate at (epsilon, delta) bounds any attacker's accuracy on the
pair by (e^epsilon + delta) / (1 + e^epsilon): 0.731 at epsilon 1, and
(1 + delta) / 2 = 0.5000005 for AttributePrivateRAP's share (epsilon 0).

Run: ``SKATTR_DATA=../shared/data python benchmarks/synth_attack.py``.
"""

import time

import numpy as np
from rap_adult import BINS

from skattr import Query, Secret, StackedQuery
from skattr.attacks import PropertyInferenceAttack
from skattr.datasets import load_adult
from skattr.synth import DPRAP, AttributePrivateRAP, bin_columns

N, SHADOWS, TESTS, VALUES = 2000, 100, 200, (0.3, 0.4)


def main():
    adult = load_adult()
    binned, labels = bin_columns(adult, BINS)
    categories = {c: labels.get(c) or sorted(binned[c].unique(), key=str)
                  for c in binned.columns}
    secret = Secret.proportion("sex", "Female", pairs=[VALUES])
    # The table's share of every category of every column.
    shares = StackedQuery.of(*[Query.proportion(c, v)
                               for c, values in categories.items()
                               for v in values])
    order = np.random.default_rng(0).permutation(len(binned))
    auxiliary = binned.iloc[order[: len(binned) // 2]]
    test = binned.iloc[order[len(binned) // 2:]]
    common = dict(categories=categories, epsilon=1.0, k=3, n_marginals=8,
                  n_synthetic=200, iterations=300, progress=False)
    defences = {
        "none": None,
        "DPRAP": DPRAP(delta=1e-6, **common),
        "AttributePrivateRAP": AttributePrivateRAP(
            secret=secret, privacy="distributional", delta=1e-6, **common),
    }
    bound = (1 + 1e-6) / 2
    for name, synthesizer in defences.items():
        start = time.perf_counter()
        attack = PropertyInferenceAttack(
            query=shares, secret=secret, synthesizer=synthesizer,
            values=VALUES, n=N, n_shadow=SHADOWS, n_test=TESTS,
            random_state=0, progress=False).fit(auxiliary)
        result = attack.evaluate(test)
        print(f"{name:20s} {result} ({time.perf_counter() - start:.0f} s)"
              + (f"; certified bound {bound:.7f}"
                 if name == "AttributePrivateRAP" else ""))


if __name__ == "__main__":
    main()

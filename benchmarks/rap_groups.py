"""AttributePrivateRAP against DPRAP on each group's records alone (issue 43, item 4).

The slides' setting on UCI Adult (every column, numeric ones binned by fixed
public edges, 64 random 3-way marginals, n' = 1,000, 1,000 Adam steps),
hiding whether the share of women is 0.3 or 0.4 (dataset privacy: the
subsample keeps 0.3 n women and 0.6 n men). For each epsilon (delta 1e-6):

- the baseline: DPRAP fitted to the women's records alone, and to the men's
  (all of them, no subsampling), each at the whole (epsilon, delta);
- AttributePrivateRAP (its two relaxed tables of 500 records each, as many
  as DPRAP's one) with ``neighbours="same-group"`` (a record's group
  public: each group gets the whole budget, parallel composition) and with
  the default ``neighbours="any"`` (a record may change group: each group
  gets half);

each group's marginals of its synthetic records against the same group of
the data: max and mean absolute error over the 64 marginals, and the ratio
to the baseline's. Fit times are CPU seconds (one thread) in this process.

Run: ``SKATTR_DATA=../shared/data OPENBLAS_NUM_THREADS=1 python
benchmarks/rap_groups.py [EPSILON ...] [--seeds 2]`` (default 0.1 0.5 1 2).
"""

import time

import numpy as np
from rap_adult import BINS

from skattr import Secret
from skattr.datasets import load_adult
from skattr.synth import (
    DPRAP,
    AttributePrivateRAP,
    OneHotDomain,
    bin_columns,
    marginal_errors,
)

COMMON = dict(k=3, n_marginals=64, n_synthetic=1000, iterations=1000,
              progress=False)
GROUPS = {"inside": "Female", "outside": "Male"}


def main(epsilons=(0.1, 0.5, 1.0, 2.0), seeds=1, first=0):
    adult = load_adult()
    binned, labels = bin_columns(adult, BINS)
    categories = {c: labels.get(c) or sorted(binned[c].unique(), key=str)
                  for c in binned.columns}
    domain = OneHotDomain(categories)
    real = {g: binned[binned.sex == v].reset_index(drop=True)
            for g, v in GROUPS.items()}
    secret = Secret.proportion("sex", "Female", pairs=[(0.3, 0.4)])
    print(f"Adult: {len(binned):,} records ({len(real['inside']):,} women), "
          f"{domain.width} one-hot features; hiding 0.3 vs 0.4 women")
    rows = []
    for eps in epsilons:
        for seed in range(first, first + seeds):
            base, base_cpu = {}, 0.0
            for g, part in real.items():
                start = time.process_time()
                rap = DPRAP(categories=categories, epsilon=eps, delta=1e-6,
                            random_state=seed, **COMMON).fit(part)
                base_cpu += time.process_time() - start
                workload = rap.workload_
                fake = rap.sample(len(part), random_state=seed + 1)
                base[g] = marginal_errors(domain, workload, part, fake)
            rows.append(("DPRAP on each group alone", eps, seed, base,
                         base_cpu, None))
            for neighbours in ("same-group", "any"):
                start = time.process_time()
                ap = AttributePrivateRAP(
                    categories=categories, secret=secret, epsilon=eps,
                    delta=1e-6, neighbours=neighbours, random_state=seed,
                    **COMMON).fit(binned)
                cpu = time.process_time() - start
                assert ap.workload_ == workload        # the same marginals
                fake = ap.sample(2 * len(binned), random_state=seed + 1)
                errors = {g: marginal_errors(
                    domain, workload, real[g],
                    fake[fake.sex == v].reset_index(drop=True))
                    for g, v in GROUPS.items()}
                rows.append((f"AttributePrivateRAP, neighbours={neighbours}",
                             eps, seed, errors, cpu, ap))
            for name, e, s, errors, cpu, ap in rows[-3:]:
                ratios = "" if ap is None else "; ratio to the baseline " + \
                    ", ".join(f"{g} max {errors[g][0] / base[g][0]:.2f} mean "
                              f"{errors[g][1] / base[g][1]:.2f}"
                              for g in GROUPS)
                sizes = "" if ap is None else (
                    f" (kept {ap.group_sizes_['inside']:,} women and "
                    f"{ap.group_sizes_['outside']:,} men, "
                    f"{ap.left_out_:,} left out; noise sd "
                    f"{ap.sigma_['inside']:.3g} / {ap.sigma_['outside']:.3g})")
                print(f"epsilon {e} seed {s} {name}{sizes}: women max "
                      f"{errors['inside'][0]:.4f} mean {errors['inside'][1]:.5f}"
                      f", men max {errors['outside'][0]:.4f} mean "
                      f"{errors['outside'][1]:.5f}; fit {cpu:.1f} CPU-s"
                      f"{ratios}", flush=True)
    summarise(rows, epsilons)


def summarise(rows, epsilons):
    """Mean over seeds of each error, and its ratio to the baseline's."""
    print("\nmeans over seeds (max / mean error; ratio to the baseline)")
    names = list(dict.fromkeys(r[0] for r in rows))
    for eps in epsilons:
        base = [r for r in rows if r[1] == eps and r[0] == names[0]]
        for name in names:
            mine = [r for r in rows if r[1] == eps and r[0] == name]
            cells = []
            for g, who in (("inside", "women"), ("outside", "men")):
                worst = np.mean([r[3][g][0] for r in mine])
                mean = np.mean([r[3][g][1] for r in mine])
                b_worst = np.mean([r[3][g][0] for r in base])
                b_mean = np.mean([r[3][g][1] for r in base])
                cells.append(f"{who} {worst:.4f} / {mean:.5f} "
                             f"({worst / b_worst:.2f}x / {mean / b_mean:.2f}x)")
            cpu = np.mean([r[4] for r in mine])
            print(f"| {eps} | {name} | {' | '.join(cells)} | {cpu:.0f} |")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("epsilons", type=float, nargs="*",
                        default=[0.1, 0.5, 1.0, 2.0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args()
    main(tuple(args.epsilons), args.seeds, args.first_seed)

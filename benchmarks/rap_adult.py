"""RAP on UCI Adult: fit time and marginal error (issue 30, items 4 and 5).

The slides' setting: every column of Adult (numeric ones binned by fixed,
public edges), 64 random 3-way marginals, T = 1, n' = 1,000 relaxed records,
1,000 Adam steps. Reported for each epsilon:

- DPRAP: the fit time against one pass of the same marginals over the real
  one-hot table (the least any method answering them must compute), and
  the max and mean error of the 64 marginals of the synthetic table;
- the Gaussian mechanism answering the same marginals directly;
- the peer, Private-PGM (``mbi``, McKenna et al.; its approximate mirror
  descent, as 64 random 3-way marginals make the exact junction tree far too
  large) fitted in the same process to the same noisy answers DPRAP saw:
  its fit time and the error of its (pseudo-)marginals. Skipped, with a
  line saying so, when ``mbi`` (which needs JAX) is not installed;
- AttributePrivateRAP hiding whether the share of women is 0.3 or 0.4
  (dataset attribute privacy, exactly; each record (epsilon, 1e-6)-DP):
  the same 64 marginals of its synthetic table (whose share of women is the
  stated 0.35), all of them and those without the sex column, and within
  each group (``rap_groups.py`` compares these with DPRAP fitted to each
  group alone).

Run: ``SKATTR_DATA=../shared/data python benchmarks/rap_adult.py [EPSILON ...]
[--plot docs/_static/rap_adult.png]`` (default: 0.1 0.5 1 2). The fit times
are only comparable on an idle machine.
"""

import time
import warnings

import numpy as np

from skattr import Secret
from skattr.datasets import load_adult
from skattr.synth import (
    DPRAP,
    AttributePrivateRAP,
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


def main(epsilons=(0.1, 0.5, 1.0, 2.0), plot=None):
    adult = load_adult()
    binned, labels = bin_columns(adult, BINS)
    categories = {c: labels.get(c) or sorted(binned[c].unique(), key=str)
                  for c in binned.columns}
    domain = OneHotDomain(categories)
    print(f"Adult: {len(binned):,} records, {len(domain.columns)} columns, "
          f"{domain.width} one-hot features")
    onehot = domain.onehot(binned)
    rows = []
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
        rows += [("DPRAP", eps, worst, mean),
                 ("Gaussian answers directly", eps, direct.max(),
                  direct.mean())]
        rows += peer(domain, rap, truth, len(binned), fit)
        rows += attribute_private(domain, categories, binned, rap.workload_,
                                  eps)
    if plot is not None:
        draw(rows, plot)


def draw(rows, path):
    """Max and mean error against epsilon, one line a method (log scales)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    for method in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == method]
        for ax, column in zip(axes, (2, 3), strict=True):
            ax.plot([r[1] for r in mine], [r[column] for r in mine], "o-",
                    label=method)
    for ax, what in zip(axes, ("max", "mean"), strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel(f"{what} absolute error of the 64 marginals' shares")
    axes[0].legend(fontsize=8)
    fig.suptitle("UCI Adult, 64 random 3-way marginals (benchmarks/"
                 "rap_adult.py)", fontsize=10)
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def peer(domain, rap, truth, n, rap_fit):
    """Private-PGM (mbi) on DPRAP's noisy answers: time and errors."""
    try:
        import jax
    except ImportError:
        print("  mbi (Private-PGM): not installed (pip install mbi), skipped")
        return []
    jax.config.update("jax_enable_x64", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import mbi
        from mbi import approximate_oracles
    names = [f"c{j}" for j in range(len(domain.columns))]
    space = mbi.Domain(tuple(names), tuple(int(s) for s in domain.sizes))
    measured = [mbi.LinearMeasurement(y * n, tuple(names[j] for j in m),
                                      stddev=float(sd) * n)
                for m, y, sd in zip(rap.answered_, rap.noisy_answers_,
                                    rap.sigma_, strict=True)]
    loss = mbi.marginal_loss.from_linear_measurements(measured, space)
    start = time.perf_counter()
    marginals = approximate_oracles.mirror_descent(
        space, loss, known_total=float(n),
        stepsize=2.0 / (loss.lipschitz * n), iters=500)
    jax.block_until_ready(marginals)
    fit = time.perf_counter() - start
    errors = np.concatenate([
        np.abs(np.asarray(marginals.project(tuple(names[j] for j in m))
                          .datavector(flatten=True)) / n - t)
        for m, t in zip(rap.answered_, truth, strict=True)])
    print(f"  mbi (Private-PGM, approximate mirror descent, 500 steps): fit "
          f"{fit:.1f} s (the first in a process includes JAX's compilation; "
          f"DPRAP takes {rap_fit / fit:.2f}x that); max error "
          f"{errors.max():.4f}, mean {errors.mean():.5f}")
    return [("Private-PGM (mbi)", rap.epsilon, errors.max(), errors.mean())]


def attribute_private(domain, categories, binned, workload, eps):
    """AttributePrivateRAP hiding the share of women, 0.3 vs 0.4."""
    secret = Secret.proportion("sex", "Female", pairs=[(0.3, 0.4)])
    start = time.perf_counter()
    rap = AttributePrivateRAP(categories=categories, secret=secret,
                              epsilon=eps, delta=1e-6, k=3, n_marginals=64,
                              random_state=0, progress=False).fit(binned)
    fit = time.perf_counter() - start
    assert rap.workload_ == workload                   # the same marginals
    synthetic = rap.sample(len(binned), random_state=1)
    sex = domain.columns.index("sex")
    other = [m for m in workload if sex not in m]
    worst, mean = marginal_errors(domain, workload, binned, synthetic)
    w_other, m_other = marginal_errors(domain, other, binned, synthetic)
    within = []
    for value in ("Female", "Male"):
        real = binned[binned.sex == value]
        fake = synthetic[synthetic.sex == value]
        within.append(marginal_errors(domain, workload, real, fake))
    print(f"  AttributePrivateRAP (sex 0.3 vs 0.4, dataset privacy; each "
          f"record ({eps}, 1e-6)-DP): fit {fit:.1f} s; kept "
          f"{rap.group_sizes_['inside']:,} women and "
          f"{rap.group_sizes_['outside']:,} men ({rap.left_out_:,} left out); "
          f"noise sd {rap.sigma_['inside']:.3g} (women's shares), "
          f"{rap.sigma_['outside']:.3g} (men's); max error {worst:.4f}, mean "
          f"{mean:.5f}; the {len(other)} marginals without sex: max "
          f"{w_other:.4f}, mean {m_other:.5f}; within women: max "
          f"{within[0][0]:.4f}, mean {within[0][1]:.5f}; within men: max "
          f"{within[1][0]:.4f}, mean {within[1][1]:.5f}; the table's share of "
          f"women {np.mean(synthetic.sex == 'Female'):.3f} (data's "
          f"{np.mean(binned.sex == 'Female'):.3f})")
    return [("AttributePrivateRAP (sex 0.3 vs 0.4)", eps, worst, mean),
            ("AttributePrivateRAP, marginals without sex", eps, w_other,
             m_other),
            ("AttributePrivateRAP, within women", eps, *within[0]),
            ("AttributePrivateRAP, within men", eps, *within[1])]


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("epsilons", type=float, nargs="*",
                        default=[0.1, 0.5, 1.0, 2.0])
    parser.add_argument("--plot", default=None, metavar="PNG",
                        help="also draw the errors against epsilon")
    args = parser.parse_args()
    main(tuple(args.epsilons), args.plot)

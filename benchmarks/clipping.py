"""The default clipping against one data-entry code: noise, and the bias it adds.

Issue 42: a public reference with a few codes of 999 in a weight column
made the old default (``bounds="reference"``, the reference's whole range)
add three times the noise to a mean and ten times to a std, without a word.
The default is now ``bounds="robust"``: the reference's range within its
far-out fences (``skattr._clipping.robust_ranges``).

Part 1, noise: ``skattr.datasets.make_hospital`` as reference (2,000 rows)
and private data (800 rows, on the grid of 0.4 vs 0.6), the secret the
proportion of women (0.4 vs 0.6), epsilon 1, delta 1e-3; the noise sd of
each statistic of weight from ``df.attrpriv.plan`` (nothing released),
with the reference clean and with 0.5% of its weights (10 records) set to
999, under the old and the new default and a declared range. The target
(``tests/test_clipping.py``): the new default's noise with the codes within
1.5x of the clean reference's.

Part 2, bias: what the robust range cuts of other columns, from a reference
of 2,000 records (median over 20 draws): the share of a large sample
(10^6) of the same population beyond the range, and the clipped mean's
shift, in the population's standard deviations and as a share of the mean;
the same for the reference's whole range (the old default), which cuts the
population's tails beyond the reference's extremes too.

Part 3, a real tail: a LogNormal income column added to the hospital's
tables, its mean's noise sd under both rules, the bias of the clipped mean
(the range against a population of 10^6) and the root mean square error.

Part 4, UCI Adult (with ``SKATTR_DATA`` set): each numeric column's robust
range against its range, the records cut and the shift of its mean and std.

``--quick`` runs parts 1 and 3 on one reference draw and part 2 on 5 draws.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd

import skattr
from skattr._clipping import robust_ranges
from skattr.datasets import make_hospital
from skattr.exceptions import ClippingWarning

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
N_PRIVATE, N_REFERENCE, CODES = 800, 2000, 10
DECLARED = {"weight": (70.0, 300.0)}     # lb: a range a clinician would state
STATISTICS = ("mean", "median", "std")
POLICIES = (("old default: 'reference'", "reference"),
            ("new default: 'robust'", "robust"),
            (f"declared {DECLARED['weight']}", DECLARED))


def coded(reference: np.ndarray, seed: int):
    """Return the reference with CODES weights set to 999 (rows drawn by seed)."""
    out = reference.copy()
    rows = np.random.default_rng(seed).choice(len(out), CODES, replace=False)
    out.loc[out.index[rows], "weight"] = 999.0
    return out


def noise_sd(private, reference, statistic: str, bounds) -> float:
    """The planned noise sd of one statistic of weight (no noise drawn)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)
        plan = private.attrpriv.plan(["weight"], statistic=statistic,
                                     secret=SECRET, reference=reference,
                                     epsilon=1.0, delta=1e-3, bounds=bounds)
    return float(plan.noise_std[0])


def part_one(draws: int) -> None:
    private = make_hospital(N_PRIVATE, random_state=2)
    print(f"## Noise sd of weight's statistics (n = {N_PRIVATE}, reference "
          f"{N_REFERENCE}, {CODES} codes of 999; median over {draws} "
          "reference draws)\n")
    print("| statistic | bounds | clean | with codes | ratio |")
    print("|---|---|---|---|---|")
    start = time.process_time()
    for statistic in STATISTICS:
        for label, bounds in POLICIES:
            clean, dirty = [], []
            for seed in range(draws):
                reference = make_hospital(N_REFERENCE, random_state=100 + seed)
                clean.append(noise_sd(private, reference, statistic, bounds))
                dirty.append(noise_sd(private, coded(reference, seed),
                                      statistic, bounds))
            a, b = float(np.median(clean)), float(np.median(dirty))
            print(f"| {statistic} | {label} | {a:.3g} | {b:.3g} | "
                  f"{b / a:.2f} |")
    print(f"\n({time.process_time() - start:.0f} CPU-s)\n")


def _with_income(frame, sigma: float, rng):
    """Add a LogNormal income (its log's mean 0.1 higher outside the group)."""
    other = (frame["gender"] != "female").to_numpy()
    return frame.assign(income=rng.lognormal(0.1 * other, sigma))


def part_income(draws: int) -> None:
    """A real heavy tail: the robust range's bias against the noise it saves."""
    print(f"## A real tail: mean income, LogNormal(0, sigma) (n = {N_PRIVATE}, "
          f"reference {N_REFERENCE}, median over {draws} draws)\n")
    print("| sigma | bounds | noise sd | bias of the clipped mean | "
          "root mean square error | (share of the mean) |")
    print("|---|---|---|---|---|---|")
    for sigma in (1.0, 1.5):
        rng = np.random.default_rng(5)
        population = _with_income(make_hospital(10**6, random_state=rng),
                                  sigma, rng)["income"].to_numpy()
        private = _with_income(make_hospital(N_PRIVATE, random_state=2),
                               sigma, rng)
        for label, bounds in POLICIES[:2]:
            rows = []
            for seed in range(draws):
                reference = _with_income(
                    make_hospital(N_REFERENCE, random_state=100 + seed),
                    sigma, rng)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ClippingWarning)
                    plan = private.attrpriv.plan(
                        ["income"], statistic="mean", secret=SECRET,
                        reference=reference, epsilon=1.0, delta=1e-3,
                        bounds=bounds)
                low, high = plan.clipping.as_dict()["income"]
                bias = np.clip(population, low, high).mean() - population.mean()
                sd = float(plan.noise_std[0])
                rows.append([sd, bias, np.hypot(sd, bias)])
            sd, bias, rmse = np.median(np.array(rows), axis=0)
            print(f"| {sigma:g} | {label} | {sd:.3g} | {bias:+.3g} | "
                  f"{rmse:.3g} | {rmse / population.mean():.1%} |")
    print()


def _population(name: str, rng, size: int) -> np.ndarray:
    hospital = make_hospital(size, random_state=rng)
    draw = {
        "normal N(100, 15)": lambda: rng.normal(100.0, 15.0, size),
        "hospital weight": lambda: hospital["weight"].to_numpy(),
        "hospital blood pressure": lambda: hospital["blood_pressure"].to_numpy(),
        "LogNormal(0, 0.5)": lambda: rng.lognormal(0.0, 0.5, size),
        "LogNormal(0, 1)": lambda: rng.lognormal(0.0, 1.0, size),
        "LogNormal(0, 1.5)": lambda: rng.lognormal(0.0, 1.5, size),
        "length of stay, Geometric(0.2)": lambda: rng.geometric(0.2, size),
        "length of stay, Geometric(0.05)": lambda: rng.geometric(0.05, size),
        "0/1, 0.5% ones": lambda: (rng.random(size) < 0.005).astype(float),
        "90% zeros, else Exponential(1)": lambda: np.where(
            rng.random(size) < 0.9, 0.0, rng.exponential(1.0, size)),
    }[name]
    return np.asarray(draw(), dtype=float)


POPULATIONS = ("normal N(100, 15)", "hospital weight", "hospital blood pressure",
               "LogNormal(0, 0.5)", "LogNormal(0, 1)", "LogNormal(0, 1.5)",
               "length of stay, Geometric(0.2)",
               "length of stay, Geometric(0.05)", "0/1, 0.5% ones",
               "90% zeros, else Exponential(1)")


def part_two(draws: int) -> None:
    print(f"## What the range cuts (reference of {N_REFERENCE}, median over "
          f"{draws} draws; the population a sample of 10^6)\n")
    print("| column | reference records cut | population beyond: robust | "
          "(whole range) | clipped mean's shift: robust, in sd | (whole "
          "range) | robust, share of the mean |")
    print("|---|---|---|---|---|---|---|")
    for name in POPULATIONS:
        rng = np.random.default_rng(7)
        population = _population(name, rng, 10**6)
        integer = name.startswith("length")
        rows = []
        for _ in range(draws):
            reference = _population(name, rng, N_REFERENCE)
            (low,), (high,) = robust_ranges(reference[:, None],
                                            integer=[integer])
            row = [((reference < low) | (reference > high)).sum()]
            for lo, hi in ((low, high), (reference.min(), reference.max())):
                row.append(((population < lo) | (population > hi)).mean())
            for lo, hi in ((low, high), (reference.min(), reference.max())):
                row.append((np.clip(population, lo, hi).mean()
                            - population.mean()) / population.std())
            row.append((np.clip(population, low, high).mean()
                        - population.mean()) / abs(population.mean()))
            rows.append(row)
        cut, beyond, beyond_whole, shift, shift_whole, share = np.median(
            np.array(rows, dtype=float), axis=0)
        print(f"| {name} | {cut:.0f} | {beyond:.2%} | {beyond_whole:.2%} | "
              f"{shift:+.4f} | {shift_whole:+.4f} | {share:+.2%} |")
    print()


def part_adult() -> None:
    """What the robust range cuts of Adult's numeric columns (SKATTR_DATA)."""
    data_home = os.environ.get("SKATTR_DATA")
    if not data_home:
        print("## UCI Adult: set SKATTR_DATA to measure it\n")
        return
    from skattr.datasets import load_adult

    adult = load_adult(data_home)
    columns = [c for c in adult.columns
               if pd.api.types.is_numeric_dtype(adult[c].dtype)]
    low, high = robust_ranges(adult[columns].to_numpy(dtype=float),
                              integer=[True] * len(columns))
    print(f"## UCI Adult ({len(adult):,} records), each numeric column's "
          "robust range against its range\n")
    print("| column | range | robust range | records cut | mean's shift "
          "(share) | std's shift (share) |")
    print("|---|---|---|---|---|---|")
    for c, lo, hi in zip(columns, low, high, strict=True):
        x = adult[c].to_numpy(dtype=float)
        clipped = np.clip(x, lo, hi)
        cut = int(((x < lo) | (x > hi)).sum())
        print(f"| {c} | [{x.min():g}, {x.max():g}] | [{lo:g}, {hi:g}] | "
              f"{cut:,} ({cut / x.size:.2%}) | "
              f"{clipped.mean() / x.mean() - 1:+.2%} | "
              f"{clipped.std() / x.std() - 1:+.1%} |")
    print()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="one reference draw in part 1, 5 in part 2")
    args = parser.parse_args(argv)
    part_one(1 if args.quick else 3)
    part_income(1 if args.quick else 3)
    part_two(5 if args.quick else 20)
    part_adult()


if __name__ == "__main__":
    main()

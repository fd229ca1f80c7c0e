"""Each value's law of its move under the joint coupling (issue 46, step A).

``JointBandLaw.coupled_distances`` gives, per secret and widest pair, a law
dominating each released value's move |D_j| under one coupling. It reads a
sum's, mean's or count's law directly (each side's tail from the FFT and
Chernoff's bound) and a quantile's from the count bound's chances at each
distance; otherwise, the value's own (W, eta)-bound on a ladder of 23
chances. This script measures, in one process, the CPU seconds
(``time.process_time``) of both ways, against ``per_statistic`` at one
delta (today's union bound), and how much the direct laws tighten the tails:

1. Adult, Chen & Ohrimenko's five statistics (n = 100, income 0.45 vs 0.55;
   skipped without ``SKATTR_DATA``): P(|D| > t) of the two counts.
2. The hospital's three means (n = 200, gender 0.4 vs 0.6).
3. Weight's quartiles (n = 200): each level's quantile of its law.

    python benchmarks/move_tails.py
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

import skattr
from skattr.datasets import load_adult, make_hospital
from skattr.laws import _joint_band, _stacked_band
from skattr.theta import ConfidenceBand

DELTA = 1e-3
ADULT_BOUNDS = {"age": (17, 90), "education-num": (1, 16),
                "hours-per-week": (1, 99)}


def _law(reference, query, secret, **bounds):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return skattr.mechanisms.ApproximateWassersteinMechanism(
            query=query, secret=secret, delta=DELTA, theta=ConfidenceBand(),
            **bounds).fit(reference).law_


def _cpu(work):
    start = time.process_time()
    found = work()
    return found, time.process_time() - start


def _ladder_only(make, n):
    """coupled_distances with every value read on the ladder."""
    moves, tails = _stacked_band._TAIL_MOVES, _joint_band.JointBandLaw._order_tails
    _stacked_band._TAIL_MOVES = 0
    _joint_band.JointBandLaw._order_tails = lambda *args: None
    try:
        return _cpu(lambda: make().coupled_distances(n, "dataset"))
    finally:
        _stacked_band._TAIL_MOVES = moves
        _joint_band.JointBandLaw._order_tails = tails


def _survival(law, t):
    above = np.concatenate([np.cumsum(law.probs[::-1])[::-1], [0.0]])
    return float(above[np.searchsorted(law.distances, t, side="right")]
                 + law.missing)


def case(label, make, n, names):
    per_statistic, seconds = _cpu(lambda: make().per_statistic(n, "dataset",
                                                               DELTA))
    (direct,), direct_s = _cpu(lambda: make().coupled_distances(n, "dataset"))
    (ladder,), ladder_s = _ladder_only(make, n)
    print(f"\n### {label}\n")
    print(f"CPU s: per_statistic (one delta) {seconds:.2f}, coupled_distances "
          f"on the ladder {ladder_s:.2f}, direct {direct_s:.2f}\n")
    print("| value | W at delta / K (per_statistic) | ladder's at delta / K "
          "| direct's | ladder's at 1e-6 | direct's |")
    print("|---|---|---|---|---|---|")
    k = len(names)
    for name, w, one, two in zip(names, per_statistic, ladder, direct,
                                 strict=True):
        print(f"| {name} | {w:.4g} | {one.closeness(DELTA / k):.4g} | "
              f"{two.closeness(DELTA / k):.4g} | {one.closeness(1e-6):.4g} | "
              f"{two.closeness(1e-6):.4g} |")
    return ladder, direct


def main():
    data_home = os.environ.get("SKATTR_DATA")
    if data_home:
        adult = load_adult(data_home=data_home)
        rich = skattr.Secret.proportion("income", ">50K", pairs=[(0.45, 0.55)])
        query = (skattr.Query.mean(["age", "education-num"])
                 + skattr.Query.count("marital-status", "Never-married")
                 + skattr.Query.count("sex", "Female")
                 + skattr.Query.mean("hours-per-week"))
        ladder, direct = case(
            "Adult's five (n = 100)",
            lambda: _law(adult, query, rich, bounds=ADULT_BOUNDS), 100,
            ["mean age", "mean education", "never married", "women",
             "mean hours"])
        print("\nP(|D| > t) of the counts, ladder / direct:\n")
        print("| t | " + " | ".join(str(t) for t in range(4, 10)) + " |")
        print("|---" * 7 + "|")
        for j, name in ((2, "never married"), (3, "women")):
            print(f"| {name} | " + " | ".join(
                f"{_survival(ladder[j], t):.2g} / {_survival(direct[j], t):.2g}"
                for t in range(4, 10)) + " |")
    else:
        print("SKATTR_DATA unset: Adult skipped.")
    reference = make_hospital(2000, random_state=0)
    gender = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    case("The hospital's three means (n = 200)",
         lambda: _law(reference, skattr.Query.mean(
             ["weight", "blood_pressure", "height"]), gender), 200,
         ["weight", "blood pressure", "height"])
    case("Weight's quartiles (n = 200)",
         lambda: _law(reference, skattr.Query.quantile(
             "weight", q=[0.25, 0.5, 0.75]), gender), 200,
         ["q0.25", "q0.5", "q0.75"])


if __name__ == "__main__":
    main()

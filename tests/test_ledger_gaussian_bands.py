"""Gaussian noise on several statistics in a default ledger, over the bands (issue 46).

A ledger of the default law and Theta certifies Gaussian-noise releases of
several distinct statistics, or of medians, quantiles and stds, through the
bands' one coupling (:func:`skattr._ledger._mixed.mixed_epsilon` with no
Laplace release); ``describe()`` takes it for its means and percentiles.
Their validity against the exact law of two order statistics is in
``tests/test_quantile_set_population_soundness.py``; here, the routing, the
search of the least epsilon, files and stores, and what is still refused.
"""

import math

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr._ledger._composed import composed_epsilon
from skattr._ledger._joint import single_statistics
from skattr.calibration._joint_coupled import joint_gaussian_delta
from skattr.datasets import make_hospital
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._distances import CoupledDistances

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


@pytest.fixture(scope="module")
def hospital():
    return make_hospital(200, random_state=1), make_hospital(2000, random_state=0)


def _ledger(hospital, budget=(3.0, 1e-3), **options):
    private, reference = hospital
    return private.attrpriv.ledger(secret=SECRET, reference=reference,
                                   budget=budget, random_state=0, **options)


def test_quantile_levels_are_split_into_one_value_bases_in_release_order():
    query = skattr.Statistic.quantile(["w", "h"], q=[0.25, 0.75])
    bases = single_statistics(query, 100)
    assert [(b.columns, b.q, w) for b, w in bases] == [
        (("w",), (0.25,), 1.0), (("w",), (0.75,), 1.0),
        (("h",), (0.25,), 1.0), (("h",), (0.75,), 1.0)]
    median, = single_statistics(skattr.Statistic.median(["w"]), 100)
    assert median[0].statistic == "median" and median[0].columns == ("w",)
    std, = single_statistics(skattr.Statistic.std(["w"], ddof=0), 100)
    assert std[0].ddof == 0
    with pytest.raises(NotCertifiableError, match="not on a trimmed-mean"):
        single_statistics(skattr.Statistic.trimmed_mean(["w"]), 100)


@pytest.mark.slow
def test_gaussian_quantiles_and_a_median_compose_in_a_default_ledger(hospital):
    ledger = _ledger(hospital)
    first = ledger.quantile("weight", [0.25, 0.75], epsilon=1.0,
                            mechanism="apgm")
    assert first.plan.noise_law.kind == "gaussian"
    alone = ledger.spent[0]
    # Re-certified under the ledger's coupling: not above its own epsilon
    # (planned on the same kind of bands), and not far below it.
    assert 0.9 < alone <= 1.0 * (1 + 1e-9)
    assert ledger.releases[-1].joint_bound == "composed"
    ledger.median("height", epsilon=0.5, mechanism="apgm")
    joint = ledger.spent[0]
    # Together: more than either, less than the sum of their epsilons.
    assert alone < joint < 1.5
    # Several means with Gaussian noise: refused before issue 46 without a
    # stated Gaussian model.
    ledger.mean(["weight", "blood_pressure"], epsilon=0.5, mechanism="apgm")
    assert joint < ledger.spent[0] <= 3.0


@pytest.mark.slow
def test_remaining_fits_a_gaussian_release_to_the_budget(hospital):
    ledger = _ledger(hospital, budget=(2.0, 1e-3))
    ledger.mean(["weight", "height"], epsilon=1.0, mechanism="apgm")
    ledger.quantile("weight", [0.25, 0.75], epsilon="remaining",
                    mechanism="apgm")
    spent = ledger.spent[0]
    assert 2.0 * (1 - 2e-3) <= spent <= 2.0 * (1 + 1e-9)
    with pytest.raises(skattr.exceptions.BudgetExceededError):
        ledger.median("height", epsilon=0.05, mechanism="apgm")


@pytest.mark.slow
def test_a_file_and_a_store_keep_gaussian_quantiles(hospital, tmp_path):
    private, reference = hospital
    ledger = _ledger(hospital)
    ledger.quantile("weight", [0.25, 0.75], epsilon=1.0, mechanism="apgm")
    ledger.median("height", epsilon=0.5, mechanism="apgm")
    loaded = skattr.Ledger.from_json(ledger.to_json(), private,
                                     reference=reference)
    assert loaded.spent == ledger.spent
    following = {"statistic": "mean", "epsilon": 0.5, "mechanism": "apgm"}
    assert loaded.plan("height", **following)[1] == pytest.approx(
        ledger.plan("height", **following)[1], rel=1e-12)
    path = tmp_path / "ledger.db"
    kept = skattr.Ledger.open(path, private, secret=SECRET,
                              reference=reference, budget=(3.0, 1e-3),
                              random_state=0)
    kept.quantile("weight", [0.25, 0.75], epsilon=1.0, mechanism="apgm")
    again = skattr.Ledger.open(path, private, secret=SECRET,
                               reference=reference, budget=(3.0, 1e-3),
                               random_state=0)
    assert again.spent == kept.spent and len(again.releases) == 1


def test_a_stated_theta_or_law_keeps_its_own_refusal(hospital):
    # theta="moments": exact laws of counts at the reference's frequencies,
    # one statistic at a time (the bands are not its Theta).
    rng = np.random.default_rng(0)

    def frame(n):
        s = rng.random(n) < 0.5
        return pd.DataFrame({"s": s, "k": rng.random(n) < np.where(s, .7, .3),
                             "j": rng.random(n) < 0.5})

    secret = skattr.Secret.proportion("s", True, pairs=[(0.4, 0.6)])
    ledger = frame(60).attrpriv.ledger(secret=secret, reference=frame(4000),
                                       budget=(3.0, 1e-3), theta="moments",
                                       random_state=0)
    ledger.count(["k"], True, epsilon=1.0, mechanism="apgm")
    with pytest.raises(NotCertifiableError, match="law='gaussian'"):
        ledger.count(["j"], True, epsilon=1.0, mechanism="apgm")
    assert len(ledger.releases) == 1
    # A trimmed mean has no Gaussian certificate over the bands: said
    # before any fit, with the mechanisms that release it.
    with pytest.raises(InvalidParameterError, match="a trimmed-mean needs"):
        _ledger(hospital).agg(skattr.Statistic.trimmed_mean("weight"),
                              epsilon=0.5, mechanism="apgm")


def _laws(rng, k):
    laws = []
    for _ in range(k):
        d = np.sort(rng.uniform(0, 3, 6))
        p = rng.dirichlet(np.ones(6))
        laws.append(CoupledDistances(d, p))
    return tuple(laws)


def test_gaussian_values_alone_take_the_least_epsilon_that_fits():
    rng = np.random.default_rng(3)
    per_pair = [_laws(rng, 3), _laws(rng, 3)]
    scales, delta = np.array([4.5, 6.0, 3.0]), 1e-3
    eps, found = composed_epsilon(per_pair, [], delta,
                                  gaussian=([0, 1, 2], scales, 1.0))

    def worst(e):
        return max(joint_gaussian_delta([laws], scales, e) for laws in per_pair)

    assert found == worst(eps) <= delta
    # Least to its precision: a little less does not fit.
    assert worst(eps * (1 - 3e-4)) > delta
    # The grid of splits (with a Laplace value that cannot move) finds no
    # less.
    still = CoupledDistances(np.array([0.0]), np.array([1.0]))
    gridded, _ = composed_epsilon([laws + (still,) for laws in per_pair],
                                  [(3, 1.0, 1e-3)], delta,
                                  gaussian=([0, 1, 2], scales, 1.0))
    assert eps <= gridded + 1e-3


@pytest.mark.slow
def test_describe_takes_gaussian_noise_for_several_percentiles(hospital):
    private, reference = hospital
    table = private.attrpriv.describe(["weight"], secret=SECRET,
                                      reference=reference, epsilon=2.0,
                                      random_state=0)
    kinds = [e.release.plan.noise_law.kind for e in table.ledger.releases]
    assert kinds == ["gaussian", "gaussian"]
    assert 2.0 * (1 - 2e-3) <= table.ledger.spent[0] <= 2.0 * (1 + 1e-9)
    one = private.attrpriv.describe(["weight"], secret=SECRET,
                                    reference=reference, percentiles=[0.5],
                                    epsilon=2.0, random_state=0)
    # One level: Laplace noise, as a median alone takes less of it.
    assert [e.release.plan.noise_law.kind for e in one.ledger.releases] == [
        "laplace", "laplace"]
    assert math.isfinite(float(one.noise_std.loc["50%", "weight"]))
    assert isinstance(table.table, pd.DataFrame)


@pytest.mark.slow
def test_a_large_epsilon_is_charged_its_own_not_the_box(hospital):
    # Found by review: the Gaussian values alone were searched up to
    # epsilon 8 only, and a release at 9 was charged the box's 13.8.
    ledger = _ledger(hospital, budget=(20.0, 1e-3))
    ledger.quantile("weight", [0.25, 0.75], epsilon=9.0, mechanism="apgm")
    assert ledger.spent[0] <= 9.0 * (1 + 1e-9)
    assert ledger.releases[-1].joint_bound == "composed"


@pytest.mark.parametrize("law", ["gaussian", "exact"])
def test_a_ledger_stating_its_law_refuses_gaussian_quantiles_first(hospital,
                                                                   law):
    ledger = _ledger(hospital, law=law)
    assert _ledger(hospital).gaussian_over_bands
    assert not ledger.gaussian_over_bands
    with pytest.raises(NotCertifiableError, match="drop mechanism="):
        ledger.quantile("weight", [0.25, 0.75], epsilon=1.0,
                        mechanism="apgm")
    assert ledger.spent == (0.0, 0.0) and not ledger.releases


def test_a_budget_spent_on_laplace_releases_points_to_gaussian_noise(hospital):
    # Four Laplace releases at epsilon 0.5 fill a budget of 2.1; the fifth
    # is refused, and the refusal says Gaussian noise serves many releases
    # better, chosen from the first (never a new ledger of the same data).
    ledger = _ledger(hospital, budget=(2.1, 1e-3))
    for column in ("weight", "height", "blood_pressure", "temperature"):
        ledger.mean([column], epsilon=0.5)
    with pytest.raises(skattr.exceptions.BudgetExceededError,
                       match=r"Gaussian noise on every release, chosen when "
                             r"it is opened \(noise='gaussian'\): the "
                             r"releases made stay spent"):
        ledger.median(["weight"], epsilon=0.5)
    # A few releases: no such hint (the default is the less noisy there).
    few = _ledger(hospital, budget=(1.2, 1e-3))
    few.mean(["weight"], epsilon=0.6)
    few.mean(["height"], epsilon=0.6)
    with pytest.raises(skattr.exceptions.BudgetExceededError) as refused:
        few.mean(["blood_pressure"], epsilon=0.6)
    assert "Gaussian noise" not in str(refused.value)

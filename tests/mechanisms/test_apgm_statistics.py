"""apgm on medians, quantiles and stds: Gaussian noise certified over the bands.

Several quantile levels (or medians or stds of several columns) released at
once get one Gaussian sd per value, certified jointly from the values' move
laws (:mod:`skattr.calibration._joint_coupled`); ``mechanism="auto"`` takes
it where its expected error is the least. Its validity against exact laws
is in ``tests/test_quantile_set_population_soundness.py``.
"""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr import Statistic
from skattr.datasets import make_hospital
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.mechanisms import AttributePrivateGaussian

REFERENCE = make_hospital(2000, random_state=0)
PRIVATE = make_hospital(200, random_state=1)
SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
KW = dict(secret=SECRET, reference=REFERENCE, random_state=0)


@pytest.mark.slow
def test_quartiles_at_once_take_less_noise_than_the_union_split():
    # The weight's quartiles at epsilon 1: each level's sd 67-70 with one
    # joint certificate, against 85-91 from the union of per-level tails.
    gaussian = PRIVATE.attrpriv.quantile("weight", [0.25, 0.5, 0.75],
                                         mechanism="apgm", **KW)
    laplace = PRIVATE.attrpriv.quantile("weight", [0.25, 0.5, 0.75],
                                        mechanism="approx-wasserstein", **KW)
    assert gaussian.noise == "gaussian" and gaussian.epsilon == 1.0
    assert np.all(gaussian.noise_std < 0.85 * laplace.noise_std)
    assert gaussian.expected_error < 0.9 * laplace.expected_error
    # Each level its own sd; the noise independent across levels.
    cov = np.asarray(gaussian.noise_covariance)
    assert np.allclose(cov, np.diag(np.diag(cov)))
    assert gaussian.plan.assumes("reference.band")
    # auto takes the least expected error: apgm here.
    auto = PRIVATE.attrpriv.quantile("weight", [0.25, 0.5, 0.75], **KW)
    assert auto.mechanism == "apgm"
    assert np.allclose(auto.noise_std, gaussian.noise_std)


@pytest.mark.slow
def test_medians_of_several_columns_and_stds_are_released():
    medians = PRIVATE.attrpriv.median(["weight", "height"], mechanism="apgm",
                                      **KW)
    assert medians.statistics == ("weight", "height")
    assert np.all(np.isfinite(medians.values)) and np.all(medians.noise_std > 0)
    stds = PRIVATE.attrpriv.std(["weight", "height"], mechanism="apgm", **KW)
    assert np.all(np.isfinite(stds.values)) and np.all(stds.noise_std > 0)


def test_one_median_is_released_by_apgm_when_named():
    # One value: certified as one value's joint law (auto prefers the
    # Wasserstein mechanisms there, test_registry says why).
    release = PRIVATE.attrpriv.median("weight", mechanism="apgm", **KW)
    assert release.mechanism == "apgm" and release.noise_std[0] > 0
    auto = PRIVATE.attrpriv.median("weight", **KW)
    assert auto.mechanism == "approx-wasserstein"
    assert auto.expected_error < release.expected_error


@pytest.fixture
def no_fit(monkeypatch):
    """Fail the test if any Theta is fitted (a refusal must come first)."""
    from skattr.theta._request import LawRequest

    def fitted(*args, **kwargs):
        raise AssertionError("Theta was fitted before the refusal")

    monkeypatch.setattr(LawRequest, "fit", fitted)


@pytest.mark.parametrize("query, options, said", [
    (Statistic.trimmed_mean("weight"), {}, "approx-wasserstein"),
    (Statistic.ols("weight", ["height"]), {}, "Resample"),
    (Statistic.median("weight"), {"law": "gaussian"}, "law='auto'"),
    (Statistic.quantile("weight", [0.25, 0.75]), {"theta": "moments"},
     "ConfidenceBand"),
    # Named before the generic constraint, which lists Thetas a median
    # cannot take either.
    (Statistic.median("weight"), {"theta": skattr.theta.Resample()},
     "confidence bands only"),
    (Statistic.quantile("weight", [0.25, 0.75]),
     {"secret": skattr.Secret.mean("weight", pairs=[(140, 150)])},
     "hides a proportion"),
])
def test_what_apgm_cannot_certify_is_refused_before_any_fit(query, options,
                                                            said, no_fit):
    options = {"secret": SECRET, **options}
    mech = AttributePrivateGaussian(query=query, **options)
    with pytest.raises(NotCertifiableError, match=said):
        mech.fit(REFERENCE)


def test_a_ledger_takes_what_a_gaussian_mechanism_releases():
    # apgm's quantiles in a default ledger are composed over the bands
    # (tests/test_ledger_gaussian_bands.py); a Gaussian mechanism that
    # releases no median at all is told so, before spending.
    ledger = PRIVATE.attrpriv.ledger(budget=(3.0, 1e-3), **KW)
    with pytest.raises(InvalidParameterError, match="linear statistics"):
        ledger.median("weight", epsilon=1.0, mechanism="expm-gaussian")
    assert ledger.spent == (0.0, 0.0) and not ledger.releases
    # Its default for quantiles stays Laplace noise, certified jointly.
    release = ledger.quantile("weight", [0.25, 0.75], epsilon=1.0)
    assert release.mechanism == "approx-wasserstein"


@pytest.mark.slow
def test_a_fitted_estimator_survives_its_file():
    mech = AttributePrivateGaussian(
        query=Statistic.quantile("weight", [0.25, 0.75]), secret=SECRET,
        random_state=0).fit(REFERENCE)
    loaded = AttributePrivateGaussian.from_json(mech.to_json())
    before, after = mech.plan(PRIVATE), loaded.plan(PRIVATE)
    assert np.array_equal(after.noise_covariance, before.noise_covariance)
    assert after.summary().as_text() == before.summary().as_text()


def test_a_constant_column_s_levels_take_no_noise():
    # A site code: its clipping range is one point, so no level can move.
    private, reference = PRIVATE.assign(site=7.0), REFERENCE.assign(site=7.0)
    release = private.attrpriv.quantile(
        "site", [0.25, 0.75], secret=SECRET, reference=reference,
        mechanism="apgm", random_state=0)
    assert release.values.tolist() == [7.0, 7.0]
    assert np.all(release.noise_std == 0)


def test_a_noise_whose_variance_underflows_is_refused():
    # Values of order 1e-170: the certified sd squares to 0 in floating
    # point, which would release the quantiles bare.
    rng = np.random.default_rng(0)
    g = np.repeat([1, 0], 300)
    reference = pd.DataFrame({"g": g, "x": rng.beta(2 + 3 * g, 3) * 1e-170})
    with pytest.raises(NotCertifiableError, match="below floating point"):
        reference.sample(60, random_state=1).attrpriv.quantile(
            "x", [0.25, 0.75], secret=skattr.Secret.proportion(
                "g", 1, pairs=[(0.4, 0.6)]), reference=reference,
            bounds={"x": (0, 1e-170)}, mechanism="apgm")


def test_a_missing_value_is_refused_before_any_fit(no_fit):
    # auto would fit and plan apgm and the Wasserstein mechanisms (seconds)
    # before the release read the NaN.
    private = PRIVATE.copy()
    private.loc[private.index[5], "weight"] = np.nan
    with pytest.raises(DataValidationError, match=r"NaN .* \['weight'\]"):
        private.attrpriv.quantile("weight", [0.25, 0.75], **KW)
    # Means too (before: planned for a second, then refused as read), alone,
    # beside a count, in a ledger and in describe().
    with pytest.raises(DataValidationError, match=r"NaN .* \['weight'\]"):
        private.attrpriv.mean(["height", "weight"], **KW)
    with pytest.raises(DataValidationError, match=r"NaN .* \['weight'\]"):
        private.attrpriv.plan(statistic=skattr.Query.count("gender", "female")
                              + skattr.Query.mean("weight"), **KW)
    ledger = private.attrpriv.ledger(budget=(2.0, 1e-3), **KW)
    with pytest.raises(DataValidationError, match=r"NaN .* \['weight'\]"):
        ledger.mean(["weight"], epsilon=1.0)
    with pytest.raises(DataValidationError, match=r"NaN .* \['weight'\]"):
        private.attrpriv.describe(["height", "weight"], **KW)
    # A count reads no number: its column's NaN is not a released value.
    counted = PRIVATE.assign(site=np.where(np.arange(len(PRIVATE)) == 3,
                                           np.nan, 1.0))
    with pytest.raises(AssertionError, match="Theta was fitted"):
        counted.attrpriv.plan(statistic=skattr.Query.count("site", 1.0),
                              **dict(KW, reference=REFERENCE.assign(site=1.0)))

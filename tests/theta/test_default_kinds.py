"""The default Theta's band law chosen by the statistic's kind (issue 45).

``theta="auto"`` takes one value's law over the confidence bands when its
kind registered a band law, for the mechanisms its kind names
(``StatisticKind.default_band_for``): the trimmed mean is then certified by
default by the Wasserstein mechanisms exactly as ``theta=ConfidenceBand()``
certifies it, and every other kind keeps its decision. The trimmed mean's
band law itself is checked against its exact law in
``tests/laws/test_trimmed_band.py``.
"""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr import Query, Statistic
from skattr._kinds import TrimmedMean, kind_of
from skattr.exceptions import NotCertifiableError
from skattr.mechanisms import (
    ApproximateWassersteinMechanism,
    WassersteinMechanism,
)
from skattr.theta import ConfidenceBand
from skattr.theta._band import banded_by_default
from skattr.theta._request import LawRequest

SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
BOUNDS = {"age": (0, 100)}


def _reference(seed=0, per=1000):
    rng = np.random.default_rng(seed)
    g = np.repeat([1, 0], per)
    return pd.DataFrame({"g": g, "age": np.clip(rng.normal(40 + 5 * g, 10),
                                               0, 100)})


@pytest.mark.parametrize("mechanism, extra", [
    (WassersteinMechanism, {}),
    (ApproximateWassersteinMechanism, {"delta": 1e-3}),
])
def test_the_default_certifies_a_trimmed_mean_as_confidence_band_does(
        mechanism, extra):
    reference = _reference()
    private = _reference(seed=1, per=150)
    stat = Statistic.trimmed_mean(["age"], 0.1)
    fitted = {}
    for name, theta in (("auto", "auto"), ("band", ConfidenceBand())):
        fitted[name] = mechanism(query=stat, secret=SECRET, bounds=BOUNDS,
                                 theta=theta, random_state=0,
                                 **extra).fit(reference)
    auto, band = fitted["auto"], fitted["band"]
    assert type(auto.law_).__name__ == "BandLaw"
    plan = auto.plan(n=len(private))
    assert plan.assumes("reference.band")
    assert plan.sensitivity == band.plan(n=len(private)).sensitivity
    assert plan.epsilon == band.plan(n=len(private)).epsilon
    got, expected = auto.release(private), band.release(private)
    assert got.values.tolist() == expected.values.tolist()
    assert got.to_dict() == expected.to_dict()


def test_the_default_trimmed_mean_is_released_by_the_accessor():
    reference = _reference()
    private = _reference(seed=1, per=150)
    release = private.attrpriv.agg(
        Statistic.trimmed_mean(["age"], 0.1), secret=SECRET,
        reference=reference, bounds=BOUNDS, epsilon=1.0, delta=1e-3,
        random_state=0)
    assert release.assumes("reference.band")
    assert np.isfinite(release.values.iloc[0])


def _request(query, kinds, columns=("age",), secret=SECRET):
    return LawRequest(frame=_reference(per=50), query=query,
                      columns=tuple(columns), secrets=(secret,), kinds=kinds)


WASSERSTEIN = WassersteinMechanism.calibrates
APGM = ("exact", "box")


@pytest.mark.parametrize("query, wasserstein, apgm", [
    # Today's decisions for every kind, kept.
    (Query.mean(["age"]), True, True),
    (Query.sum(["age"]), True, True),
    (Statistic.median(["age"]), True, True),
    (Statistic.quantile(["age"], 0.3), True, True),
    (Statistic.std(["age"]), True, False),
    (Query.count(["age"], 1), False, False),
    (Statistic.ols("age", ["g"]), False, False),
    # The trimmed mean's band law, for the Wasserstein mechanisms.
    (Statistic.trimmed_mean(["age"], 0.1), True, False),
])
def test_which_kinds_the_default_takes_over_the_bands(query, wasserstein,
                                                      apgm):
    columns = (query.columns if getattr(query, "columns", None)
               else ("age",))
    assert banded_by_default(_request(query, WASSERSTEIN, columns)) is wasserstein
    assert banded_by_default(_request(query, APGM, columns)) is apgm


def test_several_values_and_mean_secrets_as_before():
    quartiles = Statistic.quantile(["age"], [0.25, 0.5, 0.75])
    assert banded_by_default(_request(quartiles, WASSERSTEIN))
    assert not banded_by_default(_request(quartiles, APGM))
    mean_secret = skattr.Secret.mean("g", pairs=[(0.4, 0.6)])
    for query in (Query.mean(["age"]), Statistic.trimmed_mean(["age"], 0.1)):
        assert not banded_by_default(_request(query, WASSERSTEIN,
                                              secret=mean_secret))


def test_a_kind_declaring_every_mechanism_is_banded_for_each(monkeypatch):
    # The kind's declaration is what the default reads: a trimmed mean
    # declaring every mechanism is banded for apgm's calibrations too.
    query = Statistic.trimmed_mean(["age"], 0.1)
    assert not banded_by_default(_request(query, APGM))
    monkeypatch.setattr(TrimmedMean, "default_band_for", None)
    assert kind_of("trimmed-mean").default_band_for is None
    assert banded_by_default(_request(query, APGM))


def test_a_statistic_with_no_band_law_is_still_refused_by_default():
    reference = _reference()
    mech = ApproximateWassersteinMechanism(
        query=Statistic.ols("age", ["g"]), secret=SECRET,
        bounds={"age": (0, 100), "g": (0, 1)}, delta=1e-3)
    with pytest.raises(NotCertifiableError) as caught:
        mech.fit(reference)
    message = str(caught.value)
    assert "No bound on the ols holds for the population" in message
    # The bounded statistics are read off the kinds' registered laws.
    assert "stds and trimmed means over the reference's confidence" in message

"""The df.attrpriv accessor: verbs, plan, leakage, reference policy."""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.datasets import make_hospital
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    PrivacyLeakWarning,
)
from skattr.laws import AssumeGaussian

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


@pytest.fixture(scope="module")
def frames():
    return make_hospital(3000, random_state=0), make_hospital(60, random_state=1)


@pytest.mark.slow
def test_mean_release_matches_the_estimator(frames):
    reference, private = frames
    before = private.copy(deep=True)
    rel = private.attrpriv.mean(["weight", "blood_pressure"], secret=SECRET,
                                reference=reference, epsilon=1.0, delta=1e-3,
                                mechanism="apgm", law="gaussian", random_state=3)
    est = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean(["weight", "blood_pressure"]), secret=SECRET,
        law="gaussian", random_state=3).fit(reference)
    pd.testing.assert_series_equal(rel.values, est.release(private).values)
    assert rel.mechanism == "apgm"
    assert (rel.epsilon, rel.delta) == (1.0, 1e-3)
    pd.testing.assert_frame_equal(private, before)
    assert "attrpriv" not in private.__dict__


@pytest.mark.parametrize("verb, args, expected", [
    ("sum", (["temperature"],), lambda d: d.temperature.sum()),
    ("count", (["height"], lambda h: h > 68), lambda d: (d.height > 68).sum()),
    ("proportion", (["height"], lambda h: h > 68), lambda d: (d.height > 68).mean()),
])
def test_other_verbs_release_near_the_truth(frames, verb, args, expected):
    reference, private = frames
    rel = getattr(private.attrpriv, verb)(*args, secret=SECRET, reference=reference,
                                          epsilon=5.0, random_state=0)
    noise = float(rel.values.iloc[0] - expected(private))
    sd = float(rel.noise_std[0])
    assert abs(noise) <= 5 * sd + 1e-12
    if sd == 0:
        assert noise == 0


def test_plan_releases_nothing_and_matches_release(frames):
    reference, private = frames
    kw = dict(secret=SECRET, reference=reference, law="gaussian", mechanism="apgm")
    plan = private.attrpriv.plan(["weight"], **kw)
    rel = private.attrpriv.mean(["weight"], **kw)
    assert type(plan) is skattr.Plan
    assert not hasattr(plan, "values")
    assert plan.noise_covariance[0, 0] == rel.noise_covariance[0, 0]
    assert plan.expected_error == rel.expected_error
    assert "no noise drawn" in plan.summary()


@pytest.mark.slow
def test_leakage_of_the_raw_mean(frames):
    reference, private = frames
    kw = dict(secret=SECRET, reference=reference, law="gaussian")
    eps = private.attrpriv.leakage(["weight"], delta=1e-3, **kw)
    # The raw mean weight leaks: more than the epsilon = 1 a release would allow,
    # so a release at epsilon = 1 adds noise, and one at the leakage does not.
    assert eps > 1.0
    assert not private.attrpriv.plan(["weight"], mechanism="apgm", epsilon=1.0,
                                     **kw).noiseless
    assert private.attrpriv.plan(["weight"], mechanism="apgm", epsilon=eps * 1.001,
                                 **kw).noiseless
    # Temperature does not depend on gender: it leaks almost nothing.
    assert private.attrpriv.leakage(["temperature"], **kw) < 0.5


def test_reference_self_warns(frames):
    _, private = frames
    big = make_hospital(400, random_state=5)
    with pytest.warns(PrivacyLeakWarning, match="reference='self'"):
        big.attrpriv.mean(["weight"], secret=SECRET, reference="self",
                          law=AssumeGaussian(sampling="with-replacement"))
    with pytest.raises(InvalidParameterError, match="fits Theta on reference data"):
        private.attrpriv.mean(["weight"], secret=SECRET)
    with pytest.raises(InvalidParameterError,
                       match=r"reference must be a \(pandas or Dask\) DataFrame"):
        private.attrpriv.mean(["weight"], secret=SECRET, reference=np.zeros((3, 3)))


@pytest.mark.slow
def test_auto_picks_the_certified_mechanism_of_least_expected_error(frames):
    reference, private = frames
    cols = ["weight", "blood_pressure"]
    # The Gaussian law taken explicitly, so that every Theta mechanism is a
    # candidate beside the Wasserstein mechanisms (which take no ``law``).
    auto = private.attrpriv.plan(cols, secret=SECRET, reference=reference,
                                 law="gaussian")
    errors = {}
    for name, cls in skattr.mechanisms.MECHANISMS.items():
        if not getattr(cls, "auto_candidate", True):
            continue  # the differential-privacy baselines
        if cls.auto_requires:
            continue  # the Markov quilt mechanism: no network is given here
        law = {"law": "gaussian"} if "law" in cls().get_params() else {}
        try:
            plan = private.attrpriv.plan(cols, secret=SECRET, reference=reference,
                                         mechanism=name, **law)
        except skattr.exceptions.NotCertifiableError:
            continue
        errors[name] = plan.expected_error
    least = min(errors.values())
    assert auto.expected_error == pytest.approx(least, rel=1e-9)
    # Ties (mechanisms that coincide) go to the first in the registry's order.
    assert auto.mechanism == next(name for name, err in errors.items()
                                  if err <= least * (1 + 1e-9))
    # Laplace variants need the translation assumption, which fitted moments
    # (unequal covariances) do not give: they are not candidates.
    assert "expm-laplace" not in errors


def test_mechanism_names(frames):
    reference, private = frames
    with pytest.raises(InvalidParameterError, match="needs network="):
        private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                              mechanism="markov-quilt")
    with pytest.raises(InvalidParameterError, match="Unknown mechanism 'apgn'"):
        private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                              mechanism="apgn")
    rel = private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                                mechanism="apgm", law="gaussian")
    assert rel.mechanism == "apgm"
    with pytest.raises(InvalidParameterError, match="takes no parameter.*'epsilom'"):
        private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                              epsilom=1.0)
    with pytest.raises(InvalidParameterError, match="takes no parameter.*'law'"):
        private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                              mechanism="approx-wasserstein", law="gaussian")


def test_duplicate_columns_are_refused():
    # Refused by the release that reads them, with a skattr error (it was an
    # AttributeError on df.attrpriv, which hasattr and tab completion swallow).
    frame = pd.DataFrame([[1.0, 2.0, 0]], columns=["a", "a", "g"])
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    assert hasattr(frame, "attrpriv")
    with pytest.raises(DataValidationError,
                       match=r"duplicate column names \['a'\], which this "
                             r"release reads"):
        frame.attrpriv.mean(["a"], secret=secret, reference=frame)


@pytest.mark.parametrize("name", ["mean", "sum", "count", "proportion", "median",
                                  "quantile", "std", "agg"])
def test_release_methods_name_their_parameters(name):
    """epsilon, delta, mechanism and random_state are named, and documented."""
    import inspect

    from skattr._accessor import AttributePrivacyAccessor

    method = getattr(AttributePrivacyAccessor, name)
    params = inspect.signature(method).parameters
    for keyword, default in (("epsilon", 1.0), ("delta", None),
                             ("mechanism", "auto"), ("random_state", None)):
        assert params[keyword].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[keyword].default == default
        assert f"{keyword} : " in method.__doc__
    assert method.__doc__.index("Parameters") < method.__doc__.index("Returns")


def test_explicit_delta_reaches_the_mechanism():
    from skattr.datasets import make_hospital

    private, reference = make_hospital(50, random_state=1), make_hospital(
        2000, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    rel = private.attrpriv.mean(["weight"], secret=secret, reference=reference,
                                law="gaussian", mechanism="apgm", epsilon=0.5,
                                delta=1e-4, random_state=0)
    assert (rel.epsilon, rel.delta) == (0.5, 1e-4)


def test_ledger_names_an_unknown_parameter():
    from skattr.datasets import make_hospital
    from skattr.exceptions import InvalidParameterError

    private = make_hospital(50, random_state=1)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    with pytest.raises(InvalidParameterError, match=r"\['secure'\]"):
        private.attrpriv.ledger(secret=secret, reference=private,
                                budget=(1.0, 1e-3), secure=True)


def test_a_query_passed_first_is_the_statistic(frames):
    reference, private = frames
    query = skattr.Query.mean("weight") + skattr.Query.mean("blood_pressure")
    first = private.attrpriv.plan(query, secret=SECRET, reference=reference)
    named = private.attrpriv.plan(statistic=query, secret=SECRET,
                                  reference=reference)
    assert first.expected_error == named.expected_error
    with pytest.raises(InvalidParameterError, match="pass the query alone"):
        private.attrpriv.plan(query, statistic="median", secret=SECRET,
                              reference=reference)


def test_plan_names_a_quantile_with_its_levels():
    # plan(statistic="quantile", q=...) in the accessor and a ledger, as the
    # verb quantile(columns, q) releases it.
    private = make_hospital(200, random_state=1)
    reference = make_hospital(2000, random_state=0)
    secret = SECRET
    plan = private.attrpriv.plan(["weight"], statistic="quantile",
                                 q=[0.25, 0.75], secret=secret,
                                 reference=reference, epsilon=1.0)
    assert list(plan.statistics) == ["weight:q0.25", "weight:q0.75"]
    ledger = private.attrpriv.ledger(secret=secret, reference=reference,
                                     budget=(3.0, 1e-3))
    plan, joint = ledger.plan(["weight"], statistic="quantile", q=[0.5],
                              epsilon=1.0)
    assert len(plan.statistics) == 1 and 0 < joint <= 1.0 * (1 + 1e-9)
    with pytest.raises(InvalidParameterError, match="needs its levels"):
        ledger.plan(["weight"], statistic="quantile", epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="statistic='mean' takes"):
        private.attrpriv.plan(["weight"], q=[0.5], secret=secret,
                              reference=reference)


def test_a_count_of_a_column_of_other_numbers_is_refused_once(monkeypatch):
    # Said before any fit, once, not in every mechanism's refusal.
    private = make_hospital(200, random_state=1)
    reference = make_hospital(2000, random_state=0)
    fits = []
    fit = skattr.mechanisms.BaseMechanism.fit
    monkeypatch.setattr(skattr.mechanisms.BaseMechanism, "fit",
                        lambda self, *a, **k: fits.append(1) or fit(self, *a,
                                                                    **k))
    with pytest.raises(InvalidParameterError) as refused:
        private.attrpriv.count(["weight"], secret=SECRET, reference=reference)
    assert str(refused.value).startswith("Column 'weight' is not boolean or 0/1")
    assert not fits

"""0.3's parameters: ``relaxation=`` (Chen and Ohrimenko's Thms 4.6 and 4.7 as
one typed choice) and no parameter that does nothing; 0.2's keywords still
taken, with a FutureWarning, until 0.4."""

import inspect
import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone

import skattr
from skattr.exceptions import InvalidParameterError
from skattr.laws import AssumeGaussian
from skattr.mechanisms import (
    ApproximateWassersteinMechanism,
    AttributePrivateGaussian,
    BaseMechanism,
    ExpectedValueGaussian,
    ExpectedValueLaplace,
    MaxDivergenceGap,
    OptimalGaussian,
    WassersteinGap,
    WassersteinMechanism,
)
from skattr.theta import ExpertTheta, GroupMoments

SECRET = skattr.Secret.proportion("s", 1, pairs=[(0.0, 1.0)])
FRAME = skattr.datasets.make_hospital(20, random_state=0).assign(
    s=[0, 1] * 10, a=np.linspace(0, 1, 20))


def _plan(cls, covariances="certify", **kw):
    theta = ExpertTheta([GroupMoments(mean_in=[2.0], mean_out=[0.0], cov_in=1.0,
                                      cov_out=1.0, columns=("a",))])
    law = AssumeGaussian(sampling="with-replacement", covariances=covariances)
    return cls(query=skattr.Query.sum(["a"]), secret=SECRET, theta=theta,
               law=law, epsilon=0.9, random_state=0, **kw).fit(FRAME).plan(n=1)


def _same(a, b):
    assert (a.epsilon, a.delta, a.sensitivity) == (b.epsilon, b.delta,
                                                   b.sensitivity)
    np.testing.assert_array_equal(a.noise_covariance, b.noise_covariance)
    assert a.assumed == b.assumed and a.certified_by == b.certified_by


@pytest.mark.parametrize("cls, old, new", [
    (AttributePrivateGaussian, {"lambda_eta": 0.1, "eta": 1e-5},
     MaxDivergenceGap(lam=0.1, eta=1e-5)),
    (ExpectedValueGaussian, {"lambda_eta": 0.05}, MaxDivergenceGap(lam=0.05)),
    (OptimalGaussian, {"wasserstein_w": 0.3, "wasserstein_lambda": 0.1},
     WassersteinGap(w=0.3, lam=0.1)),
])
def test_the_keywords_of_0_2_warn_and_certify_alike(cls, old, new):
    with pytest.warns(FutureWarning, match=r"relaxation=") as caught:
        mech = cls(**old)
    # The warning points at the caller, not at skattr.
    assert caught[0].filename == __file__
    assert mech.relaxation == new
    assert "lambda_eta" not in mech.get_params()
    with pytest.warns(FutureWarning):
        legacy = _plan(cls, **old)
    _same(legacy, _plan(cls, relaxation=new))


def test_keywords_at_their_defaults_are_silent():
    # As a file saved by 0.2 holds them: no relaxation, no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mech = ExpectedValueGaussian(lambda_eta=None, eta=0.0, wasserstein_w=None,
                                     wasserstein_lambda=None)
    assert mech.relaxation is None


@pytest.mark.parametrize("kw, match", [
    ({"wasserstein_w": 0.3}, "needs both"),
    ({"wasserstein_lambda": 0.1}, "needs both"),
    ({"lambda_eta": 0.1, "wasserstein_w": 0.3, "wasserstein_lambda": 0.1},
     "alternative relaxations"),
    ({"lambda_eta": 0.1, "relaxation": MaxDivergenceGap(lam=0.1)},
     "same choice"),
    ({"lambda_eta": -1.0}, r"lam must be a finite number in \[0, inf\)"),
    ({"lamda_eta": 0.1}, "takes no parameter 'lamda_eta'"),
])
def test_contradictory_or_unknown_keywords_are_refused_at_fit(kw, match):
    # Nothing raises in __init__ (scikit-learn's rule; clone and set_params
    # rebuild estimators with any values): fit refuses, before any work, and
    # a clone keeps the refusal.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mech = ExpectedValueGaussian(query=skattr.Query.mean(["a"]),
                                     secret=SECRET, **kw)
    for est in (mech, clone(mech)):
        with pytest.raises(InvalidParameterError, match=match):
            est.fit(FRAME)


def test_the_attribute_private_gaussian_mechanism_never_took_theorem_4_7():
    mech = AttributePrivateGaussian(query=skattr.Query.mean(["a"]), secret=SECRET,
                                    wasserstein_w=0.3, wasserstein_lambda=0.1)
    with pytest.raises(InvalidParameterError,
                       match="takes no parameter 'wasserstein_"):
        mech.fit(FRAME)


@pytest.mark.parametrize("make, match", [
    (lambda: MaxDivergenceGap(lam=float("nan")), "MaxDivergenceGap.lam"),
    (lambda: MaxDivergenceGap(lam=0.1, eta=1.0), r"MaxDivergenceGap.eta .*\[0, 1\)"),
    (lambda: MaxDivergenceGap(lam="big"), "got 'big'"),
    (lambda: WassersteinGap(w=-1.0, lam=0.1), "WassersteinGap.w"),
    (lambda: WassersteinGap(w=1.0, lam=float("inf")), "WassersteinGap.lam"),
])
def test_a_gap_out_of_range_is_refused_when_made(make, match):
    with pytest.raises(InvalidParameterError, match=match):
        make()


def test_each_class_takes_the_relaxations_its_theorems_cover():
    # Thm 4.7's extra Laplace noise belongs to the Expected Value family; the
    # Attribute-Private Gaussian Mechanism refuses it at fit, before any work.
    mech = AttributePrivateGaussian(query=skattr.Query.mean(["a"]), secret=SECRET,
                                    law="gaussian",
                                    relaxation=WassersteinGap(w=0.3, lam=0.1))
    with pytest.raises(InvalidParameterError, match="'relaxation' parameter"):
        mech.fit(FRAME)
    with pytest.raises(InvalidParameterError, match="'relaxation' parameter"):
        _plan(ExpectedValueGaussian, relaxation=(0.1, 1e-5))


def test_the_certificate_is_theorem_4_6s():
    base = _plan(ExpectedValueLaplace, covariances="assume-equal")
    plan = _plan(ExpectedValueLaplace, covariances="assume-equal",
                 relaxation=MaxDivergenceGap(lam=0.2, eta=1e-6))
    assert plan.epsilon == pytest.approx(base.epsilon + 0.4)
    assert plan.delta == pytest.approx((1 + math.exp(0.9 + 0.2)) * 1e-6)
    assert plan.assumed[-1].option == (
        "relaxation=MaxDivergenceGap(lam=0.2, eta=1e-06)")
    assert plan.noise_scale == base.noise_scale


def test_a_relaxation_survives_clone_and_a_file(tmp_path):
    mech = ExpectedValueGaussian(query=skattr.Query.mean(["a"]), secret=SECRET,
                                 law="gaussian", theta="moments",
                                 relaxation=WassersteinGap(w=0.3, lam=0.1))
    assert clone(mech).relaxation == mech.relaxation
    fitted = mech.fit(FRAME.assign(a=FRAME.a + np.arange(20) % 3))
    back = BaseMechanism.from_json(fitted.to_json())
    assert back.relaxation == WassersteinGap(w=0.3, lam=0.1)
    _same(back.plan(n=10), fitted.plan(n=10))


def test_no_signature_lists_a_keyword_of_0_2():
    for name, cls in skattr.mechanisms.MECHANISMS.items():
        params = inspect.signature(cls).parameters
        assert not {"lambda_eta", "eta", "wasserstein_w",
                    "wasserstein_lambda"} & set(params), name
        assert all(p.kind is p.KEYWORD_ONLY for p in params.values()), name
    for cls in (WassersteinMechanism, ApproximateWassersteinMechanism):
        assert "calibration" not in cls().get_params()
    assert "delta" not in WassersteinMechanism().get_params()


COUNT = skattr.Query.count("s", 1)


@pytest.mark.parametrize("cls, old", [
    (WassersteinMechanism, {"delta": 0.01}),
    (WassersteinMechanism, {"calibration": "classic"}),
    (ApproximateWassersteinMechanism, {"calibration": "classic"}),
])
def test_a_keyword_that_did_nothing_warns_and_changes_nothing(cls, old):
    kw = dict(query=skattr.Query.mean(["a"]), secret=SECRET, epsilon=1.0,
              theta=skattr.theta.Resample(random_state=0, n_draws=200))
    with pytest.warns(FutureWarning, match="will be removed in 0.4") as caught:
        mech = cls(**kw, **old)
    assert caught[0].filename == __file__
    assert not set(old) & set(mech.get_params())
    _same(mech.fit(FRAME).plan(n=10), cls(**kw).fit(FRAME).plan(n=10))


def test_keywords_that_did_nothing_are_silent_at_their_defaults():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        WassersteinMechanism(delta=0.0, calibration="analytic")
        ApproximateWassersteinMechanism(calibration="analytic")
    with pytest.raises(TypeError, match="unexpected keyword argument 'lambda_eta'"):
        WassersteinMechanism(lambda_eta=0.1)
    # delta is the approximate mechanism's own parameter.
    assert ApproximateWassersteinMechanism(delta=0.01).delta == 0.01


def test_the_accessor_refuses_calibration_for_laplace_noise_and_auto_takes_delta_0():
    with pytest.raises(InvalidParameterError, match="takes no 'calibration'"):
        FRAME.attrpriv.count(["s"], 1, secret=SECRET, reference=FRAME,
                             mechanism="wasserstein", calibration="classic")
    # delta = 0 asks for a pure guarantee: "auto" finds the exact mechanism.
    hospital = skattr.datasets.make_hospital(300, random_state=0)
    hospital = hospital.assign(tall=hospital.height > 67)
    rel = hospital.iloc[:100].attrpriv.count(
        ["tall"], True, secret=skattr.Secret.proportion(
            "gender", "female", pairs=[(0.4, 0.6)]),
        reference=hospital, delta=0.0, random_state=0)
    assert (rel.mechanism, rel.delta) == ("wasserstein", 0.0)


# ---------------------------------------------------------------- law=
HOSPITAL = skattr.datasets.make_hospital(1500, random_state=0)
GENDER = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
MEANS = skattr.Query.mean(["weight", "height"])


@pytest.mark.parametrize("old, new", [
    ({"covariances": "assume-equal"}, AssumeGaussian(covariances="assume-equal")),
    ({"sampling": "with-replacement"}, AssumeGaussian(sampling="with-replacement")),
    ({"sampling": "with-replacement", "covariances": "assume-equal"},
     AssumeGaussian(sampling="with-replacement", covariances="assume-equal")),
])
def test_sampling_and_covariances_of_0_2_fold_into_the_gaussian_law(old, new):
    with pytest.warns(FutureWarning, match=r"law=AssumeGaussian\(") as caught:
        legacy = ExpectedValueGaussian(query=MEANS, secret=GENDER, law="gaussian",
                                       theta="moments", **old)
    assert caught[0].filename == __file__
    assert legacy.law == new and "sampling" not in legacy.get_params()
    modern = ExpectedValueGaussian(query=MEANS, secret=GENDER, law=new,
                                   theta="moments")
    _same(legacy.fit(HOSPITAL).plan(n=50), modern.fit(HOSPITAL).plan(n=50))
    # set_params too (a GridSearch of 0.2, say).
    with pytest.warns(FutureWarning):
        reset = ExpectedValueGaussian(law="gaussian").set_params(**old)
    assert reset.law == new


def test_law_gaussian_is_assume_gaussian_with_its_defaults():
    a = AttributePrivateGaussian(query=MEANS, secret=GENDER, law="gaussian",
                                 theta="moments").fit(HOSPITAL).plan(n=50)
    b = AttributePrivateGaussian(query=MEANS, secret=GENDER,
                                 law=AssumeGaussian(),
                                 theta="moments").fit(HOSPITAL).plan(n=50)
    _same(a, b)


def test_gaussian_options_with_the_exact_law_warn_that_they_do_nothing():
    count = skattr.Query.count("gender", "female")
    with pytest.warns(FutureWarning, match="drops covariances=.*exact law.*"
                                           "may differ"):
        mech = AttributePrivateGaussian(query=count, secret=SECRET,
                                        covariances="assume-equal")
    assert mech.law == "auto"


def test_eta_alone_did_nothing_and_is_dropped_with_a_warning():
    with pytest.warns(FutureWarning, match="did nothing without lambda_eta"):
        mech = ExpectedValueGaussian(eta=1e-4)
    assert mech.relaxation is None


def test_set_params_changes_one_field_as_in_0_2():
    # GridSearchCV does clone(base).set_params(...): each old keyword changes
    # its own field of the current value.
    base = ExpectedValueGaussian(query=MEANS, secret=GENDER, law=AssumeGaussian(
        covariances="assume-equal"), relaxation=MaxDivergenceGap(lam=0.1))
    with pytest.warns(FutureWarning):
        assert clone(base).set_params(covariances="certify").law == AssumeGaussian()
    with pytest.warns(FutureWarning):
        assert clone(base).set_params(sampling="with-replacement").law == (
            AssumeGaussian(sampling="with-replacement", covariances="assume-equal"))
    with pytest.warns(FutureWarning):
        assert clone(base).set_params(eta=1e-6).relaxation == MaxDivergenceGap(
            lam=0.1, eta=1e-6)
    with pytest.warns(FutureWarning):
        assert clone(base).set_params(lambda_eta=None).relaxation is None
    with pytest.warns(FutureWarning):
        swapped = clone(base).set_params(lambda_eta=None, wasserstein_w=0.3,
                                         wasserstein_lambda=0.1)
    assert swapped.relaxation == WassersteinGap(w=0.3, lam=0.1)
    # The keywords that did nothing, on the Wasserstein mechanisms.
    with pytest.warns(FutureWarning, match="ignores delta=0.1"):
        exact = WassersteinMechanism().set_params(delta=0.1, epsilon=2.0)
    assert exact.epsilon == 2.0 and "delta" not in exact.get_params()


@pytest.mark.parametrize("kw, match", [
    ({"law": AssumeGaussian(), "covariances": "assume-equal"}, "same choice"),
    ({"law": "gaussian", "sampling": "bootstrap"},
     r"AssumeGaussian\(sampling=\.\.\.\) must be one of"),
])
def test_law_keywords_that_cannot_fold_are_refused_at_fit(kw, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mech = AttributePrivateGaussian(query=MEANS, secret=GENDER, **kw)
    with pytest.raises(InvalidParameterError, match=match):
        mech.fit(HOSPITAL)


def test_an_assume_gaussian_out_of_range_is_refused_when_made():
    with pytest.raises(InvalidParameterError, match="'certify', 'assume-equal'"):
        AssumeGaussian(covariances="equal")
    assert repr(AssumeGaussian()) == "AssumeGaussian()"


def test_the_accessor_folds_them_too():
    private = HOSPITAL.iloc[:60]
    kw = dict(secret=GENDER, reference=HOSPITAL, theta="moments",
              mechanism="expm-laplace", random_state=0)
    with pytest.warns(FutureWarning, match="law=AssumeGaussian"):
        legacy = private.attrpriv.mean(["weight"], law="gaussian",
                                       covariances="assume-equal", **kw)
    modern = private.attrpriv.mean(
        ["weight"], law=AssumeGaussian(covariances="assume-equal"), **kw)
    _same(legacy, modern)
    np.testing.assert_array_equal(legacy.values, modern.values)
    with pytest.raises(InvalidParameterError, match="same choice"):
        private.attrpriv.mean(["weight"], law=AssumeGaussian(),
                              covariances="assume-equal", **kw)


def test_old_keywords_reach_only_the_mechanisms_that_took_them():
    private = HOSPITAL.iloc[:60]
    kw = dict(secret=GENDER, reference=HOSPITAL, random_state=0)
    # approx-wasserstein never took covariances: refused, as in 0.2.
    with pytest.raises(InvalidParameterError, match="takes no parameter"):
        private.attrpriv.median(["weight"], mechanism="approx-wasserstein",
                                covariances="assume-equal", **kw)
    with pytest.raises(InvalidParameterError,
                       match="no Gaussian calibration, so it takes no "
                             "'calibration'"):
        private.attrpriv.median(["weight"], mechanism="approx-wasserstein",
                                calibration="analytic", **kw)


def test_a_ledger_takes_the_gaussian_options_per_release():
    private = HOSPITAL.iloc[:200]
    opened = dict(secret=GENDER, reference=HOSPITAL, budget=(30.0, 1e-3),
                  theta="moments", law="gaussian", random_state=0)
    equal = AssumeGaussian(covariances="assume-equal")
    ledger = private.attrpriv.ledger(**opened)
    rel = ledger.mean(["weight"], mechanism="expm-gaussian", law=equal)
    assert rel.assumes("covariances.equal")
    legacy = private.attrpriv.ledger(**opened)
    with pytest.warns(FutureWarning, match="law=AssumeGaussian"):
        old = legacy.mean(["weight"], mechanism="expm-gaussian",
                          covariances="assume-equal")
    _same(old, rel)
    assert legacy.spent == ledger.spent
    # Another sampling is another model: another ledger.
    with pytest.raises(InvalidParameterError, match="law= is the ledger's own"):
        ledger.mean(["weight"], law=AssumeGaussian(sampling="with-replacement"))


def test_plot_tradeoff_takes_them_too():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from skattr.plotting import plot_tradeoff

    with pytest.warns(FutureWarning, match="law=AssumeGaussian"):
        ax = plot_tradeoff(HOSPITAL.iloc[:60], ["weight"], secret=GENDER,
                           reference=HOSPITAL, mechanisms=("apgm",),
                           law="gaussian", covariances="assume-equal",
                           theta="moments", epsilons=[1.0, 2.0])
    assert ax.lines

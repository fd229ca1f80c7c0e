"""What theta= means: one spec per name, the same for every mechanism."""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.backends import Reference
from skattr.exceptions import InvalidParameterError
from skattr.mechanisms import AttributePrivateGaussian, WassersteinMechanism
from skattr.theta import Bootstrap, ExpertTheta, GroupMoments, MonteCarlo
from skattr.theta._spec import (
    FitAndBootstrap,
    JointGaussianFit,
    PlugIn,
    resolve_theta,
)

SECRET = skattr.Secret.proportion("s", True, pairs=[(0.4, 0.6)])


@pytest.fixture(scope="module")
def reference():
    rng = np.random.default_rng(11)
    s = rng.random(400) < 0.5
    return pd.DataFrame({"s": s,
                         "c": np.where(s, rng.random(400) < 0.6,
                                       rng.random(400) < 0.3),
                         "x": rng.normal(np.where(s, 2.0, 0.0), 1.0)})


def test_names_map_to_spec_objects_and_objects_pass_through():
    assert isinstance(resolve_theta("auto"), FitAndBootstrap)
    assert isinstance(resolve_theta("moments"), PlugIn)
    assert isinstance(resolve_theta("gaussian"), JointGaussianFit)
    boot = Bootstrap(5, random_state=0)
    assert resolve_theta(boot) is boot
    with pytest.raises(InvalidParameterError, match="theta='gaussian' is not"):
        resolve_theta("gaussian", ("auto", "moments"))


EXPERT = ExpertTheta([GroupMoments(mean_in=[2.0], mean_out=[0.0], cov_in=1.0,
                                   cov_out=1.0, columns=("x",))])


@pytest.mark.parametrize("spec", [PlugIn(), FitAndBootstrap(), JointGaussianFit(),
                                  EXPERT, MonteCarlo(50, random_state=0),
                                  Bootstrap(5, random_state=0)],
                         ids=lambda s: type(s).__name__)
def test_every_theta_answers_the_protocol(spec, reference):
    ref = Reference(reference, skattr.Query.mean(["x"]), ("x",))
    models = spec.moment_models(ref, SECRET, "with-replacement")
    assert len(models) >= 1
    for model in models:
        mean, cov = model.sum_moments(np.array([0.4, 0.6]), 10)
        assert mean.shape == (2, 1) and cov.shape == (2, 1, 1)
        assert model.conditions_on_mean in (True, False)
    assert isinstance(spec.assumptions, tuple)
    assert all(isinstance(a, skattr.Assumption) for a in spec.assumptions)
    assert spec.states_law is isinstance(spec, ExpertTheta)
    # The plug-in and the bootstrap fix the records' law (frequencies); the
    # others state or sample moments only.
    if isinstance(spec, (PlugIn, FitAndBootstrap)):
        law = spec.exact_law(Reference(reference, skattr.Query.count(["c"], True),
                                       ("c",)), SECRET, "count")
        assert law.shape == (51 if isinstance(spec, FitAndBootstrap) else 1, 2)
    else:
        assert spec.exact_law(ref, SECRET, "count") is None


def test_the_plug_in_is_the_reference_rows_moments(reference):
    ref = Reference(reference, skattr.Query.mean(["x"]), ("x",))
    (model,) = PlugIn().moment_models(ref, SECRET, "with-replacement")
    inside = reference["s"].to_numpy()
    assert model.mean_in[0] == pytest.approx(reference["x"][inside].mean(),
                                             rel=1e-14)
    assert model.cov_out[0, 0] == pytest.approx(
        reference["x"][~inside].var(ddof=0), rel=1e-12)


@pytest.mark.parametrize("theta", ["auto", "moments"])
def test_one_name_is_one_model_across_mechanisms(theta, reference):
    # The Gaussian pair-law mechanisms and the Wasserstein mechanism read the
    # same name as the same Theta of a count: identical count probabilities.
    query = skattr.Query.count(["c"], True)
    apgm = AttributePrivateGaussian(query=query, secret=SECRET,
                                    theta=theta).fit(reference)
    wass = WassersteinMechanism(query=query, secret=SECRET,
                                theta=theta).fit(reference)
    if theta == "auto":
        # A count's default: the reference's confidence box, for both.
        assert apgm.law_.kind == wass.law_.kind == "box"
        assert apgm.law_.box == wass.law_.box
    else:
        np.testing.assert_array_equal(apgm.law_.thetas[0], wass.law_.thetas[0])
    assert type(apgm.theta_spec_) is type(wass.theta_spec_)


def test_the_plug_in_records_its_assumption_and_auto_does_not(reference):
    query = skattr.Query.count(["c"], True)
    plug = AttributePrivateGaussian(query=query, secret=SECRET, theta="moments")
    auto = AttributePrivateGaussian(query=query, secret=SECRET)
    plug_plan = plug.fit(reference).plan(n=50)
    auto_plan = auto.fit(reference).plan(n=50)
    assert plug_plan.assumes("theta.plug-in")
    assert not auto_plan.assumes("theta.plug-in")


# --- The Theta protocol (issue 45) ------------------------------------------


def every_spec():
    """One instance of every spec skattr has (what theta= resolves to)."""
    from skattr.bayes import NetworkTheta, ParameterNetwork
    from skattr.theta import (
        ConfidenceBand,
        ConfidenceBox,
        ProbabilityBox,
        Resample,
        SumLaws,
    )

    net = ParameterNetwork(parents={"s": []}, grids={"s": [0.4, 0.6]},
                           cpts={"s": [0.5, 0.5]})
    return [PlugIn(), FitAndBootstrap(), JointGaussianFit(),
            resolve_theta([[0.3, 0.6]]),
            resolve_theta(SumLaws(values=[0, 1], probs=[[[0.5, 0.5], [0.4, 0.6]]])),
            EXPERT, MonteCarlo(50, random_state=0), Bootstrap(5, random_state=0),
            ProbabilityBox((0.2, 0.5), (0.4, 0.7)), ConfidenceBox(),
            ConfidenceBand(), Resample(random_state=0),
            NetworkTheta(net, reads="s", counted=[0.2, 0.7])]


KINDS = {"gaussian", "exact", "box", "bands", "network", "resampling"}


@pytest.mark.parametrize("spec", every_spec(), ids=lambda s: type(s).__name__)
def test_every_spec_answers_the_theta_protocol(spec):
    from skattr.theta import ThetaSpec

    assert isinstance(spec, ThetaSpec)
    assert isinstance(spec.law_kinds, tuple) and spec.law_kinds
    assert set(spec.law_kinds) <= KINDS
    assert isinstance(spec.reads_reference, bool)
    assert isinstance(spec.states_law, bool)
    assert all(isinstance(a, skattr.Assumption) for a in spec.assumptions)
    assert spec.band_confidence is None or 0 < spec.band_confidence < 1
    assert spec.resampling is None or spec.resampling is spec
    # One name for "reads the reference"; nothing unread.
    assert not hasattr(spec, "needs_reference")
    assert not hasattr(spec, "fixes_law")


def test_the_specs_that_read_the_reference_are_the_fitted_ones():
    reads = {type(s).__name__ for s in every_spec() if s.reads_reference}
    assert reads == {"PlugIn", "FitAndBootstrap", "JointGaussianFit",
                     "MonteCarlo", "Bootstrap", "ConfidenceBox",
                     "ConfidenceBand", "Resample"}


class Counting:
    """A spec written outside skattr, not deriving from ThetaSpec."""

    def __init__(self):
        self.calls = 0

    def fit_law(self, request):
        self.calls += 1
        return resolve_theta([[0.3, 0.6]]).fit_law(request)


def test_a_theta_is_taken_by_what_it_answers(reference):
    # No fit_law: refused, naming the protocol.
    with pytest.raises(InvalidParameterError,
                       match=r"a Theta spec \(skattr.theta.ThetaSpec\)"):
        WassersteinMechanism(query=skattr.Query.count(["c"], True),
                             secret=SECRET, theta=object()).fit(reference)
    # A duck-typed spec with fit_law: taken, and asked at fit.
    spec = Counting()
    mech = WassersteinMechanism(query=skattr.Query.count(["c"], True),
                                secret=SECRET, theta=spec).fit(reference)
    assert spec.calls == 1
    stated = WassersteinMechanism(query=skattr.Query.count(["c"], True),
                                  secret=SECRET, theta=[[0.3, 0.6]]).fit(reference)
    assert mech.plan(n=100).sensitivity == stated.plan(n=100).sensitivity


def test_a_spec_giving_no_law_a_mechanism_calibrates_is_refused_before_fit(
        reference, monkeypatch):
    from skattr.theta import Resample

    # Resample gives the resampling model's laws, which apgm does not
    # calibrate: refused by the parameter check, before Theta is asked.
    asked = []
    monkeypatch.setattr(Resample, "fit_law",
                        lambda self, request: asked.append(request))
    with pytest.raises(InvalidParameterError, match=(
            r"giving a law this mechanism calibrates \('gaussian', 'exact', "
            r"'box' or 'bands'\)\. Got Resample")):
        AttributePrivateGaussian(query=skattr.Query.mean(["x"]), secret=SECRET,
                                 theta=Resample()).fit(reference)
    assert asked == []


def test_the_ledger_asks_the_spec_for_its_bands():
    # A spec of its own whose laws lie in the reference's bands (it says
    # so: band_confidence) is taken by a ledger certifying different
    # statistics with Laplace noise jointly, as ConfidenceBand is: the
    # ledger asks the spec, not its class.
    from dataclasses import dataclass

    from skattr.theta import ConfidenceBand, ThetaSpec

    @dataclass(frozen=True)
    class Bands(ThetaSpec):
        confidence: float = 0.99

        law_kinds = ("box", "bands")
        reads_reference = True

        @property
        def band_confidence(self):
            return self.confidence

        def fit_law(self, request):
            return ConfidenceBand(self.confidence).fit_law(request)

    rng = np.random.default_rng(5)
    g = rng.random(3000) < 0.5
    reference = pd.DataFrame({"s": g, "x": rng.normal(np.where(g, 5.0, 3.0), 1.0)})
    private = reference.iloc[:200]
    spent = []
    for theta in (Bands(), ConfidenceBand(0.99)):
        ledger = private.attrpriv.ledger(
            secret=SECRET, reference=reference, theta=theta,
            bounds={"x": (0, 10)}, budget=(10.0, 1e-3), random_state=0)
        ledger.mean(["x"], mechanism="approx-wasserstein", epsilon=1.0)
        ledger.median(["x"], mechanism="approx-wasserstein", epsilon=1.0)
        spent.append(ledger.spent)
    assert spent[0] == spent[1]
    # Both planned under the ledger's coupling on these bands: composed,
    # at most the sum of their epsilons (above the larger one alone).
    assert 1.0 < spent[0][0] <= 2.0 * (1 + 1e-9)


def test_a_ledger_takes_a_spec_that_answers_fit_law_alone():
    # theta= takes any object with fit_law (GivesLaw); the protocol's other
    # members have defaults, which a ledger reads for such a spec (no bands
    # declared: the spec is kept as it is). Issue 46's review: reading
    # band_confidence off it was a bare AttributeError in every release.
    from skattr.theta import ConfidenceBand

    class Duck:
        def fit_law(self, request):
            return ConfidenceBand(0.99).fit_law(request)

    rng = np.random.default_rng(5)
    g = rng.random(3000) < 0.5
    reference = pd.DataFrame({"s": g, "x": rng.normal(np.where(g, 5.0, 3.0), 1.0)})
    ledger = reference.iloc[:200].attrpriv.ledger(
        secret=SECRET, reference=reference, theta=Duck(),
        bounds={"x": (0, 10)}, budget=(10.0, 1e-3), random_state=0)
    release = ledger.mean(["x"], mechanism="approx-wasserstein", epsilon=1.0)
    assert np.isfinite(release.values).all()
    assert ledger.spent == (1.0, 1e-3)


def test_apgm_certifies_a_stated_box_as_the_confidence_box_it_equals(reference):
    # Taken by what it gives (a box of count laws), a ProbabilityBox now
    # reaches apgm, which certifies a box law through the swap coupling
    # valid at every point of it (docs/population.md): the same noise as the
    # reference's confidence box equal to it, whose certificate is proven.
    from skattr.theta import ConfidenceBox, ProbabilityBox

    kw = dict(query=skattr.Query.count(["c"], True), secret=SECRET, delta=1e-5)
    fitted = AttributePrivateGaussian(theta=ConfidenceBox(), **kw).fit(reference)
    box = fitted.law_.box
    stated = AttributePrivateGaussian(
        theta=ProbabilityBox(box.low, box.high), **kw).fit(reference)
    a, b = fitted.plan(n=200), stated.plan(n=200)
    np.testing.assert_allclose(b.noise_law.covariance, a.noise_law.covariance,
                               rtol=1e-12)
    assert np.all(np.diag(a.noise_law.covariance) > 0)
    assert a.certified_by == b.certified_by


def test_a_theta_reading_no_reference_needs_none(reference):
    # One name for "reads the reference": an expert's Theta reads none, so
    # the accessor needs no reference= (fit reads the data's columns), and
    # reference="self" fits nothing on the private data: no leak warning.
    import warnings

    from skattr.exceptions import PrivacyLeakWarning

    private = reference.iloc[:200]
    kw = dict(secret=SECRET, theta=EXPERT, law="gaussian", bounds=None,
              random_state=0)
    given = private.attrpriv.mean(["x"], reference=reference, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        bare = private.attrpriv.mean(["x"], **kw)
        itself = private.attrpriv.mean(["x"], reference="self", **kw)
    assert bare.values.tolist() == given.values.tolist() == itself.values.tolist()
    # A Theta fitted on the reference still needs one.
    with pytest.raises(InvalidParameterError, match="reference="):
        private.attrpriv.mean(["x"], secret=SECRET, law="gaussian")


def test_the_ledger_asks_the_spec_for_its_resampling_model():
    # A spec of its own that says its laws are a resampling model's (the
    # resampling answer) has the ledger draw the joint law with that model's
    # options, as a ledger opened with the Resample itself does; with the
    # ledger's default resampling options the joint epsilon differs.
    from dataclasses import dataclass

    from skattr.theta import Resample, ThetaSpec

    model = Resample(exact_quantiles=False, moment_bounds=False,
                     n_draws=40000, random_state=0)

    @dataclass(frozen=True)
    class Resampled(ThetaSpec):
        law_kinds = ("resampling",)
        reads_reference = True

        @property
        def resampling(self):
            return model

        def fit_law(self, request):
            return model.fit_law(request)

    rng = np.random.default_rng(7)
    g = rng.random(2000) < 0.5
    reference = pd.DataFrame({"s": g, "x": rng.normal(np.where(g, 2.0, 0.0), 1.0)})
    private = reference.iloc[:60]
    spent = []
    for theta in (Resampled(), model, Resample(random_state=0)):
        ledger = private.attrpriv.ledger(
            secret=SECRET, reference=reference, theta=theta,
            bounds={"x": (-3, 5)}, budget=(10.0, 1e-3), random_state=0)
        ledger.mean(["x"], mechanism="approx-wasserstein", epsilon=1.0)
        ledger.median(["x"], mechanism="approx-wasserstein", epsilon=1.0)
        spent.append(ledger.spent)
    assert spent[0] == spent[1]
    assert spent[0] != spent[2]


def test_a_theta_class_is_refused_as_a_parameter_not_called(reference):
    # theta=ConfidenceBox (the class) answers fit_law as an attribute, but is
    # no spec: refused by the parameter check, naming what was given.
    from skattr.theta import ConfidenceBox, Resample

    for cls in (ConfidenceBox, Resample):
        for mech in (AttributePrivateGaussian, WassersteinMechanism):
            with pytest.raises(InvalidParameterError, match="Got <class"):
                mech(query=skattr.Query.count(["c"], True), secret=SECRET,
                     theta=cls).fit(reference)


def test_each_mechanism_takes_the_kinds_of_law_it_calibrates():
    # The theta= constraint follows each class's calibrates (and the kinds
    # its default Theta gives: apgm's bands): the Laplace Expected Value
    # mechanisms take Gaussian laws only, so a stated box is refused by
    # their parameter check, not at fit with a loop of advice.
    from skattr.mechanisms import MECHANISMS
    from skattr.theta import ProbabilityBox
    from skattr.theta._protocol import GivesLaw

    seen = 0
    for name in MECHANISMS:
        cls = MECHANISMS[name]
        gives = [c for c in cls._parameter_constraints.get("theta", ())
                 if isinstance(c, GivesLaw)]
        if gives:
            assert gives[0].kinds == (*cls.calibrates,
                                      *getattr(cls, "_default_kinds", ())), name
            seen += 1
    assert seen >= 10
    box = ProbabilityBox([0.2, 0.4], [0.3, 0.5])
    assert not MECHANISMS["expm-laplace"]._parameter_constraints["theta"][-1] \
        .is_satisfied_by(box)
    assert MECHANISMS["apgm"]._parameter_constraints["theta"][-1] \
        .is_satisfied_by(box)


def test_a_stated_theta_fits_on_private_data_of_any_size(reference):
    # With a Theta stated whole and no reference=, fit is given the private
    # data, whose rows it never reads: three records are not "too little
    # reference data" (that refusal named a reference the user never gave).
    tiny = reference.iloc[:3]
    release = tiny.attrpriv.mean(["x"], secret=SECRET, theta=EXPERT,
                                 law="gaussian", mechanism="apgm", delta=1e-3,
                                 bounds={"x": (-5.0, 5.0)}, random_state=0)
    assert release.n == 3 and np.isfinite(release.values).all()
    with pytest.raises(skattr.exceptions.DataValidationError,
                       match="The reference data has n_samples = 3"):
        tiny.attrpriv.mean(["x"], secret=SECRET, reference=tiny,
                           mechanism="apgm", law="gaussian", delta=1e-3,
                           random_state=0)

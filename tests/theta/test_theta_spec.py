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

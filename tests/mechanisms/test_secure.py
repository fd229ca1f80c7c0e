"""secure=True: every Laplace mechanism releases exact grid noise, certified."""

import math
from fractions import Fraction

import numpy as np
import pytest

import skattr
from skattr import MethodStep
from skattr.datasets import make_hospital, make_schools, schools_network
from skattr.exceptions import NotCertifiableError
from skattr.laws import AssumeGaussian
from skattr.mechanisms import (
    ApproximateWassersteinMechanism,
    AttributePrivateMarkovQuilt,
    DirectionalLaplace,
    DPGaussian,
    DPLaplace,
    ExpectedValueGaussian,
    ExpectedValueLaplace,
    GroupDPLaplace,
    WassersteinMechanism,
)
from skattr.noise import DiscreteLaplaceNoise

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
MEANS = skattr.Query.mean(["weight", "blood_pressure"])
HOSPITAL_BOUNDS = {"weight": (40.0, 200.0), "blood_pressure": (60.0, 180.0)}


@pytest.fixture(scope="module")
def hospital():
    return make_hospital(2000, random_state=0), make_hospital(200, random_state=1)


def _laplace_mechanisms():
    yield ExpectedValueLaplace(query=MEANS, secret=SECRET,
                               law=AssumeGaussian(covariances="assume-equal"))
    yield ApproximateWassersteinMechanism(query=MEANS, secret=SECRET)
    yield WassersteinMechanism(query=skattr.Query.count("gender", "female"),
                               secret=SECRET)
    yield DPLaplace(query=MEANS, bounds=HOSPITAL_BOUNDS)
    yield GroupDPLaplace(query=MEANS, bounds=HOSPITAL_BOUNDS, group_size=3)


@pytest.mark.parametrize("mechanism", list(_laplace_mechanisms()),
                         ids=lambda m: type(m).__name__)
def test_secure_plan_widens_the_certificate_by_the_bound(hospital, mechanism):
    reference, private = hospital
    plain = mechanism.set_params(epsilon=1.0, random_state=0).fit(reference)
    base = plain.plan(private)
    secure = type(mechanism)(**{**mechanism.get_params(), "secure": True})
    plan = secure.fit(reference).plan(private)
    if base.noiseless:
        assert plan.epsilon == base.epsilon and plan.noise_law is not None
        return
    law = plan.noise_law
    assert isinstance(law, DiscreteLaplaceNoise)
    assert law.scale == base.noise_scale
    eta = law.k * law.eta
    assert Fraction(plan.epsilon) >= Fraction(base.epsilon) + 2 * eta
    assert plan.epsilon - base.epsilon < 2 * law.k * 2.0**-40 * 1.01
    assert Fraction(plan.delta) >= Fraction(base.delta) * (1 + eta)
    assert plan.certified_by.steps == base.certified_by.steps + (
        MethodStep.of("secure", noise=law.describe(), epsilon=base.epsilon,
                      delta=base.delta, eta=float(law.eta)),)
    assert plan.expected_error == pytest.approx(base.expected_error, rel=1e-12)


@pytest.mark.parametrize("mechanism", list(_laplace_mechanisms()),
                         ids=lambda m: type(m).__name__)
def test_secure_release_is_on_the_grid_and_reproducible(hospital, mechanism):
    reference, private = hospital
    params = {**mechanism.get_params(), "secure": True, "random_state": 3}
    first = type(mechanism)(**params).fit(reference)
    again = type(mechanism)(**params).fit(reference)
    release = first.release(private)
    assert release.values.equals(again.release(private).values)
    if release.noiseless:
        return
    grid = Fraction(release.noise_law.grid)
    assert all((Fraction(v) / grid).denominator == 1 for v in release.values)
    # Successive releases draw fresh noise.
    assert not release.values.equals(first.release(private).values)


@pytest.mark.slow
def test_secure_noise_has_the_planned_spread(hospital):
    reference, private = hospital
    est = ApproximateWassersteinMechanism(
        query=skattr.Query.mean(["weight"]), secret=SECRET, secure=True,
        random_state=0).fit(reference)
    scale = est.plan(private).noise_scale
    exact = private["weight"].mean()
    errors = np.array([est.release(private).values.iloc[0] - exact
                       for _ in range(2000)])
    # E|Laplace(b)| = b; 2,000 draws put the mean within 10% (sd b / sqrt(2000)).
    assert np.mean(np.abs(errors)) == pytest.approx(scale, rel=0.1)


def test_markov_quilt_releases_securely():
    schools = make_schools(1, 200, random_state=0)
    bounds = {"height": (50.0, 80.0), "sat": (400.0, 1600.0)}
    est = AttributePrivateMarkovQuilt(
        query=skattr.Query.mean(["sat"]),
        secret=skattr.Secret.mean("income", pairs=[(40_000, 80_000)]),
        network=schools_network(), epsilon=1.0, bounds=bounds, secure=True,
        random_state=0).fit(schools)
    release = est.release(schools)
    assert isinstance(release.noise_law, DiscreteLaplaceNoise)
    assert release.epsilon > 1.0 and math.isclose(release.epsilon, 1.0)


@pytest.mark.parametrize("mechanism", [
    ExpectedValueGaussian(query=MEANS, secret=SECRET, law="gaussian"),
    DPGaussian(query=MEANS, bounds=HOSPITAL_BOUNDS),
], ids=lambda m: type(m).__name__)
def test_secure_refuses_gaussian_noise_at_fit(hospital, mechanism):
    # Gaussian noise is the class's own: refused before anything is fitted.
    reference, _ = hospital
    with pytest.raises(NotCertifiableError, match="adds Gaussian noise.*"
                                                  "secure=False"):
        mechanism.set_params(secure=True).fit(reference)


def test_secure_refuses_noise_it_cannot_sample_exactly(hospital):
    # Directional Laplace noise is known only once planned.
    reference, private = hospital
    est = DirectionalLaplace(query=MEANS, secret=SECRET,
                             law=AssumeGaussian(covariances="assume-equal"),
                             secure=True).fit(reference)
    with pytest.raises(NotCertifiableError, match="secure=False"):
        est.plan(private)
    with pytest.raises(NotCertifiableError, match="secure=False"):
        est.release(private)


@pytest.mark.slow
def test_accessor_passes_secure(hospital):
    reference, private = hospital
    release = private.attrpriv.mean(
        ["weight"], secret=SECRET, reference=reference,
        mechanism="approx-wasserstein", secure=True, random_state=0)
    assert isinstance(release.noise_law, DiscreteLaplaceNoise)


def test_a_ledger_refuses_secure_noise_it_cannot_account_jointly(hospital):
    reference, private = hospital
    ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(2.0, 1e-2))
    with pytest.raises(NotCertifiableError, match="on its own"):
        ledger.median(["weight"], epsilon=1.0, secure=True)
    assert not ledger.releases

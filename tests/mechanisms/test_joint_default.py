"""The default for several statistics over the bands: one joint certificate.

The default Theta of several means, sums or counts is the reference's
confidence bands (a :class:`~skattr.laws._joint_band.JointBandLaw`); the
Attribute-Private Gaussian Mechanism certifies per-value sds jointly
through the values' coupled moves, the Approximate Wasserstein Mechanism
per-value Laplace scales, and ``"auto"`` takes the smaller expected error.
Each plan's noise is re-checked here against the law's coupled distances
with the joint delta, and half of it is refused.
"""

import numpy as np
import pytest

import skattr
from skattr.calibration._joint_coupled import (
    joint_gaussian_delta,
    joint_laplace_delta,
)
from skattr.cli import main
from skattr.datasets import make_hospital


@pytest.fixture(scope="module")
def hospital():
    reference = make_hospital(2000, random_state=0)
    gender = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    return reference, gender


def _fitted(cls, hospital, columns=("weight", "blood_pressure")):
    reference, gender = hospital
    return cls(query=skattr.Query.mean(list(columns)), secret=gender,
               epsilon=1.0, delta=1e-3).fit(reference)


@pytest.mark.slow
def test_gaussian_sds_are_certified_jointly_and_half_is_not(hospital):
    mech = _fitted(skattr.mechanisms.AttributePrivateGaussian, hospital)
    plan = mech.plan(n=50)
    assert mech.law_.kind == "bands"
    assert plan.certified_by.kind == "joint-coupled"
    sds = np.sqrt(np.diag(plan.noise_covariance))
    assert np.allclose(plan.noise_covariance, np.diag(sds ** 2))
    per_pair = mech.law_.coupled_distances(50, "dataset")
    assert joint_gaussian_delta(per_pair, sds, 1.0) <= 1e-3
    assert joint_gaussian_delta(per_pair, sds / 2, 1.0) > 1e-3


@pytest.mark.slow
def test_laplace_scales_beat_the_union_split_and_are_certified(hospital):
    mech = _fitted(skattr.mechanisms.ApproximateWassersteinMechanism, hospital)
    plan = mech.plan(n=50)
    assert plan.certified_by.kind == "joint-coupled"
    # The union split the mechanism gave before: K W_j / epsilon.
    split = mech.law_.closeness(50, "dataset", 1e-3).value
    union = skattr.noise.LaplaceNoise.per_statistic(np.asarray(split))
    assert plan.expected_error < union.expected_norm()
    b = np.sqrt(np.diag(plan.noise_covariance) / 2)
    per_pair = mech.law_.coupled_distances(50, "dataset")
    assert joint_laplace_delta(per_pair, b, 1.0) <= 1e-3
    assert joint_laplace_delta(per_pair, b / 2, 1.0) > 1e-3


@pytest.mark.slow
def test_the_accessor_default_takes_the_joint_certificate(hospital):
    reference, gender = hospital
    private = make_hospital(50, random_state=1)
    query = skattr.Query.mean(["weight"]) + skattr.Query.sum(["height"])
    plan = private.attrpriv.plan(statistic=query, secret=gender,
                                 reference=reference, epsilon=1.0, delta=1e-3)
    assert plan.certified_by.kind == "joint-coupled"
    assert plan.certified_by.steps[0].params["statistics"] == 2


@pytest.mark.slow
def test_cli_release_of_two_means_is_certified_jointly(tmp_path, capsys):
    private = tmp_path / "private.csv"
    reference = tmp_path / "reference.csv"
    make_hospital(60, random_state=1).to_csv(private, index=False)
    make_hospital(2000, random_state=0).to_csv(reference, index=False)
    assert main(["release", str(private), "--columns", "weight",
                 "blood_pressure", "--secret-column", "gender",
                 "--secret-value", "female", "--pairs", "0.4,0.6",
                 "--reference", str(reference), "--plan"]) == 0
    out = capsys.readouterr().out
    assert "their dependence unknown" in out
    assert "certified for every dependence" in out

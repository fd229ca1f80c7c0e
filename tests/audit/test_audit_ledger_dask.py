"""The audit of a ledger's joint releases, and of mechanisms on Dask frames."""

import pytest

import skattr
from skattr.audit import audit, audit_ledger
from skattr.datasets import make_hospital
from skattr.exceptions import InvalidParameterError

pytestmark = pytest.mark.audit

RELEASES = 20_000


@pytest.fixture(scope="module")
def private():
    return make_hospital(100, random_state=1)


def test_a_gaussian_ledger_holds_its_joint_epsilon(private, hospital, gender):
    ledger = private.attrpriv.ledger(secret=gender, reference=hospital,
                                     budget=(2.0, 1e-3), law="gaussian",
                                     random_state=0)
    ledger.mean(["blood_pressure"], epsilon=1.0)
    ledger.mean(["weight"], epsilon=1.0)
    result = audit_ledger(ledger, releases=RELEASES, random_state=0)
    assert (result.epsilon, result.delta) == ledger.spent
    assert result.passed, result.summary()
    assert result.mechanism == "ledger of 2 releases (apgm, apgm)"
    # Each release alone is certified at 1; together they reveal more, and
    # the audit sees it: the joint epsilon is what it is checked against.
    assert result.epsilon > 1.0
    assert audit_ledger(ledger, releases=RELEASES, random_state=1,
                        noise_scale_factor=0.5).flagged
    assert audit_ledger(ledger, releases=RELEASES, random_state=2,
                        pair=(0.2, 0.8)).flagged


def test_a_laplace_ledger_holds_its_joint_epsilon(private, hospital,
                                                  narrow_gender):
    ledger = private.attrpriv.ledger(secret=narrow_gender, reference=hospital,
                                     budget=(2.0, 1e-2), random_state=0)
    for _ in range(2):
        ledger.proportion("gender", "female", mechanism="approx-wasserstein",
                          epsilon=0.5, delta=1e-3)
    result = audit_ledger(ledger, releases=RELEASES, random_state=0)
    assert result.epsilon == pytest.approx(1.0)
    assert result.passed, result.summary()
    assert audit_ledger(ledger, releases=RELEASES, random_state=1,
                        noise_scale_factor=0.5).flagged


def test_an_empty_ledger_or_another_object_is_refused(private, hospital, gender):
    ledger = private.attrpriv.ledger(secret=gender, reference=hospital,
                                     budget=(1.0, 1e-3))
    with pytest.raises(InvalidParameterError, match="released nothing"):
        audit_ledger(ledger)
    with pytest.raises(InvalidParameterError, match="skattr.audit.audit"):
        audit_ledger(object())


@pytest.fixture(scope="module")
def dask_reference(hospital):
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(hospital, npartitions=4)


@pytest.fixture(scope="module")
def dask_apgm(dask_reference, gender):
    return skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean("blood_pressure"), secret=gender, epsilon=1.0,
        delta=1e-3, law="gaussian", random_state=0).fit(dask_reference)


def test_a_mechanism_fitted_on_dask_is_audited_vectorised(dask_apgm,
                                                          dask_reference):
    result = audit(dask_apgm, dask_reference, n=100, releases=RELEASES,
                   random_state=0)
    assert result.passed and "20000 records" in result.data
    assert audit(dask_apgm, dask_reference, n=100, releases=RELEASES,
                 random_state=0, noise_scale_factor=0.5).flagged


@pytest.mark.slow
def test_dask_releases_are_audited_end_to_end(dask_apgm, dask_reference,
                                              monkeypatch):
    released = []
    original = type(dask_apgm).release

    def spy(self, X):
        released.append(type(X).__module__.split(".")[0])
        return original(self, X)

    monkeypatch.setattr(type(dask_apgm), "release", spy)
    result = audit(dask_apgm, dask_reference, n=100, releases=60,
                   mode="release", random_state=0)
    assert result.mode == "release" and result.passed
    assert released == ["dask"] * 120      # the real release, on Dask frames

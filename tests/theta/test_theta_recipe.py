"""docs/design.md's recipe for a new Theta, run as written.

The page's ``CountRates`` block is executed as the module the recipe puts it
in (``skattr/theta/_<name>.py``), and the spec it defines releases through
``apgm``, ``approx-wasserstein`` and ``"auto"`` (the accessor) and the
estimators, with no other change to skattr. Each release is checked against
a Theta skattr already had that states the same law: the Wasserstein
mechanisms against the array of count probabilities ``[[p_out, p_in]]``,
``apgm`` against the plug-in fit (``theta="moments"``) of a reference whose
groups' frequencies are exactly the rates.
"""

import pathlib
import re

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr import _persistence
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.mechanisms import (
    ApproximateWassersteinMechanism,
    AttributePrivateGaussian,
    WassersteinMechanism,
)
from skattr.theta import ThetaSpec

DESIGN = pathlib.Path(__file__).resolve().parents[2] / "docs" / "design.md"
SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
QUERY = skattr.Query.count(["c"], True)
P_OUT, P_IN = 0.3, 0.6


def theta_block() -> str:
    """The page's Python block under "**A Theta.**", as written."""
    text = DESIGN.read_text(encoding="utf-8")
    section = text[text.index("**A Theta.**"):text.index("**A kind of law.**")]
    (block,) = re.findall(r"^```python\n(.*?)^```", section, flags=re.M | re.S)
    return block


@pytest.fixture(scope="module")
def CountRates():
    # The recipe's module: @persistable takes skattr's own classes only. The
    # allowlist is restored afterwards, so no other test sees the class. Every
    # skattr class is registered first: a module imported for the first time
    # while the copy stood (skattr.predicates, say) registered its classes in
    # the copy alone, and a later test could not save an Above(0).
    for load in _persistence._IMPORTERS:
        load()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_persistence, "_ALLOWED", dict(_persistence._ALLOWED))
        namespace = {"__name__": "skattr.theta._count_rates"}
        exec(compile(theta_block(), str(DESIGN), "exec"), namespace)  # noqa: S102
        yield namespace["CountRates"]


def frames():
    """A reference whose groups' frequencies are the rates, and private data."""
    g = np.repeat([1, 0], 100)
    c = np.concatenate([np.arange(100) < P_IN * 100, np.arange(100) < P_OUT * 100])
    reference = pd.DataFrame({"g": g, "c": c})
    rng = np.random.default_rng(3)
    private = pd.DataFrame({"g": rng.random(300) < 0.5,
                            "c": rng.random(300) < 0.4}).astype(
        {"g": int})
    return reference, private


def test_the_recipe_defines_a_theta_spec(CountRates):
    theta = CountRates(P_OUT, P_IN)
    assert isinstance(theta, ThetaSpec)
    assert theta.law_kinds == ("exact",) and theta.reads_reference is False
    assert theta.band_confidence is None and theta.resampling is None


@pytest.mark.parametrize("cls", [WassersteinMechanism,
                                 ApproximateWassersteinMechanism])
def test_the_wasserstein_mechanisms_release_with_it(CountRates, cls):
    reference, private = frames()
    kw = dict(query=QUERY, secret=SECRET, epsilon=1.0, random_state=0)
    mine = cls(theta=CountRates(P_OUT, P_IN), **kw).fit(reference)
    stated = cls(theta=[[P_OUT, P_IN]], **kw).fit(reference)
    a, b = mine.release(private), stated.release(private)
    assert a.sensitivity == b.sensitivity > 0
    assert a.values.tolist() == b.values.tolist()
    assert "(stated)" in a.theta


def test_apgm_releases_with_it(CountRates):
    reference, private = frames()
    kw = dict(query=QUERY, secret=SECRET, epsilon=1.0, delta=1e-5,
              random_state=0)
    mine = AttributePrivateGaussian(theta=CountRates(P_OUT, P_IN), **kw).fit(
        reference)
    # The plug-in's exact law and moments are the reference's frequencies,
    # here exactly the rates.
    plug_in = AttributePrivateGaussian(theta="moments", **kw).fit(reference)
    assert mine.law_.kind == "exact" and mine.law_.moments is not None
    a, b = mine.plan(n=300), plug_in.plan(n=300)
    np.testing.assert_allclose(a.noise_law.covariance, b.noise_law.covariance,
                               rtol=1e-12)
    assert np.all(np.diag(a.noise_law.covariance) > 0)
    assert a.certified_by == b.certified_by
    assert mine.release(private).values.tolist() == plug_in.release(
        private).values.tolist()


@pytest.mark.parametrize("mechanism", ["apgm", "approx-wasserstein", "auto"])
def test_the_accessor_releases_with_it(CountRates, mechanism):
    reference, private = frames()
    release = private.attrpriv.count(
        "c", True, secret=SECRET, reference=reference, mechanism=mechanism,
        theta=CountRates(P_OUT, P_IN), epsilon=1.0, random_state=0)
    assert release.values.shape == (1,) and np.isfinite(release.values).all()
    assert "(stated)" in release.theta
    if mechanism != "auto":
        assert release.mechanism == mechanism
    # It reads no reference rows: none is needed (fit reads the columns).
    bare = private.attrpriv.count(
        "c", True, secret=SECRET, mechanism=mechanism,
        theta=CountRates(P_OUT, P_IN), epsilon=1.0, random_state=0)
    assert bare.values.tolist() == release.values.tolist()


def test_a_fitted_mechanism_with_it_is_saved_and_loaded(CountRates):
    reference, private = frames()
    mech = ApproximateWassersteinMechanism(
        query=QUERY, secret=SECRET, theta=CountRates(P_OUT, P_IN),
        random_state=0).fit(reference)
    loaded = _persistence.from_json(_persistence.to_json(mech))
    assert loaded.theta == mech.theta
    assert loaded.plan(n=300).sensitivity == mech.plan(n=300).sensitivity


def test_a_mechanism_refuses_it_for_a_law_it_does_not_give(CountRates):
    reference, _ = frames()
    with pytest.raises(NotCertifiableError, match="CountRates"):
        AttributePrivateGaussian(
            query=QUERY, secret=SECRET, theta=CountRates(P_OUT, P_IN),
            law="gaussian").fit(reference)
    with pytest.raises(InvalidParameterError, match="one count or proportion"):
        WassersteinMechanism(
            query=skattr.Query.mean(["c"]), secret=SECRET,
            theta=CountRates(P_OUT, P_IN)).fit(reference)

"""How much a guarantee protects, checked where the estimator lives (issue 45).

A delta above 0.1 is refused, a delta at 1/n or more and an epsilon above 10
warn: by a bare estimator as by the accessor, a ledger and the command line,
with one message, at the user's line, once a release.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.cli import main
from skattr.exceptions import InvalidParameterError, PrivacyLeakWarning
from skattr.mechanisms import (
    ApproximateWassersteinMechanism,
    AttributePrivateGaussian,
    BaseMechanism,
    DPGaussian,
    DPLaplace,
)
from skattr.synth import DPRAP

SECRET = skattr.Secret.proportion("gender", "F", pairs=[(0.4, 0.6)])
REFUSAL = ("delta=0.5 lets the guarantee fail with probability 0.5, so it "
           "says next to nothing; use a delta below 1/n = 0.005 (such as 1e-3 "
           "or less), or pass allow_large_delta=True if that is what you mean.")
DATA = Path(__file__).parent.parent / "data"


def _patients(n, seed):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "gender": np.where(rng.random(n) < 0.5, "F", "M"),
        "weight": rng.normal(70, 10, n).round(1),
    })


PRIVATE, REFERENCE = _patients(200, 0), _patients(2000, 1)


def _apgm(**params):
    return AttributePrivateGaussian(
        query=skattr.Query.mean(["weight"]), secret=SECRET, law="gaussian",
        random_state=0, **params).fit(REFERENCE)


def _recorded(call):
    """Return the PrivacyLeakWarnings ``call`` issues, every one kept."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]


@pytest.mark.parametrize("cls", [AttributePrivateGaussian, DPGaussian,
                                 ApproximateWassersteinMechanism])
def test_a_bare_estimator_refuses_a_large_delta_as_the_accessor_does(cls):
    est = cls(query=skattr.Query.mean(["weight"]), secret=SECRET, delta=0.5,
              **({"law": "gaussian"} if cls is AttributePrivateGaussian else {}),
              **({"bounds": (0, 200)} if cls is DPGaussian else {}))
    fitted = est.fit(REFERENCE)                 # n is not known yet
    for step in (lambda: fitted.release(PRIVATE), lambda: fitted.plan(n=200),
                 lambda: fitted.release_values([PRIVATE])):
        with pytest.raises(InvalidParameterError) as refused:
            step()
        assert str(refused.value) == REFUSAL
    with pytest.raises(InvalidParameterError) as accessor:
        PRIVATE.attrpriv.mean("weight", secret=SECRET, reference=REFERENCE,
                              delta=0.5, mechanism=cls.mechanism_name,
                              **({"law": "gaussian"}
                                 if cls is AttributePrivateGaussian else {}),
                              **({"bounds": (0, 200)} if cls is DPGaussian
                                 else {}))
    assert str(accessor.value) == REFUSAL


def test_a_bare_estimator_releases_a_large_delta_when_asked_and_warns():
    est = _apgm(delta=0.5, allow_large_delta=True)
    caught = _recorded(lambda: est.release(PRIVATE))
    assert [str(w.message)[:33] for w in caught] == [
        "delta=0.5 is at least 1/n = 0.005"]
    with pytest.warns(PrivacyLeakWarning, match="at least 1/n"):
        plan = est.plan(n=200)
        # The same as the accessor's, which passes the option on.
        accessor = PRIVATE.attrpriv.plan(
            "weight", secret=SECRET, law="gaussian", reference=REFERENCE,
            delta=0.5, mechanism="apgm", allow_large_delta=True)
    assert plan.delta == accessor.delta == 0.5
    assert accessor.noise_std == plan.noise_std


@pytest.mark.parametrize("params, start", [
    ({"delta": 0.01}, "delta=0.01 is at least 1/n = 0.005"),
    ({"epsilon": 20.0}, "epsilon=20 lets an observer's odds"),
])
def test_a_bare_estimator_warns_at_the_users_line_once_a_release(params, start):
    est = _apgm(**params)
    for call in (lambda: est.release(PRIVATE), lambda: est.plan(n=200),
                 lambda: est.release_values([PRIVATE] * 5)):
        caught = _recorded(call)
        assert [str(w.message)[:len(start)] for w in caught] == [start]
        assert caught[0].filename == __file__


@pytest.mark.parametrize("mechanism", ["apgm", "auto"])
def test_the_accessor_warns_once_at_the_users_line(mechanism):
    caught = _recorded(lambda: PRIVATE.attrpriv.mean(
        "weight", secret=SECRET, reference=REFERENCE, law="gaussian",
        epsilon=20.0, delta=0.01, mechanism=mechanism, random_state=0))
    # "auto" fits and plans several candidates; each says the same.
    assert sorted(str(w.message)[:10] for w in caught) == [
        "delta=0.01", "epsilon=20"]
    assert {w.filename for w in caught} == {__file__}
    caught = _recorded(lambda: PRIVATE.attrpriv.plan(
        "weight", secret=SECRET, reference=REFERENCE, law="gaussian",
        epsilon=20.0, mechanism=mechanism))
    assert [str(w.message)[:10] for w in caught] == ["epsilon=20"]


def test_the_ledger_refuses_and_warns_as_a_bare_estimator_does():
    ledger = PRIVATE.attrpriv.ledger(secret=SECRET, reference=REFERENCE,
                                     budget=(50.0, 0.5), random_state=0)
    with pytest.raises(InvalidParameterError) as refused:
        ledger.mean("weight", epsilon=1.0, delta=0.5, mechanism="apgm")
    assert str(refused.value) == REFUSAL
    caught = _recorded(lambda: ledger.mean("weight", epsilon=20.0,
                                           mechanism="apgm"))
    assert [str(w.message)[:10] for w in caught] == ["epsilon=20"]
    assert caught[0].filename == __file__


def test_the_command_line_refuses_a_large_delta_with_the_same_message(
        tmp_path, capsys):
    private, reference = tmp_path / "private.csv", tmp_path / "reference.csv"
    PRIVATE.to_csv(private, index=False)
    REFERENCE.to_csv(reference, index=False)
    args = ["release", str(private), "--columns", "weight", "--secret-column",
            "gender", "--secret-value", "F", "--pairs", "0.4,0.6",
            "--reference", str(reference), "--delta", "0.5", "--mechanism",
            "apgm", "--law", "gaussian", "--plan"]
    assert main(args) == 2
    assert REFUSAL in " ".join(capsys.readouterr().err.split())


def test_a_laplace_mechanism_warns_of_a_large_epsilon_and_takes_no_delta():
    est = DPLaplace(query=skattr.Query.mean(["weight"]), secret=SECRET,
                    epsilon=20.0, bounds=(0, 200), random_state=0)
    caught = _recorded(lambda: est.fit(REFERENCE).release(PRIVATE))
    assert [str(w.message)[:10] for w in caught] == ["epsilon=20"]
    # allow_large_delta means nothing to it: accepted by the accessor.
    release = PRIVATE.attrpriv.mean("weight", secret=SECRET, bounds=(0, 200),
                                    mechanism="dp-laplace",
                                    allow_large_delta=True, random_state=0)
    assert release.delta == 0.0


def test_the_default_delta_is_not_warned_of():
    # 1e-3, the library's choice, at n = 200 (1/n = 0.005 > 1e-3: no warning
    # either way; at n = 500, 1e-3 < 2e-3): the warning is for a delta chosen.
    assert _recorded(lambda: _apgm().release(PRIVATE)) == []


def test_a_bad_allow_large_delta_is_refused():
    with pytest.raises(InvalidParameterError, match="allow_large_delta"):
        _apgm(allow_large_delta="yes")


def test_dprap_refuses_a_large_delta():
    data = pd.DataFrame({"a": ["x", "y"] * 50, "b": ["u", "v", "v", "u"] * 25})
    synth = DPRAP(categories={"a": ["x", "y"], "b": ["u", "v"]}, delta=0.5,
                  random_state=0)
    with pytest.raises(InvalidParameterError, match="delta=0.5 lets the "
                       "guarantee fail"):
        synth.fit(data)


def test_a_mechanism_saved_before_the_option_loads_and_refuses_alike():
    # Saved by skattr 0.3 (main at 54df40e), before allow_large_delta existed.
    text = (DATA / "apgm_fitted_by_0.3.json").read_text()
    loaded = BaseMechanism.from_json(text)
    assert loaded.allow_large_delta is False and loaded.delta == 1e-4
    private = skattr.datasets.make_hospital(200, random_state=1)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    fresh = AttributePrivateGaussian(
        query=skattr.Query.mean(["weight"]), secret=secret, law="gaussian",
        delta=1e-4, random_state=0).fit(
            skattr.datasets.make_hospital(500, random_state=0))
    assert loaded.release(private).values.equals(fresh.release(private).values)
    with pytest.raises(InvalidParameterError, match="allow_large_delta=True"):
        loaded.set_params(delta=0.5).plan(n=200)

"""docs/design.md's recipes, run as written.

"Extending skattr: a statistic": its code blocks define a kind and its band
law; run as the page gives them, the new statistic is evaluated, saved and
loaded, and released through the bands (by default too) and the resampling
model.
"""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import skattr
import skattr._kinds._base as kinds_base
from skattr import Statistic
from skattr._kinds import kind_of, kinds
from skattr.theta import ConfidenceBand, Resample

DESIGN = Path(__file__).resolve().parents[1] / "docs" / "design.md"


def _recipe(title: str) -> list[str]:
    """Return the python blocks of the section ``title`` of docs/design.md."""
    text = DESIGN.read_text()
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


@pytest.fixture
def recipe(monkeypatch):
    # The page's kind and law registered for this test only.
    monkeypatch.setattr(kinds_base, "_KINDS", dict(kinds_base._KINDS))
    monkeypatch.setattr(kinds_base, "_LAWS", dict(kinds_base._LAWS))
    blocks = _recipe("Extending skattr: a statistic")
    assert len(blocks) == 2
    namespace = {}
    for block in blocks:
        exec(compile(block, str(DESIGN), "exec"), namespace)
    return namespace


def _reference(seed=0, per=1000):
    rng = np.random.default_rng(seed)
    g = np.repeat([1, 0], per)
    return pd.DataFrame({"g": g, "age": np.clip(rng.normal(40 + 5 * g, 10),
                                               0, 100)})


SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])


def test_the_recipes_kind_is_a_statistic(recipe):
    assert isinstance(kind_of("midrange"), recipe["Midrange"])
    assert "midrange" in [k.name for k in kinds(linear=False)]
    frame = _reference()
    stat = Statistic("midrange", ["age"])
    expected = (frame["age"].min() + frame["age"].max()) / 2
    assert stat.evaluate(frame).iloc[0] == pytest.approx(expected, rel=1e-12)
    # Saved by its name, loaded to the same object.
    mech = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=stat, secret=SECRET, bounds={"age": (0, 100)},
        theta=ConfidenceBand())
    loaded = type(mech).from_json(mech.to_json())
    assert loaded.query == stat and loaded.query.kind is stat.kind


def test_the_recipes_statistic_is_released_over_the_bands(recipe):
    reference = _reference()
    mech = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=Statistic("midrange", ["age"]), secret=SECRET,
        bounds={"age": (0, 100)}, theta=ConfidenceBand(),
        random_state=0).fit(reference)
    assert type(mech.law_).__name__ == "BandLaw"
    plan = mech.plan(n=500)
    assert plan.assumes("reference.band")
    # Weight 1 for a mean's 1 / n: the mean's bound times n, while that is
    # below the range's width (10 records)...
    mean = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.mean(["age"]), secret=SECRET,
        bounds={"age": (0, 100)}, theta=ConfidenceBand()).fit(reference)
    small = mech.plan(n=10)
    assert small.sensitivity == pytest.approx(
        mean.plan(n=10).sensitivity * 10, rel=1e-6)
    assert small.sensitivity < 100 and not small.certified_by.uses(
        "w-inf.range")
    # ... and the width, 100, beyond (500 records: 1190 uncapped): no
    # midrange of values in [0, 100] moves further.
    assert mean.plan(n=500).sensitivity * 500 > 1000
    assert plan.sensitivity == 100.0
    assert plan.certified_by.uses("w-inf.range")
    release = mech.release(reference.sample(500, random_state=1))
    assert 0 <= release.values.iloc[0] <= 100


def test_the_recipes_statistic_is_certified_by_the_default(recipe):
    # The default Theta asks the kind: the page's band law, registered in a
    # module of its own, is taken by theta="auto" with no edit of skattr's
    # Theta, as theta=ConfidenceBand() takes it.
    reference = _reference()
    private = _reference(seed=1, per=200)
    stat = Statistic("midrange", ["age"])
    fitted = [skattr.mechanisms.ApproximateWassersteinMechanism(
        query=stat, secret=SECRET, bounds={"age": (0, 100)}, delta=1e-3,
        theta=theta, random_state=0).fit(reference)
        for theta in ("auto", ConfidenceBand())]
    auto, band = fitted
    assert type(auto.law_).__name__ == "BandLaw"
    assert auto.plan(n=400).assumes("reference.band")
    assert auto.plan(n=400).sensitivity == band.plan(n=400).sensitivity
    assert (auto.release(private).values.tolist()
            == band.release(private).values.tolist())
    # And through the accessor's default mechanism.
    release = private.attrpriv.agg(stat, secret=SECRET, reference=reference,
                                   bounds={"age": (0, 100)}, epsilon=1.0,
                                   delta=1e-3, random_state=0)
    assert release.assumes("reference.band")


def test_a_kind_with_no_band_law_is_refused_by_default(monkeypatch):
    # The page's kind alone (its first block): no law, so no default bound.
    monkeypatch.setattr(kinds_base, "_KINDS", dict(kinds_base._KINDS))
    monkeypatch.setattr(kinds_base, "_LAWS", dict(kinds_base._LAWS))
    exec(compile(_recipe("Extending skattr: a statistic")[0], str(DESIGN),
                 "exec"), {})
    mech = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=Statistic("midrange", ["age"]), secret=SECRET,
        bounds={"age": (0, 100)}, delta=1e-3)
    with pytest.raises(skattr.exceptions.NotCertifiableError,
                       match="No bound on the midrange holds"):
        mech.fit(_reference())


def test_the_recipes_statistic_is_released_by_the_resampling_model(recipe):
    reference = _reference(per=300)
    mech = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=Statistic("midrange", ["age"]), secret=SECRET,
        bounds={"age": (0, 100)}, delta=0.05,
        theta=Resample(n_draws=2000, random_state=0), random_state=0,
    ).fit(reference)
    # delta = 0.05 keeps 2,000 draws enough; at 1/n or more the plan warns.
    with pytest.warns(skattr.exceptions.PrivacyLeakWarning, match="1/n"):
        plan = mech.plan(n=100)
    assert plan.assumes("resampling-model")
    assert np.isfinite(plan.sensitivity) and plan.sensitivity > 0


def test_without_the_recipe_the_name_is_no_statistic():
    with pytest.raises(skattr.exceptions.InvalidParameterError,
                       match="must be one of"):
        Statistic("midrange", ["age"])

"""release_values: many releases at once, equal in law to one release each."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import skattr
from skattr import Query
from skattr.attacks import PropertyInferenceAttack
from skattr.datasets import make_hospital
from skattr.mechanisms import AttributePrivateGaussian, DPLaplace, _base

N = 40
BOUNDS = {"a": (0.0, 10.0), "b": (-5.0, 15.0), "c": (100.0, 160.0)}
QUERY = Query.mean(["a", "b", "c"])


def _frames(count, seed=0):
    rng = np.random.default_rng(seed)
    return [pd.DataFrame({"a": rng.uniform(0, 12, N),      # some rows clipped
                          "b": rng.uniform(-5, 15, N),
                          "c": rng.uniform(100, 160, N)})
            for _ in range(count)]


def _by_hand(frames):
    # The exact statistic, computed here: each column clipped to its bounds.
    return np.array([[f[c].clip(*BOUNDS[c]).mean() for c in BOUNDS]
                     for f in frames])


def _mechanism(epsilon, seed=0):
    return DPLaplace(query=QUERY, bounds=BOUNDS, epsilon=epsilon,
                     random_state=seed).fit(_frames(1, seed=9)[0])


def test_values_are_those_of_one_release_each_in_turn():
    frames = _frames(30)
    values = _mechanism(2.0).release_values(frames)
    mech = _mechanism(2.0)
    one_by_one = np.vstack([mech.release(f).values.to_numpy() for f in frames])
    np.testing.assert_array_equal(values, one_by_one)


@pytest.mark.filterwarnings(
    "ignore:epsilon=50 lets:skattr.exceptions.PrivacyLeakWarning")
def test_noise_follows_the_planned_laplace_law():
    # Noise scale by hand: L1 sensitivity of the means 90 / n over epsilon.
    # The means lie far inside their ranges at this scale, so no clamp binds.
    epsilon, count = 50.0, 400
    frames = _frames(count, seed=1)
    noise = (_mechanism(epsilon, seed=2).release_values(frames)
             - _by_hand(frames)).ravel()
    scale = 90 / N / epsilon
    # Kolmogorov-Smirnov on 1200 draws: a right law fails with probability
    # 1e-3; half the scale gives D ~ 0.2, p ~ 1e-40.
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > 1e-3


def test_values_are_clamped_to_what_a_mean_can_take():
    frames = _frames(200, seed=3)
    values = _mechanism(0.05, seed=4).release_values(frames)
    lows = np.array([lo for lo, _ in BOUNDS.values()])
    highs = np.array([hi for _, hi in BOUNDS.values()])
    assert np.all((values >= lows) & (values <= highs))
    # Noise of scale 45 on ranges of 10 to 60: the clamp binds often.
    assert np.mean((values == lows) | (values == highs)) > 0.3


def test_an_attack_builds_no_release_per_dataset(monkeypatch):
    built, drawn = [], []
    release_of = _base.Release.of
    noisy = _base.BaseMechanism._noisy_statistic
    monkeypatch.setattr(_base.Release, "of", classmethod(
        lambda cls, *a, **k: built.append(1) or release_of(*a, **k)))
    monkeypatch.setattr(_base.BaseMechanism, "_noisy_statistic",
                        lambda self, *a: drawn.append(1) or noisy(self, *a))
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    defence = AttributePrivateGaussian(
        law="gaussian", query=Query.mean(["weight", "blood_pressure"]),
        secret=secret, epsilon=1.0, delta=1e-3,
        random_state=np.random.default_rng(0)).fit(make_hospital(2000, random_state=0))
    attack = PropertyInferenceAttack(defence, values=(0.4, 0.6), n=50,
                                     n_shadow=20, n_test=10, random_state=0)
    attack.fit(make_hospital(1000, random_state=1)).score(
        make_hospital(1000, random_state=2))
    assert built == []
    assert len(drawn) == 30            # one noise draw per dataset, no more


def test_an_overridden_release_is_called_for_each_frame():
    mech = _mechanism(2.0)
    calls = []
    original = mech.release
    mech.release = lambda X: calls.append(len(X)) or original(X)
    assert mech.release_values(_frames(3)).shape == (3, 3)
    assert calls == [N] * 3


def test_no_frames_give_no_rows():
    assert _mechanism(2.0).release_values([]).shape == (0, 3)


def test_bad_frames_are_refused_before_any_noise():
    frames = _frames(3)
    frames[1] = frames[1].assign(a=np.nan)
    with pytest.raises(ValueError):
        _mechanism(2.0).release_values(frames)


def test_an_empty_or_other_typed_frame_is_released_as_release_would():
    # Each such frame takes release's own checks and messages: an empty one
    # refused as release refuses it; integers beside floats released alike.
    frames = _frames(3)
    mechanism = _mechanism(2.0)
    with pytest.raises(skattr.exceptions.DataValidationError) as batch:
        mechanism.release_values([*frames, frames[0].iloc[:0]])
    with pytest.raises(skattr.exceptions.DataValidationError) as alone:
        mechanism.release(frames[0].iloc[:0])
    assert str(batch.value) == str(alone.value)
    mixed = [frames[0], frames[1].astype({"c": "int64"})]
    values = _mechanism(2.0).release_values(mixed)
    again = _mechanism(2.0)
    expected = np.vstack([again.release(f).values.to_numpy() for f in mixed])
    np.testing.assert_array_equal(values, expected)

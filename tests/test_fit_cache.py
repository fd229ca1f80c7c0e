"""Fitted Theta kept across accessor releases on the same data (issue 28)."""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.datasets import make_hospital
from skattr.mechanisms import ApproximateWassersteinMechanism, _fit_cache

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


@pytest.fixture
def counted(monkeypatch):
    """Count the fits of the Approximate Wasserstein Mechanism."""
    _fit_cache.clear()
    calls = []
    original = ApproximateWassersteinMechanism.fit

    def fit(self, X, y=None):
        calls.append(len(X))
        return original(self, X, y)

    monkeypatch.setattr(ApproximateWassersteinMechanism, "fit", fit)
    yield calls
    _fit_cache.clear()


@pytest.fixture(scope="module")
def hospital():
    return make_hospital(200, random_state=1), make_hospital(2000, random_state=0)


def _median(private, reference, **params):
    return private.attrpriv.median(["weight"], secret=SECRET,
                                   reference=reference, **params)


@pytest.mark.slow
def test_a_second_release_on_the_same_data_costs_a_plan_not_a_fit(
        hospital, counted):
    private, reference = hospital
    first = _median(private, reference, random_state=0)
    assert counted == [2000]
    again = _median(private, reference, random_state=0)
    assert counted == [2000]                     # no second fit
    # The same seed gives the same release as a fresh fit would.
    assert again.values.equals(first.values)
    # Another epsilon, the same Theta: the noise of a fresh fit at it.
    other = _median(private, reference, epsilon=2.0, random_state=0)
    assert counted == [2000]
    _fit_cache.clear()
    fresh = _median(private, reference, epsilon=2.0, random_state=0)
    assert counted == [2000, 2000]
    np.testing.assert_array_equal(other.noise_std, fresh.noise_std)
    assert other.values.equals(fresh.values)
    # No seed: fresh noise on every release.
    a, b = (_median(private, reference) for _ in range(2))
    assert not a.values.equals(b.values)


@pytest.mark.slow
def test_other_data_or_parameters_fit_afresh(hospital, counted):
    private, reference = hospital
    _median(private, reference, random_state=0)
    changed = reference.copy()
    changed.loc[7, "weight"] += 1e-9               # one value, barely
    _median(private, changed, random_state=0)
    assert len(counted) == 2
    _median(private, reference.sample(frac=1.0, random_state=3),
            random_state=0)                        # the same rows, reordered
    assert len(counted) == 2
    _median(private, reference, random_state=0, delta=2e-3)
    assert len(counted) == 3
    smaller = private.iloc[:150]
    _median(smaller, reference, random_state=0)
    assert len(counted) == 4


@pytest.mark.slow
def test_what_a_repr_cannot_say_is_never_cached(hospital, counted):
    private, reference = hospital
    heavy = skattr.Secret.proportion("weight", lambda w: w > 160,
                                     pairs=[(0.4, 0.6)])
    for _ in range(2):
        private.attrpriv.median(["height"], secret=heavy, reference=reference,
                                random_state=0)
    assert len(counted) == 2
    bounds = {"weight": np.array([50.0, 300.0])}
    for _ in range(2):
        _median(private, reference, random_state=0, bounds=bounds)
    assert len(counted) == 4


@pytest.mark.slow
def test_values_of_other_types_that_pandas_hashes_alike_are_not_confused(
        counted):
    # Found by review: pandas hashes an object column's 1 and "1" alike, and a
    # secret of 1 tells them apart. Columns holding anything but text are
    # fitted afresh.
    rng = np.random.default_rng(0)
    ints = make_hospital(600, random_state=0)
    ints["g"] = pd.Series(rng.integers(0, 2, 600), dtype=object)
    mixed = ints.copy()
    mixed.loc[mixed.index[:100], "g"] = mixed["g"].iloc[:100].map(
        lambda v: "1" if v == 1 else v)
    private = ints.iloc[:100]
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    for reference in (mixed, ints, ints):
        private.attrpriv.median(["weight"], secret=secret, reference=reference,
                                random_state=0)
    assert len(counted) == 3


def test_categories_that_pandas_hashes_alike_are_not_confused():
    # Found by review: a categorical's values are hashed as its categories,
    # and categories 1 and "1" hash alike. Two references that swap them
    # (277 vs 723 records in the secret's group) keyed alike, and the second
    # reused the first's Theta (15% less noise than its own).
    u = np.random.default_rng(0).random(1000)
    base = make_hospital(1000, random_state=0).drop(columns=["gender"])
    cats = pd.CategoricalDtype([1, "1"])
    frames = [base.assign(g=pd.Categorical(
        [1 if x else "1" for x in flip], dtype=cats))
        for flip in (u < 0.3, u >= 0.3)]
    assert (frames[0]["g"] == 1).sum() != (frames[1]["g"] == 1).sum()
    assert all(_fit_cache._frame_key(f, content=True) is None for f in frames)
    # One type of category is still keyed, and its values tell frames apart.
    text = [base.assign(g=pd.Categorical(np.where(flip, "a", "b")))
            for flip in (u < 0.3, u >= 0.3)]
    keys = [_fit_cache._frame_key(f, content=True) for f in text]
    assert None not in keys and keys[0] != keys[1]


def test_a_seeded_theta_that_draws_records_keys_their_order(hospital):
    # Found by review: MonteCarlo(random_state=0) draws other records from the
    # same rows reordered, and a reordered reference reused the first fit
    # (another sensitivity than its own fresh fit).
    private, reference = hospital
    query = skattr.Query.mean(["weight"])

    def key(frame, theta):
        return _fit_cache._key("apgm", query, SECRET, frame, private,
                               {"epsilon": 1.0, "theta": theta})

    shuffled = reference.sample(frac=1.0, random_state=5)
    seeded = skattr.theta.MonteCarlo(random_state=0)
    assert key(reference, seeded) is not None
    assert key(shuffled, seeded) != key(reference, seeded)
    assert key(reference, seeded) == key(reference.copy(), seeded)
    # A Theta that draws nothing keys the rows in any order.
    assert key(shuffled, "moments") == key(reference, "moments")


def test_a_stacked_query_of_a_function_is_never_cached(hospital):
    # Found by review: a stacked query hid its part's function from the
    # check, and a function's repr does not change with what it does.
    private, reference = hospital
    _fit_cache.clear()
    threshold = {"w": 200}
    query = (skattr.Query.mean(["height"])
             + skattr.Query.count("weight", lambda w: w > threshold["w"]))
    assert _fit_cache._key("auto", query, SECRET, reference, private,
                           {"epsilon": 1.0}) is None
    plain = skattr.Query.mean(["height"]) + skattr.Query.count("weight", 160.0)
    assert _fit_cache._key("auto", plain, SECRET, reference, private,
                           {"epsilon": 1.0}) is not None


def test_a_release_without_a_seed_never_replays_a_seeded_one(hospital,
                                                           counted):
    # What a release leaves out takes the mechanism's default, never the
    # cached fit's: no seed means fresh noise, no epsilon means 1.
    from skattr.mechanisms import MECHANISMS

    private, reference = hospital
    common = dict(query=skattr.Query.median(["weight"]), secret=SECRET,
                  reference=reference, data=private,
                  mechanism="approx-wasserstein")
    seeded = MECHANISMS.build(**common, epsilon=2.0, random_state=0)
    again = MECHANISMS.build(**common)
    assert len(counted) == 1                       # the fit was reused
    assert again.random_state is None and again.epsilon == 1.0
    assert seeded.random_state == 0 and seeded.epsilon == 2.0
    assert not again.release(private).values.equals(
        seeded.release(private).values)


def _mean(private, reference, **params):
    return private.attrpriv.mean(["weight"], secret=SECRET,
                                 reference=reference, **params)


@pytest.mark.slow
def test_a_theta_stated_in_plain_fields_is_cached_unless_it_draws_afresh(
        hospital, counted):
    # Resample(random_state=0) says everything it is in its repr: a second
    # release fits nothing, and releases what a fresh fit would. Without a
    # seed each fit draws anew, so it is never cached.
    from skattr.theta import Resample

    private, reference = hospital
    seeded = dict(theta=Resample(random_state=0, n_draws=8000), delta=0.004,
                  random_state=0, mechanism="approx-wasserstein")
    first = _mean(private, reference, **seeded)
    again = _mean(private, reference, **seeded)
    assert len(counted) == 1 and again.values.equals(first.values)
    _fit_cache.clear()
    assert _mean(private, reference, **seeded).values.equals(first.values)
    assert len(counted) == 2
    other = dict(seeded, theta=Resample(random_state=1, n_draws=8000))
    _mean(private, reference, **other)
    assert len(counted) == 3
    unseeded = dict(seeded, theta=Resample(n_draws=8000))
    for _ in range(2):
        _mean(private, reference, **unseeded)
    assert len(counted) == 5


# ---------------------------------------------------------------- issue 42
@pytest.fixture
def planned(monkeypatch):
    """Count the plans every mechanism computes (not those it reuses)."""
    from skattr.mechanisms import BaseMechanism

    _fit_cache.clear()
    calls = []
    original = BaseMechanism._assemble_plan

    def assemble(self, n):
        calls.append((type(self).__name__, n, self.epsilon))
        return original(self, n)

    monkeypatch.setattr(BaseMechanism, "_assemble_plan", assemble)
    yield calls
    _fit_cache.clear()


def _certificate(release):
    return (release.mechanism, release.epsilon, release.delta,
            tuple(release.noise_std), release.noise_law.describe(),
            repr(release.certified_by), release.assumed)


def test_a_release_again_computes_no_plan_and_gets_a_fresh_ones_certificate(
        hospital, planned):
    private, reference = hospital
    first = _mean(private, reference, random_state=0)
    made = len(planned)
    assert made >= 2                      # "auto" plans every candidate
    again = _mean(private, reference, random_state=1)
    assert len(planned) == made           # every plan reused
    assert _certificate(again) == _certificate(first)
    assert not again.values.equals(first.values)      # its own noise
    # Another epsilon or another n is another plan.
    _mean(private, reference, epsilon=2.0)
    assert len(planned) == 2 * made
    _mean(private.iloc[:150], reference)
    assert len(planned) == 3 * made
    changed = reference.copy()
    changed.loc[7, "weight"] += 1e-9               # one value, barely
    _mean(private, changed, random_state=0)
    assert len(planned) == 4 * made                # its own fit, its plans
    # What the memo served is what a fresh fit and plan give.
    _fit_cache.clear()
    fresh = _mean(private, reference, random_state=1)
    assert _certificate(fresh) == _certificate(again)
    assert fresh.values.equals(again.values)


def test_other_private_values_of_the_same_size_reuse_theta_not_the_statistic(
        hospital, counted, planned):
    # A fit reads the reference alone: the private data's values are not
    # in the key, so other private data of the same shape reuses the fit
    # and its plan, and releases its own statistic.
    private, reference = hospital
    other = make_hospital(200, random_state=5)
    _fit_cache.clear()
    fresh = _median(other, reference, random_state=0)
    _fit_cache.clear()
    counted.clear()
    _median(private, reference, random_state=0)
    made = len(planned)
    reused = _median(other, reference, random_state=0)
    assert len(counted) == 1 and len(planned) == made
    assert _certificate(reused) == _certificate(fresh)
    assert reused.values.equals(fresh.values)
    # Fitted on the private data itself, its values are the key.
    bounds = {"weight": (30.0, 200.0)}
    with pytest.warns(skattr.exceptions.PrivacyLeakWarning):
        _median(private, "self", bounds=bounds, random_state=0)
        _median(other, "self", bounds=bounds, random_state=0)
        _median(other, "self", bounds=bounds, random_state=0)
    assert len(counted) == 3


def test_frames_of_any_size_are_keyed_by_their_rows():
    # No size limit (a median of 10^7 records planned for 27 CPU-s each
    # time): one hash of each value, in any order of the rows.
    rng = np.random.default_rng(0)
    big = pd.DataFrame({"gender": rng.choice(["female", "male"], 1_000_001),
                        "x": rng.normal(size=1_000_001)})
    small = big.iloc[:100]
    query = skattr.Query.mean(["x"])
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])

    def key(reference, data=small):
        return _fit_cache._key("auto", query, secret, reference, data,
                               {"epsilon": 1.0})

    first = key(big)
    assert first is not None
    assert key(big.iloc[::-1]) == first          # the same rows, reordered
    changed = big.copy()
    changed.iloc[123_456, 1] += 1e-12
    assert key(changed) != first
    swapped = big.copy()                         # one row's values swapped
    swapped.iloc[[0, 1], 1] = big.iloc[[1, 0], 1].to_numpy()
    if big.iloc[0, 0] != big.iloc[1, 0]:
        assert key(swapped) != first
    # Of the private data, the key holds what a fit's checks read.
    assert key(big, big.iloc[100:200]) == key(big)
    assert key(big, big.iloc[:101]) != key(big)
    assert key(big, small.rename(columns={"x": "y"})) != key(big)
    assert key(big, small.astype({"x": "float32"})) != key(big)


def test_a_repeated_describe_fits_plans_and_bounds_nothing_again(
        hospital, counted, planned, monkeypatch):
    from skattr.theta import _band

    laws = []
    original = _band.several_statistics_law

    def several(*args, **kwargs):
        laws.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(_band, "several_statistics_law", several)
    private, reference = hospital

    def describe():
        return private.attrpriv.describe(["weight"], secret=SECRET,
                                         reference=reference,
                                         percentiles=[0.5], random_state=0)

    first = describe()
    work = (len(counted), len(planned), len(laws))
    # The mean, then the median's epsilon searched (bracketed, then Brent's
    # method: two plans at least).
    assert work[0] >= 1 and work[1] >= 3 and work[2] == 1
    again = describe()
    assert (len(counted), len(planned), len(laws)) == work
    pd.testing.assert_frame_equal(again.table, first.table)
    assert again.ledger.spent == first.ledger.spent


def test_a_cached_fit_pickles_and_a_refit_shares_no_plans(hospital):
    import copy
    import pickle

    from skattr.mechanisms import MECHANISMS

    private, reference = hospital
    _fit_cache.clear()
    common = dict(query=skattr.Query.median(["weight"]), secret=SECRET,
                  reference=reference, data=private,
                  mechanism="approx-wasserstein")
    MECHANISMS.build(**common)
    est = MECHANISMS.build(**common)
    plan = est.plan(n=200)
    assert len(est._shared_plans) == 1
    loaded = pickle.loads(pickle.dumps(est))
    assert len(loaded._shared_plans) == 0
    assert loaded.plan(n=200).noise_std == plan.noise_std
    assert copy.deepcopy(est)._shared_plans is not est._shared_plans
    est.fit(reference.iloc[:1000])
    assert est._shared_plans is None
    assert est.plan(n=200).noise_std != plan.noise_std


def test_the_rows_digest_is_the_fingerprints_row_digest():
    # One hash of each value: the ledger's fingerprint's last digest (the
    # rows'), without each column's own.
    from skattr._data import digests, hash_sums, rows_digest

    frame = make_hospital(300, random_state=4)
    assert rows_digest(frame) == digests(hash_sums(frame, list(frame.columns)))[-1]
    assert rows_digest(frame.sample(frac=1.0, random_state=0)) == rows_digest(frame)
    moved = frame.copy()
    moved.loc[0, "weight"], moved.loc[1, "weight"] = (frame.loc[1, "weight"],
                                                      frame.loc[0, "weight"])
    assert rows_digest(moved) != rows_digest(frame)   # same columns, other rows

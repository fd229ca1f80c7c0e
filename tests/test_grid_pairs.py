"""Stated pairs off the grid k / n (issue 42): certified as the grid pairs around them.

Under dataset privacy a share of n records is a whole number of records over
n, so "0.4 vs 0.6" on 747 records means 298 or 299 women against 448 or 449.
Every pair of those neighbours is certified (Secret.grid_pairs), on every path,
and the release records them. The checks here are independent of the library:
whole-number arithmetic for the neighbours, and the exact law of a count
computed with scipy alone for the hockey-stick divergence.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import skattr
from skattr import Secret
from skattr.datasets import make_hospital
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.mechanisms import (
    ApproximateWassersteinMechanism,
    AttributePrivateGaussian,
    ExpectedValueGaussian,
)

#: From 50 to 100,000, primes among them (53, 97, 1009, 7919, 99991), the
#: issue's sizes after a dropna (747, 726, 793) and Adult's (22,611).
SWEEP = (50, 53, 97, 100, 101, 726, 747, 793, 1009, 7919, 22611, 99991,
         100000)

GENDER = Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


def _around(numerator: int, n: int) -> set:
    """The whole numbers of records nearest numerator / 5 of n, exactly."""
    low, high = numerator * n // 5, -(-numerator * n // 5)
    return {low, high}


def _neighbours(n: int) -> set:
    """Every (k_a, k_b) around 2/5 and 3/5 of n records: whole numbers only."""
    return {(ka, kb) for ka in _around(2, n) for kb in _around(3, n)}


def _grid_record(certified):
    found = [a for a in certified.assumed if a.kind == "secret.grid"]
    return found[0] if found else None


@pytest.fixture(scope="module")
def reference():
    return make_hospital(3000, random_state=0)


@pytest.fixture(scope="module")
def smokers():
    """A reference where the count of smokers depends on sex (0.3 vs 0.6)."""
    rng = np.random.default_rng(0)
    sex = rng.choice(["F", "M"], 4000)
    smoker = np.where(sex == "F", rng.random(4000) < 0.3,
                      rng.random(4000) < 0.6).astype(int)
    return pd.DataFrame({"sex": sex, "smoker": smoker})


# ------------------------------------------------------- the neighbours, exactly


@pytest.mark.parametrize("n", SWEEP)
def test_the_certified_pairs_are_exactly_the_neighbours(n):
    pairs = GENDER.grid_pairs(n)
    counts = {(round(a * n), round(b * n)) for a, b in pairs}
    assert counts == _neighbours(n)
    assert len(pairs) == len(counts)                      # no repeats
    # Each value is k / n itself, not a float near it.
    assert all(a == round(a * n) / n and b == round(b * n) / n
               for a, b in pairs)
    reading = GENDER.grid_reading(n)
    if n % 5 == 0:
        assert pairs == [(0.4, 0.6)] and reading == ()
    else:
        (stated, ka, kb), = reading
        assert stated == (0.4, 0.6)
        assert set(ka) == _around(2, n) and set(kb) == _around(3, n)


def test_sides_in_one_cell_keep_their_distinct_pairs():
    # 0.401 and 0.402 of 747: 299.5 and 300.3 records, one cell apart.
    s = Secret.proportion("g", 1, pairs=[(0.401, 0.402)])
    got = {(round(a * 747), round(b * 747)) for a, b in s.grid_pairs(747)}
    assert got == {(299, 300), (299, 301), (300, 301)}
    # Both in the same cell: each order of the two neighbours, once.
    same = Secret.proportion("g", 1, pairs=[(0.4001, 0.4002)])
    assert {(round(a * 747), round(b * 747))
            for a, b in same.grid_pairs(747)} == {(298, 299)}


def test_a_pair_with_no_two_datasets_fails_closed_saying_what_to_do():
    s = Secret.proportion("g", 1, pairs=[(0.4, 0.4 + 1e-12)])
    with pytest.raises(NotCertifiableError) as info:
        s.grid_pairs(50)
    message = str(info.value)
    assert "both values" in message and "20 records" in message
    assert "at least 1/50 apart" in message
    assert "--privacy distributional on the command line" in message
    # Distributional privacy has no grid: the two parameters are hidden.
    assert s.certified_pairs(50, "distributional") == [(0.4, 0.4 + 1e-12)]


def test_windows_and_sets_stay_on_the_grid_and_say_what_to_do():
    window = Secret.proportion("g", 1, window=0.002, support=(0.39, 0.41))
    a, b = np.array(window.grid_pairs(747)).T
    np.testing.assert_array_equal(a * 747, np.rint(a * 747))
    assert window.grid_reading(747) == ()
    with pytest.raises(InvalidParameterError,
                       match=r"steps of 1/50 = 0\.02. Widen the window"):
        Secret.proportion("g", 1, window=0.01, support=(0.41, 0.45)
                          ).grid_pairs(50)
    with pytest.raises(InvalidParameterError, match="Widen the set to hold one"):
        Secret.proportion("g", 1, sets=[(0.41, 0.415), (0.5, 0.6)]
                          ).grid_pairs(50)


def test_a_mean_secret_has_no_grid():
    s = Secret.mean("income", pairs=[(40_000.5, 60_000)])
    assert s.grid_pairs(747) == [(40_000.5, 60_000.0)]
    assert s.grid_reading(747) == ()


# ------------------------------------------- repeats do not multiply the work


def test_a_pair_repeated_or_reversed_is_kept_once():
    s = Secret.proportion("g", 1, pairs=[(0.4, 0.6)] * 50 + [(0.6, 0.4)]
                          + [(0.3, 0.5)])
    assert s.pairs == ((0.4, 0.6), (0.3, 0.5))
    assert s.label.endswith("pairs 0.4 vs 0.6, 0.3 vs 0.5")
    # Two stated pairs with the same neighbours give them once.
    near = Secret.proportion("g", 1, pairs=[(0.4, 0.6), (0.4001, 0.6)])
    assert len(near.grid_pairs(747)) == 4


def test_overlapping_sets_give_each_pair_once():
    s = Secret.proportion("g", 1, sets=[(0.3, 0.6), (0.4, 0.7)])
    a, b = s.pair_values(20)
    every = {frozenset(p) for p in zip(a.tolist(), b.tolist(), strict=True)}
    for privacy in ("dataset", "distributional"):
        pairs = s.certified_pairs(20, privacy)
        assert {frozenset(p) for p in pairs} == every
        assert len(pairs) == len(every) < a.size      # 0.4-0.6 both ways


def test_repeated_pairs_cost_the_work_of_one(smokers, monkeypatch):
    from skattr.calibration import _exact_noise

    calls = []
    real = _exact_noise._pair_delta

    def counted(pair, sigma, epsilon):
        calls.append(1)
        return real(pair, sigma, epsilon)

    monkeypatch.setattr(_exact_noise, "_pair_delta", counted)
    work = {}
    for name, pairs in (("once", [(0.4, 0.6)]),
                        ("repeated", [(0.4, 0.6)] * 50 + [(0.6, 0.4)] * 50)):
        monkeypatch.setattr(_exact_noise, "_CACHE", type(_exact_noise._CACHE)())
        calls.clear()
        mech = AttributePrivateGaussian(
            query=skattr.Query.count("smoker", 1),
            secret=Secret.proportion("sex", "F", pairs=pairs), theta="moments",
            law="exact", epsilon=1.0, delta=1e-3).fit(smokers)
        sd = mech.plan(n=53).noise_std[0]
        work[name] = (len(calls), sd, len(mech.law_.exact_pairs(53)))
    assert work["once"][0] > 0
    assert work["repeated"] == work["once"]
    assert work["once"][2] == 4                 # the four neighbouring pairs


# ------------------------------------ the noise of the neighbours, on each path


#: Each certification path: its name, what it releases and how, and n.
PATHS = {
    "exact count": ("smokers", 53, lambda s: AttributePrivateGaussian(
        query=skattr.Query.count("smoker", 1), secret=s, theta="moments",
        law="exact", delta=1e-3)),
    "coupled count": ("smokers", 747, lambda s: AttributePrivateGaussian(
        query=skattr.Query.count("smoker", 1), secret=s, delta=1e-3)),
    "gaussian mean": ("reference", 747, lambda s: AttributePrivateGaussian(
        query=skattr.Query.mean("weight"), secret=s, law="gaussian",
        delta=1e-3)),
    "expected value": ("reference", 747, lambda s: ExpectedValueGaussian(
        query=skattr.Query.mean("weight"), secret=s, law="gaussian",
        delta=1e-3)),
    "band mean": ("reference", 747, lambda s: ApproximateWassersteinMechanism(
        query=skattr.Query.mean("weight"), secret=s, delta=1e-3)),
    "box proportion": ("smokers", 747,
                       lambda s: ApproximateWassersteinMechanism(
                           query=skattr.Query.proportion("smoker", 1),
                           secret=s, delta=1e-3)),
}


def _path(name, request):
    data, n, build = PATHS[name]
    column, value = (("sex", "F") if data == "smokers" else
                     ("gender", "female"))

    def noise(pairs) -> float:
        secret = Secret.proportion(column, value, pairs=pairs)
        mech = build(secret).fit(request.getfixturevalue(data))
        return float(mech.plan(n=n).expected_error)

    return noise, n


@pytest.mark.parametrize("path", sorted(PATHS))
def test_an_off_grid_pair_gets_the_noise_of_its_neighbours_stated(path,
                                                                   request):
    noise, n = _path(path, request)
    counts = sorted(_neighbours(n))
    stated = [(ka / n, kb / n) for ka, kb in counts]
    off_grid = noise([(0.4, 0.6)])
    # Independent of the rounding: the neighbours stated explicitly.
    assert off_grid == pytest.approx(noise(stated), rel=1e-9)
    alone = [noise([pair]) for pair in stated]
    assert off_grid >= max(alone) * (1 - 1e-9)
    # The nearest pair alone (the fewest records apart) would certify
    # less: the checks above can fail.
    nearest = counts.index((max(_around(2, n)), min(_around(3, n))))
    assert alone[nearest] < off_grid


@pytest.mark.slow
def test_an_off_grid_median_gets_the_noise_of_its_neighbours(reference):
    n = 53

    def noise(pairs) -> float:
        return float(ApproximateWassersteinMechanism(
            query=skattr.Statistic.median("weight"),
            secret=Secret.proportion("gender", "female", pairs=pairs),
            delta=1e-3).fit(reference).plan(n=n).expected_error)

    stated = [(ka / n, kb / n) for ka, kb in sorted(_neighbours(n))]
    off_grid = noise([(0.4, 0.6)])
    assert off_grid == pytest.approx(noise(stated), rel=1e-9)
    assert off_grid >= max(noise([pair]) for pair in stated) * (1 - 1e-9)
    assert noise([(0.6, 0.4)]) == pytest.approx(off_grid, rel=1e-9)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_pair_and_its_reverse_certify_the_same_noise(path, request):
    # What merging (b, a) into (a, b) rests on: every calibration is
    # symmetric in a pair's two values.
    noise, _ = _path(path, request)
    for pair in ((0.4, 0.6), (0.25, 0.3)):
        assert noise([pair]) == pytest.approx(noise([pair[::-1]]), rel=1e-9)


# ------------------------------------------ an independent exact-law check


def _count_law(k: int, n: int, inside: float, outside: float) -> np.ndarray:
    """P(count = j | k of the n records in the group), j = 0..n, by scipy."""
    return np.convolve(stats.binom.pmf(np.arange(k + 1), k, inside),
                       stats.binom.pmf(np.arange(n - k + 1), n - k, outside))


def _hockey_stick(law_a, law_b, sd: float, epsilon: float) -> float:
    """max of both directions of H_epsilon for the laws plus N(0, sd^2)."""
    atoms = np.arange(law_a.size)
    x = np.linspace(-12 * sd, atoms[-1] + 12 * sd, 40_001)
    kernel = stats.norm.pdf(x[:, None], atoms[None, :], sd)
    da, db = kernel @ law_a, kernel @ law_b
    return max(np.trapezoid(np.maximum(da - np.exp(epsilon) * db, 0), x),
               np.trapezoid(np.maximum(db - np.exp(epsilon) * da, 0), x))


def test_the_release_is_within_delta_for_every_neighbouring_pair(smokers):
    # 0.4 and 0.6 of 57 records are 22.8 and 34.2: rounding each to the
    # nearest gives the closest pair (23 vs 34), not the widest (22 vs 35).
    n, epsilon, delta = 57, 1.0, 1e-3
    inside = smokers.loc[smokers.sex == "F", "smoker"].mean()
    outside = smokers.loc[smokers.sex == "M", "smoker"].mean()

    def sd(pairs) -> float:
        mech = AttributePrivateGaussian(
            query=skattr.Query.count("smoker", 1),
            secret=Secret.proportion("sex", "F", pairs=pairs), theta="moments",
            law="exact", epsilon=epsilon, delta=delta).fit(smokers)
        return float(mech.plan(n=n).noise_std[0])

    def divergences(noise_sd) -> dict:
        return {(ka, kb): _hockey_stick(_count_law(ka, n, inside, outside),
                                        _count_law(kb, n, inside, outside),
                                        noise_sd, epsilon)
                for ka, kb in _neighbours(n)}

    certified = divergences(sd([(0.4, 0.6)]))
    assert set(certified) == {(22, 34), (22, 35), (23, 34), (23, 35)}
    assert max(certified.values()) <= delta * (1 + 1e-4)
    # Positive control: noise certified for the nearest pair alone (23 vs
    # 34 records) leaves the widest neighbours (22 vs 35) over delta.
    nearest = divergences(sd([(23 / n, 34 / n)]))
    assert nearest[(23, 34)] <= delta * (1 + 1e-4)
    assert nearest[(22, 35)] > 2 * delta


# ------------------------------------------- the verbs, on every n


@pytest.mark.parametrize("n", SWEEP)
def test_cheap_verbs_plan_on_every_n(n, smokers):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # delta against 1/n
        for mech in (
                AttributePrivateGaussian(query=skattr.Query.count("smoker", 1),
                                         secret=Secret.proportion(
                                             "sex", "F", pairs=[(0.4, 0.6)]),
                                         delta=1e-6),
                ApproximateWassersteinMechanism(
                    query=skattr.Query.proportion("smoker", 1),
                    secret=Secret.proportion("sex", "F", pairs=[(0.4, 0.6)]),
                    delta=1e-6)):
            plan = mech.fit(smokers).plan(n=n)
            assert np.isfinite(plan.expected_error)
            record = _grid_record(plan)
            if n % 5 == 0:
                assert record is None
            else:
                assert set(record.params["certified"]) == _neighbours(n)


def _verbs(private, reference, secret):
    common = dict(secret=secret, reference=reference, epsilon=1.0,
                  delta=1e-6, random_state=0)
    acc = private.attrpriv
    return {
        "mean": lambda: acc.mean(["weight"], **common),
        "proportion": lambda: acc.proportion(["gender"], "other", **common),
        "count": lambda: acc.count(["gender"], "other", **common),
        "median": lambda: acc.median(["weight"], **common),
        "ledger": lambda: acc.ledger(secret=secret, reference=reference,
                                     budget=(2.0, 1e-6), random_state=0
                                     ).mean(["weight"], epsilon=1.0, delta=1e-6),
    }


@pytest.mark.parametrize("n", [53, 747])
def test_the_default_verbs_release_off_the_grid(n, reference):
    private = make_hospital(n, random_state=1)
    for name, release in _verbs(private, reference, GENDER).items():
        if name == "median":
            continue                # costly: the slow sweep releases it
        rel = release()
        assert np.isfinite(rel.values).all(), name
        assert set(_grid_record(rel).params["certified"]) == _neighbours(n)


@pytest.mark.slow
@pytest.mark.parametrize("n", SWEEP)
def test_every_default_verb_releases_on_every_n(n, reference):
    private = make_hospital(n, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # delta against 1/n
        for name, release in _verbs(private, reference, GENDER).items():
            rel = release()
            assert np.isfinite(rel.values).all(), (name, n)
            record = _grid_record(rel)
            if n % 5 == 0:
                assert record is None, name
            else:
                assert set(record.params["certified"]) == _neighbours(n), name


def test_a_ledger_certifies_different_statistics_jointly_off_the_grid(
        reference, monkeypatch):
    # Different statistics under the resampling Theta: the joint closeness
    # over the ledger's pairs, read on the grid.
    from skattr.laws import _coupling

    seen = []
    real = _coupling.joint_closeness

    def spy(laws, weights, pairs, n, privacy, delta):
        seen.append({(round(a * n), round(b * n)) for a, b in pairs})
        return real(laws, weights, pairs, n, privacy, delta)

    monkeypatch.setattr(_coupling, "joint_closeness", spy)
    from skattr._ledger import _joint
    monkeypatch.setattr(_joint, "joint_closeness", spy)
    private = make_hospital(23, random_state=1)
    ledger = private.attrpriv.ledger(
        secret=GENDER, reference=reference.iloc[:1000], budget=(4.0, 1e-3),
        theta=skattr.theta.Resample(random_state=0), random_state=0)
    ledger.mean(["weight"], epsilon=1.0)
    ledger.mean(["blood_pressure"], epsilon=1.0)
    assert seen and all(pairs == _neighbours(23) for pairs in seen)
    assert 0 < ledger.spent[0] < np.inf
    assert ("9 or 10 of 23 records (40%) vs 13 or 14 of 23 (60%)"
            in " ".join(ledger.in_plain_words().split()))
    # Its audit draws the widest neighbours, 9 vs 14 women.
    from skattr.audit import audit_ledger
    assert audit_ledger(ledger, releases=100, random_state=0).pair == (
        9 / 23, 14 / 23)


def test_synthesize_hides_the_neighbours_off_the_grid():
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"sex": rng.choice(["F", "M"], 53),
                         "job": rng.choice(["a", "b"], 53)})
    out = skattr.synth.synthesize(
        data, secret=Secret.proportion("sex", "F", pairs=[(0.3, 0.4)]),
        categories={"sex": ["F", "M"], "job": ["a", "b"]}, k=1,
        n_synthetic=20, iterations=20, random_state=0)
    # 0.3 and 0.4 of 53 records are 15.9 and 21.2.
    record = _grid_record(out.certificate)
    assert set(record.params["certified"]) == {(15, 21), (15, 22), (16, 21),
                                               (16, 22)}
    # The group sizes run over every pair: 15 records surely inside, 53 -
    # 22 = 31 surely outside, up to 22 - 15 = 7 moved.
    sizes = out.synthesizer._calibrate(53, 1)[1]
    assert sizes.inside.min() == 15 and sizes.outside.min() == 31
    assert sizes.moved.max() == 7
    assert out.share == 0.35            # stated: the middle of 0.3 and 0.4
    saved = type(out.synthesizer).from_json(out.synthesizer.to_json())
    assert _grid_record(saved.certificate_) == record
    assert "15 or 16 of 53 records (30%) vs 21 or 22 of 53 (40%)" in \
        " ".join(out.summary().split())


# ------------------------------------------------ what the release records


def test_the_release_records_and_says_the_pairs_certified(reference, tmp_path):
    private = make_hospital(747, random_state=1)
    rel = private.attrpriv.mean(["weight"], secret=GENDER, reference=reference,
                                epsilon=1.0, delta=1e-3, random_state=0)
    record = _grid_record(rel)
    assert record.params == {
        "secret": GENDER.label, "n": 747, "stated": ((0.4, 0.6),),
        "sides": (((298, 299), (448, 449)),),
        "certified": ((298, 448), (298, 449), (299, 448), (299, 449))}
    assert not record.opt_in
    text = " ".join(str(rel.summary()).split())
    assert ("whether the share of records with gender = 'female' is 0.4 or "
            "0.6, that is 298 or 299 of 747 records (40%) vs 448 or 449 of "
            "747 (60%).") in text
    assert "0.4 vs 0.6 as 298 or 299 vs 448 or 449 records" in text
    back = skattr.Release.from_json(rel.to_json())
    assert _grid_record(back) == record
    assert " ".join(str(back.summary()).split()) == text
    # On the grid nothing is added.
    on_grid = make_hospital(750, random_state=1).attrpriv.plan(
        ["weight"], secret=GENDER, reference=reference, epsilon=1.0,
        delta=1e-3)
    assert _grid_record(on_grid) is None


def test_the_command_line_releases_off_the_grid(reference, tmp_path, capsys):
    from skattr.cli import main

    private = tmp_path / "private.csv"
    ref = tmp_path / "reference.csv"
    make_hospital(53, random_state=1).to_csv(private, index=False)
    reference.to_csv(ref, index=False)
    code = main(["release", str(private), "--columns", "weight",
                 "--secret-column", "gender", "--secret-value", "female",
                 "--pairs", "0.4,0.6", "--reference", str(ref),
                 "--random-state", "0"])
    assert code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "21 or 22 of 53 records (40%) vs 31 or 32 of 53 (60%)" in out


def test_the_monte_carlo_theta_draws_the_neighbours(reference):
    mech = AttributePrivateGaussian(
        query=skattr.Query.mean("weight"), secret=GENDER, law="gaussian",
        theta=skattr.theta.MonteCarlo(50, random_state=0)).fit(reference)
    plan = mech.plan(n=53)
    assert set(_grid_record(plan).params["certified"]) == _neighbours(53)

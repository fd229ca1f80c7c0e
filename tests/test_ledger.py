"""The privacy ledger: joint certificates from the joint law, a budget that refuses."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import skattr
from skattr.calibration import epsilon_for_mahalanobis
from skattr.datasets import make_hospital
from skattr.exceptions import (
    BudgetExceededError,
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.theta import ExpertTheta, GroupMoments

N = 100
DELTA = 1e-3
SECRET = skattr.Secret.proportion("s", True, pairs=[(0.4, 0.6)])


def frame(columns, n=N, seed=0):
    rng = np.random.default_rng(seed)
    data = {"s": rng.random(n) < 0.5}
    data.update({c: rng.normal(size=n) for c in columns})
    return pd.DataFrame(data)


def clopper_pearson(k, m, alpha=0.05):
    """Two-sided (1 - alpha) interval of a binomial proportion."""
    lo = stats.beta.ppf(alpha / 2, k, m - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - alpha / 2, k + 1, m - k) if k < m else 1.0
    return lo, hi


def epsilon_lower_bound(out_a, out_b, delta, alpha=0.05):
    """Largest certified-at-95% epsilon over threshold events {T > t}, both ways.

    Each event gives epsilon >= log((P_a(E) - delta) / P_b(E)); P_a is bounded
    below and P_b above by Clopper-Pearson (Bonferroni over the events).
    """
    thresholds = np.quantile(np.concatenate([out_a, out_b]),
                             np.linspace(0.005, 0.995, 60))
    m = len(out_a)
    level = alpha / (2 * 2 * len(thresholds))
    best = 0.0
    for first, second in ((out_a, out_b), (out_b, out_a)):
        for t in thresholds:
            for sign in (1, -1):
                ka = int(np.sum(sign * first > sign * t))
                kb = int(np.sum(sign * second > sign * t))
                pa = clopper_pearson(ka, m, 2 * level)[0]
                pb = clopper_pearson(kb, m, 2 * level)[1]
                if pa - delta > 0 and pb > 0:
                    best = max(best, math.log((pa - delta) / pb))
    return best


# --- 1. Two statistics each at epsilon 0 reveal the secret together --------


def correlated_theta(rho=0.9):
    return ExpertTheta([GroupMoments(
        mean_in=[0.0, 0.0], mean_out=[0.0, 0.0],
        cov_in=[[1.0, rho], [rho, 1.0]], cov_out=[[1.0, -rho], [-rho, 1.0]],
        columns=("x1", "x2"))])


def test_correlation_counterexample_each_zero_jointly_large():
    data = frame(["x1", "x2"])
    secret = skattr.Secret.proportion("s", True, pairs=[(0.0, 1.0)])
    theta = correlated_theta()
    # Alone, each mean has the same law under both secrets: released raw.
    for column in ("x1", "x2"):
        mech = skattr.mechanisms.AttributePrivateGaussian(
            query=skattr.Query.mean(column), secret=secret, theta=theta,
            law="gaussian").fit(data)
        assert mech.leakage(n=N, delta=DELTA) == 0.0
        assert mech.plan(n=N).noise_law.is_zero
    ledger = data.attrpriv.ledger(secret=secret, reference=data, theta=theta,
                                  budget=(200.0, DELTA), law="gaussian",
                                  random_state=0)
    ledger.mean(["x1"])
    assert ledger.spent == (0.0, DELTA)
    ledger.mean(["x2"])
    joint = ledger.spent[0]
    # A sum of epsilons would say 0 + 0; the joint law says otherwise.
    assert joint > 50
    # Independent value: along (1, 1) the variances are 1.9 and 0.1 per
    # record, along (1, -1) 0.1 and 1.9; the privacy loss under side a is
    # 0.5 log(0.1 * 1.9 / (1.9 * 0.1)) + (u^2 - w^2) ... bounded below by
    # the one-direction loss: log-ratio of N(0, 1.9) and N(0, 0.1) densities
    # exceeds epsilon on a set of probability delta under N(0, 1.9) when
    # x^2 >= 1.9 chi2_1(1 - delta).
    one_dim = (0.5 * math.log(0.1 / 1.9)
               + stats.chi2.isf(DELTA, 1) * 1.9 / 2 * (1 / 0.1 - 1 / 1.9))
    assert joint >= 0.9 * one_dim
    # And with a tight budget the second release is refused.
    tight = data.attrpriv.ledger(secret=secret, reference=data, theta=theta,
                                 budget=(1.0, DELTA), law="gaussian",
                                 random_state=0)
    tight.mean(["x1"])
    with pytest.raises(BudgetExceededError, match="over the budget"):
        tight.mean(["x2"])
    assert len(tight.releases) == 1


@pytest.mark.slow
def test_correlation_counterexample_empirically():
    # The joint outputs of datasets drawn on each side: threshold tests on the
    # product y1 * y2 (positive under +0.9, negative under -0.9) prove an
    # epsilon far above 0 + 0, and below the ledger's certificate.
    rng = np.random.default_rng(1)
    m = 20_000
    outs = []
    for rho in (0.9, -0.9):
        cov = np.array([[1.0, rho], [rho, 1.0]])
        means = rng.multivariate_normal([0, 0], cov, size=(m, N)).mean(axis=1)
        outs.append(means[:, 0] * means[:, 1])
    lower = epsilon_lower_bound(*outs, DELTA)
    data = frame(["x1", "x2"])
    secret = skattr.Secret.proportion("s", True, pairs=[(0.0, 1.0)])
    ledger = data.attrpriv.ledger(secret=secret, reference=data,
                                  theta=correlated_theta(),
                                  budget=(200.0, DELTA), law="gaussian")
    ledger.mean(["x1"])
    ledger.mean(["x2"])
    assert 3.0 < lower <= ledger.spent[0]


# --- 2. x1 = u + v, x2 = u - v: each noiseless, together mean(u) ------------


def uv_theta():
    # u = 1 in the group, 0 outside, plus N(0, 0.1^2); v ~ N(0, 25).
    cov = np.array([[25.01, -24.99], [-24.99, 25.01]])
    return ExpertTheta([GroupMoments(mean_in=[1.0, 1.0], mean_out=[0.0, 0.0],
                                     cov_in=cov, cov_out=cov,
                                     columns=("x1", "x2"))])


def test_sum_and_difference_each_private_alone_not_together():
    data = frame(["x1", "x2"])
    theta = uv_theta()
    for column in ("x1", "x2"):
        alone = data.attrpriv.mean([column], secret=SECRET, reference=data,
                                   theta=theta, law="gaussian", mechanism="apgm",
                                   epsilon=2.0, random_state=0)
        assert alone.noise_law.is_zero       # the data's own variance hides it
    ledger = data.attrpriv.ledger(secret=SECRET, reference=data, theta=theta,
                                  budget=(4.0, DELTA), law="gaussian",
                                  random_state=0)
    ledger.mean(["x1"], epsilon=2.0)
    with pytest.raises(BudgetExceededError, match=r"remaining"):
        ledger.mean(["x2"], epsilon=2.0)
    # Their average is mean(u): diff 0.2, sd 0.1 / sqrt(n); post-processing
    # bounds the joint epsilon below by that of mean(u) alone.
    plan, joint = ledger.plan(["x2"], statistic="mean", epsilon=2.0)
    assert joint >= epsilon_for_mahalanobis(0.2 / (0.1 / math.sqrt(N)), DELTA)
    assert joint > 2.0 + 2.0


# --- 3. Repeated releases of one mean -------------------------------------


def one_column_theta():
    return ExpertTheta([GroupMoments(mean_in=[1.0], mean_out=[0.0], cov_in=1.0,
                                     cov_out=1.0, columns=("x",))])


def test_repeated_releases_follow_the_exact_profile_and_stop_on_time():
    data = frame(["x"])
    budget = 2.0
    ledger = data.attrpriv.ledger(secret=SECRET, reference=data,
                                  theta=one_column_theta(), budget=(budget, DELTA),
                                  law="gaussian", random_state=0)
    first = ledger.mean(["x"], epsilon=1.0)
    noise_var = float(first.noise_law.covariance[0, 0])
    # Given a share a, the mean is N(a, 1 / n) (equal covariances): after k
    # releases the sufficient statistic is the mean plus N(0, noise_var / k).
    def predicted(k):
        return epsilon_for_mahalanobis(0.2 / math.sqrt(1 / N + noise_var / k),
                                       DELTA)
    assert ledger.spent[0] == pytest.approx(predicted(1), rel=1e-6)
    assert predicted(1) == pytest.approx(1.0, rel=1e-6)
    k_max = max(k for k in range(1, 50) if predicted(k) <= budget)
    for k in range(2, k_max + 1):
        ledger.mean(["x"], epsilon=1.0)
        assert ledger.spent[0] == pytest.approx(predicted(k), rel=1e-6)
    with pytest.raises(BudgetExceededError):
        ledger.mean(["x"], epsilon=1.0)
    assert len(ledger.releases) == k_max
    assert [e.joint_epsilon for e in ledger.releases] == sorted(
        e.joint_epsilon for e in ledger.releases)


def test_repeated_releases_empirically_within_the_certificate():
    # Datasets drawn on each side (records N(1, 1) in the group, N(0, 1)
    # outside); the attacker averages the k releases. The lower bound stays
    # under the joint certificate and above one release's own epsilon.
    data = frame(["x"])
    ledger = data.attrpriv.ledger(secret=SECRET, reference=data,
                                  theta=one_column_theta(), budget=(10.0, DELTA),
                                  law="gaussian", random_state=0)
    k = 8
    for _ in range(k):
        ledger.mean(["x"], epsilon=1.0)
    sd = math.sqrt(ledger.releases[0].noise_cov[0, 0])
    rng = np.random.default_rng(2)
    m = 40_000
    outs = []
    for a in (0.4, 0.6):
        inside = int(round(a * N))
        records = np.concatenate([rng.normal(1.0, 1.0, (m, inside)),
                                  rng.normal(0.0, 1.0, (m, N - inside))], axis=1)
        releases = records.mean(axis=1)[:, None] + rng.normal(0, sd, (m, k))
        outs.append(releases.mean(axis=1))
    lower = epsilon_lower_bound(*outs, DELTA)
    assert 1.0 < lower <= ledger.spent[0]


# --- 4. Refusals, plans and bookkeeping ---------------------------------------


def exhausted_ledger(budget=1.2):
    data = frame(["x"])
    ledger = data.attrpriv.ledger(secret=SECRET, reference=data,
                                  theta=one_column_theta(),
                                  budget=(budget, DELTA), law="gaussian",
                                  random_state=0)
    ledger.mean(["x"], epsilon=1.0)
    return ledger


def test_refusal_draws_no_noise(monkeypatch):
    ledger = exhausted_ledger()
    calls = []

    def sample(self, random_state=None):
        calls.append(self)
        raise AssertionError("noise drawn")

    monkeypatch.setattr(skattr.noise.GaussianNoise, "sample", sample)
    with pytest.raises(BudgetExceededError):
        ledger.mean(["x"], epsilon=1.0)
    assert calls == []
    assert len(ledger.releases) == 1


def test_plan_spends_nothing():
    ledger = exhausted_ledger()
    before = ledger.spent
    plan, joint = ledger.plan(["x"], statistic="mean", epsilon=1.0)
    assert joint > ledger.budget[0] >= before[0]
    assert ledger.spent == before and len(ledger.releases) == 1
    assert plan.epsilon == 1.0


def test_a_mean_and_a_sum_of_one_column_are_one_statistic():
    data = frame(["x"])
    ledger = data.attrpriv.ledger(secret=SECRET, reference=data,
                                  theta=one_column_theta(), budget=(50.0, DELTA),
                                  law="gaussian", random_state=0)
    m = ledger.mean(["x"], epsilon=1.0)
    s = ledger.sum(["x"], epsilon=1.0)
    # The sum's noise, over n, is a second noisy copy of the mean.
    var_mean = float(m.noise_law.covariance[0, 0])
    var_sum = float(s.noise_law.covariance[0, 0]) / N ** 2
    combined = 1 / (1 / var_mean + 1 / var_sum)
    expected = epsilon_for_mahalanobis(0.2 / math.sqrt(1 / N + combined), DELTA)
    assert ledger.spent[0] == pytest.approx(expected, rel=1e-6)


def test_summary_and_repr():
    ledger = exhausted_ledger()
    table = ledger.summary()
    assert list(table.columns) == ["release", "statistics", "values", "mechanism",
                                   "own (epsilon, delta)", "noise sd",
                                   "joint epsilon", "joint bound"]
    assert table["joint epsilon"].iloc[0] == pytest.approx(1.0, rel=1e-6)
    assert table["joint bound"].iloc[0] == "gaussian"
    assert "1 releases" in repr(ledger)
    assert ledger.remaining == pytest.approx(0.2, rel=1e-5)


def test_caller_data_is_not_mutated():
    data = frame(["x"])
    before = data.copy()
    ledger = data.attrpriv.ledger(secret=SECRET, reference=data,
                                  theta=one_column_theta(), budget=(5.0, DELTA),
                                  law="gaussian", random_state=0)
    ledger.mean(["x"])
    ledger.sum(["x"])
    pd.testing.assert_frame_equal(data, before)


def test_seeded_ledgers_reproduce():
    def run():
        data = frame(["x"])
        ledger = data.attrpriv.ledger(secret=SECRET, reference=data,
                                      theta=one_column_theta(),
                                      budget=(5.0, DELTA), law="gaussian",
                                      random_state=3)
        return [ledger.mean(["x"]).values.iloc[0] for _ in range(2)]
    first, second = run(), run()
    assert first == second and first[0] != first[1]


@pytest.mark.parametrize(("kw", "match"), [
    (dict(budget=None), "budget="),
    (dict(budget=(1.0,)), "pair"),
    (dict(budget=(0.0, 1e-3)), "epsilon > 0"),
    (dict(budget=(1.0, 1.0)), "delta in"),
    (dict(law="normal"), "The 'law' parameter of df.attrpriv.ledger must be"),
    (dict(secret="s"), "one secret"),
    # A CI fuzz case: 'str' object has no attribute 'columns' at the first
    # release (the joint laws and clipping read the reference as a frame).
    (dict(reference="self"), "does not take reference='self'"),
    (dict(reference=[[1.0]]), "must be a .pandas or Dask. DataFrame"),
])
def test_bad_ledgers(kw, match):
    data = frame(["x"])
    params = dict(secret=SECRET, reference=data, theta=one_column_theta(),
                  budget=(1.0, DELTA), law="gaussian")
    params.update(kw)
    with pytest.raises(InvalidParameterError, match=match):
        data.attrpriv.ledger(**params)


@pytest.mark.parametrize(("kw", "error", "match"), [
    (dict(mechanism="dp-laplace"), NotCertifiableError, "Gaussian-noise"),
    (dict(mechanism="apgn"), InvalidParameterError, "Did you mean 'apgm'"),
    (dict(secret=SECRET), InvalidParameterError, "ledger's own"),
    (dict(random_state=0), InvalidParameterError, "opening the ledger"),
    (dict(epsilon=-1.0), InvalidParameterError, "epsilon"),
])
def test_bad_releases(kw, error, match):
    data = frame(["x"])
    ledger = data.attrpriv.ledger(secret=SECRET, reference=data,
                                  theta=one_column_theta(), budget=(1.0, DELTA),
                                  law="gaussian")
    with pytest.raises(error, match=match):
        ledger.mean(["x"], **kw)
    assert ledger.releases == []


def test_ledger_needs_reference_for_a_fitted_theta():
    data = frame(["x"])
    ledger = data.attrpriv.ledger(secret=SECRET, budget=(1.0, DELTA),
                                  law="gaussian")
    with pytest.raises(InvalidParameterError, match="reference="):
        ledger.mean(["x"])


def test_budget_error_is_a_value_error():
    assert issubclass(BudgetExceededError, ValueError)
    assert issubclass(BudgetExceededError, NotCertifiableError)


# --- 5. Persistence -----------------------------------------------------------


def hospital_ledger(budget=(3.0, DELTA)):
    from skattr.datasets import make_hospital
    private = make_hospital(200, random_state=1)
    reference = make_hospital(2000, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    ledger = private.attrpriv.ledger(secret=secret, reference=reference,
                                     budget=budget, law="gaussian",
                                     random_state=0)
    return private, reference, ledger


@pytest.mark.slow
def test_json_round_trip_keeps_the_joint_accounting():
    private, reference, ledger = hospital_ledger()
    ledger.mean(["weight"], epsilon=1.0)
    ledger.mean(["weight", "height"], epsilon=1.0)
    text = ledger.to_json()
    loaded = skattr.Ledger.from_json(text, private, reference=reference,
                                     random_state=1)
    assert loaded.spent == ledger.spent
    assert loaded.budget == ledger.budget and loaded.secret == ledger.secret
    pd.testing.assert_frame_equal(loaded.summary(), ledger.summary())
    assert loaded.to_json() == text
    # The next release is accounted jointly with the loaded ones.
    plan_a, joint_a = ledger.plan(["weight"], statistic="mean", epsilon=1.0)
    plan_b, joint_b = loaded.plan(["weight"], statistic="mean", epsilon=1.0)
    assert joint_a == pytest.approx(joint_b, rel=1e-12)
    assert joint_b > loaded.spent[0]


def test_a_loaded_ledger_refuses_other_data():
    private, reference, ledger = hospital_ledger()
    ledger.mean(["weight"], epsilon=1.0)
    text = ledger.to_json()
    with pytest.raises(skattr.exceptions.DataValidationError, match="rows"):
        skattr.Ledger.from_json(text, private.iloc[1:], reference=reference)
    changed = private.copy()
    changed.loc[changed.index[0], "weight"] += 1.0
    with pytest.raises(skattr.exceptions.DataValidationError, match="weight"):
        skattr.Ledger.from_json(text, changed, reference=reference)
    # A column never released may change (it is not part of the fingerprint),
    # but the reference data must be the same.
    other = private.assign(temperature=0.0)
    skattr.Ledger.from_json(text, other, reference=reference)
    with pytest.raises(skattr.exceptions.DataValidationError,
                       match="reference data"):
        skattr.Ledger.from_json(text, private, reference=reference.iloc[1:])
    with pytest.raises(InvalidParameterError, match="reference="):
        skattr.Ledger.from_json(text, private)


@pytest.mark.parametrize("tamper", ["budget", "hash", "schema", "garbage"])
def test_tampered_files_are_rejected(tamper):
    import json

    from skattr._persistence import canonical
    private, reference, ledger = hospital_ledger()
    ledger.mean(["weight"], epsilon=1.0)
    outer = json.loads(ledger.to_json())
    fields = outer["skattr"]["object"]["init"]
    error = skattr.exceptions.PersistenceError
    if tamper == "budget":
        fields["budget"]["items"][0] = 100.0
        text, match = json.dumps(outer), "does not match its SHA-256"
    elif tamper == "hash":
        outer["sha256"] = "0" * 64
        text, match = json.dumps(outer), "does not match its SHA-256"
    elif tamper == "schema":
        import hashlib
        fields["schema"] = 99
        outer["sha256"] = hashlib.sha256(
            canonical(outer["skattr"]).encode("ascii")).hexdigest()
        text, match = json.dumps(outer), "schema 99"
        error = skattr.exceptions.DataValidationError
    else:
        text, match = "{not json", "not a skattr ledger"
        error = skattr.exceptions.DataValidationError
    with pytest.raises(error, match=match):
        skattr.Ledger.from_json(text, private, reference=reference)


# Files of skattr 0.2 (schema 2, its own JSON), written by it on these data:
# their spent budget and the joint epsilon of one more release, as 0.2
# computed them.
SCHEMA_2 = {
    "gaussian": ((1.502572064888595, 1e-3), 1.6287843362071073),
    # 0.3 certifies the count under the reference's confidence box (the swap
    # coupling), where 0.2 took its bootstrap frequencies: 0.9610976576805115.
    "exact": ((0.7550391927361488, 1e-3), 0.9611209109425545),
    "laplace": ((4.227101586739668, 1e-2), 5.464860575327366),
}


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.slow) if name == "laplace" else name
    for name in SCHEMA_2])
def test_files_of_schema_2_still_load_and_keep_counting(name):
    from pathlib import Path

    from skattr.datasets import make_hospital
    text = (Path(__file__).parent / "data" /
            f"ledger_schema2_{name}.json").read_text()
    if name == "laplace":
        private = make_hospital(60, random_state=1)
        reference = make_hospital(600, random_state=0)
        following = dict(columns=["weight"], statistic="median", epsilon=0.5,
                         delta=2e-3)
    else:
        private = make_hospital(200, random_state=1)
        reference = make_hospital(2000, random_state=0)
        following = (dict(columns=["height"], statistic="mean", epsilon=0.5)
                     if name == "gaussian" else
                     dict(columns=["gender"], statistic="count", value="other",
                          epsilon=0.5))
    loaded = skattr.Ledger.from_json(text, private, reference=reference)
    spent, joint = SCHEMA_2[name]
    assert loaded.spent == spent
    assert loaded.plan(**following)[1] == pytest.approx(joint, rel=1e-12)
    # Saved again, it is a file of the current schema, and the same ledger.
    again = skattr.Ledger.from_json(loaded.to_json(), private,
                                    reference=reference)
    assert again.spent == spent and len(again.releases) == len(loaded.releases)
    # An altered file of schema 2 is refused.
    import json
    outer = json.loads(text)
    outer["skattr_ledger"]["budget"][0] = 100.0
    with pytest.raises(skattr.exceptions.DataValidationError, match="altered"):
        skattr.Ledger.from_json(json.dumps(outer), private, reference=reference)


@pytest.mark.parametrize("by_column", [False, True])
def test_expert_theta_is_saved_with_the_ledger(by_column):
    data = frame(["x"])
    theta = one_column_theta()
    if by_column:
        theta = ExpertTheta({"s": theta.models}, description="two experts")
    ledger = data.attrpriv.ledger(secret=SECRET, reference=data, theta=theta,
                                  budget=(5.0, DELTA), law="gaussian",
                                  random_state=0)
    ledger.mean(["x"], epsilon=1.0)
    loaded = skattr.Ledger.from_json(ledger.to_json(), data, reference=data)
    assert loaded.theta.description == theta.description
    model, again = theta.models_for("s")[0], loaded.theta.models_for("s")[0]
    assert type(again) is type(model) and again.columns == model.columns
    assert np.array_equal(again.cov_in, model.cov_in)
    assert loaded.plan(["x"], epsilon=1.0)[1] == pytest.approx(
        ledger.plan(["x"], epsilon=1.0)[1], rel=1e-12)


def test_theta_objects_and_predicates_are_saved_functions_are_not():
    from skattr.predicates import Above
    from skattr.theta import ProbabilityBox
    data = frame(["x"])
    box = ProbabilityBox([0.2, 0.6], [0.4, 0.8])
    ledger = data.attrpriv.ledger(secret=SECRET, reference=data, theta=box,
                                  budget=(5.0, DELTA))
    assert skattr.Ledger.from_json(ledger.to_json(), data,
                                   reference=data).theta == box
    secret = skattr.Secret.proportion("x", Above(0), pairs=[(0.4, 0.6)])
    ledger = data.attrpriv.ledger(secret=secret, reference=data,
                                  budget=(5.0, DELTA), law="gaussian")
    assert skattr.Ledger.from_json(ledger.to_json(), data,
                                   reference=data).secret == secret
    secret = skattr.Secret.proportion("x", lambda v: v > 0, pairs=[(0.4, 0.6)])
    ledger = data.attrpriv.ledger(secret=secret, reference=data,
                                  budget=(5.0, DELTA), law="gaussian")
    with pytest.raises(skattr.exceptions.PersistenceError, match="predicates"):
        ledger.to_json()


# --- 6. GridSearch spends nothing -------------------------------------------


@pytest.mark.slow
def test_grid_search_then_one_release_costs_only_that_release(monkeypatch):
    from sklearn.model_selection import GridSearchCV

    private, reference, ledger = hospital_ledger()
    drawn = []
    original = skattr.noise.GaussianNoise.sample

    def sample(self, random_state=None):
        drawn.append(self)
        return original(self, random_state)

    monkeypatch.setattr(skattr.noise.GaussianNoise, "sample", sample)
    mech = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.mean("weight"), secret=ledger.secret, law="gaussian")
    search = GridSearchCV(mech, {"epsilon": [0.5, 1.0, 2.0]}, cv=3).fit(reference)
    assert drawn == []                       # scoring drew no noise at all
    best = search.best_params_["epsilon"]
    release = ledger.mean(["weight"], epsilon=best)
    assert len(drawn) == 1
    assert ledger.spent[0] == pytest.approx(release.epsilon, rel=1e-6)


@pytest.mark.slow
def test_many_releases_example(capsys):
    import pathlib
    import runpy
    path = pathlib.Path(__file__).parents[1] / "examples" / "many_releases.py"
    found = runpy.run_path(str(path))["main"]()
    out = capsys.readouterr().out
    loop = found["loop"]
    # The attack: 400 releases at "epsilon = 1" average to the true mean far
    # closer than one release's noise.
    assert abs(loop["average"] - loop["true mean"]) < loop["noise sd"] / 10
    ledger = found["ledger"]
    assert ledger.spent[0] <= 2.0 and len(ledger.releases) == 3
    assert "release 4 refused" in out
    growth = found["growth"]["joint epsilon"].to_numpy()
    assert np.all(np.diff(growth) > 0)


# --- 7. Exact laws: one statistic released again and again -----------------


def count_data(n, seed):
    rng = np.random.default_rng(seed)
    s = rng.random(n) < 0.5
    return pd.DataFrame({"s": s, "k": rng.random(n) < np.where(s, 0.7, 0.3)})


@pytest.mark.slow
def test_exact_law_ledger_combines_copies_of_one_count():
    from skattr.calibration._exact_profile import discrete_epsilon

    # theta="moments": the exact laws at the reference's frequencies.
    private, reference = count_data(60, 1), count_data(4000, 0)
    ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(3.0, DELTA), theta="moments",
                                     random_state=0)
    first = ledger.count(["k"], True, epsilon=1.0, mechanism="apgm")
    assert 0.99 < ledger.spent[0] <= 1.0          # exact law, calibrated at 1
    second = ledger.proportion(["k"], True, epsilon=1.0,   # the same count / n
                               mechanism="apgm")
    var = 1 / (1 / first.noise_law.covariance[0, 0]
               + 1 / (second.noise_law.covariance[0, 0] * len(private) ** 2))
    mech = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.count("k", True), secret=SECRET,
        theta="moments").fit(reference)
    assert mech.law_.kind == "exact"
    expected = max(discrete_epsilon(xa, pa, xb, pb, noise="gaussian",
                                    scale=math.sqrt(var), delta=DELTA)
                   for xa, pa, xb, pb in mech._exact_pairs(len(private)))
    assert ledger.spent[0] == pytest.approx(expected, rel=1e-6)
    assert ledger.spent[0] > 1.0
    # A second statistic needs the joint Gaussian law, stated.
    with pytest.raises(NotCertifiableError, match="law='gaussian'"):
        ledger.count(["s"], True, epsilon=1.0, mechanism="apgm")
    assert len(ledger.releases) == 2


def _coupled_epsilon_by_hand(trials, gap, sigma, delta):
    """Least epsilon with E[delta of N(D, s^2) vs N(0, s^2)] <= delta, D binomial.

    Balle and Wang's profile written out with scipy's normal law, solved by
    brentq: shares no code with skattr.
    """
    from scipy import optimize, stats

    d = np.arange(1, trials + 1)
    w = stats.binom.pmf(d, trials, gap)
    mu = d / sigma

    def excess(eps):
        profile = (stats.norm.cdf(mu / 2 - eps / mu)
                   - np.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu))
        return float(w @ profile) - delta

    return optimize.brentq(excess, 1e-9, 50, xtol=1e-12)


def test_gaussian_copies_of_one_count_combine_over_the_box():
    # With no Theta given a count's Theta is the reference's 0.999
    # confidence box; two apgm releases of the same count (as a count and a
    # proportion) are as private as one with their combined noise, certified
    # through the swap coupling: 12 records move (0.4 vs 0.6 of 60), each
    # counted differently with probability at most high_in - low_out.
    from statsmodels.stats.proportion import proportion_confint

    private, reference = count_data(60, 1), count_data(4000, 0)
    ledger = private.attrpriv.ledger(secret=SECRET, reference=reference,
                                     budget=(3.0, DELTA), random_state=0)
    first = ledger.count(["k"], True, epsilon=1.0, mechanism="apgm")
    assert first.assumes("reference.sample")
    assert 0.99 < ledger.spent[0] <= 1.0
    second = ledger.proportion(["k"], True, epsilon=1.0, mechanism="apgm")
    var = 1 / (1 / first.noise_law.covariance[0, 0]
               + 1 / (second.noise_law.covariance[0, 0] * len(private) ** 2))
    s, k = reference["s"].to_numpy(), reference["k"].to_numpy()
    low, high = proportion_confint([k[~s].sum(), k[s].sum()],
                                   [(~s).sum(), s.sum()], alpha=0.0005,
                                   method="beta")
    gap = max(high[1] - low[0], high[0] - low[1])
    expected = _coupled_epsilon_by_hand(12, gap, math.sqrt(var), DELTA)
    assert ledger.spent[0] == pytest.approx(expected, rel=1e-6)
    assert 1.0 < ledger.spent[0] < 2.0


@pytest.mark.slow
def test_laplace_statistics_outside_the_resampling_theta_are_joint_over_bands():
    data, reference = count_data(60, 1), count_data(2000, 0)
    ledger = data.attrpriv.ledger(secret=SECRET, reference=reference,
                                  budget=(5.0, 1e-2), random_state=0)
    ledger.count(["k"], True, mechanism="wasserstein", epsilon=1.0)
    # A second count is a different statistic: certified with the first
    # from their joint law over the reference's confidence bands (not the
    # resampling model, which is never a default).
    ledger.count(["s"], True, mechanism="wasserstein", epsilon=1.0)
    assert 0 < ledger.spent[0] <= 5.0 and ledger.spent[1] == 1e-2
    # A function has no band: its joint law names the explicit choice.
    with pytest.raises(NotCertifiableError, match=r"theta=skattr.theta.Resample"):
        ledger.agg(skattr.Statistic.function(
            lambda d: d["k"].mean(), columns=["k"]), epsilon=1.0)
    assert len(ledger.releases) == 2
    # Gaussian noise among them: every release certified again through the
    # bands' one coupling (skattr._ledger._mixed), so the joint grows.
    before = ledger.spent[0]
    _, planned = ledger.plan(["k"], statistic="count", value=True,
                             epsilon=1.0, mechanism="apgm")
    assert before < planned < math.inf
    # And the other way round: Gaussian first, then Laplace.
    gaussian = data.attrpriv.ledger(secret=SECRET, reference=reference,
                                    budget=(50.0, 1e-2), random_state=0)
    gaussian.count(["k"], True, epsilon=1.0, mechanism="apgm")
    gaussian.count(["k"], True, mechanism="wasserstein", epsilon=1.0)
    # At least what the first spent; under one coupling the two compose
    # (skattr._ledger._composed), here below the sum of their own epsilons
    # (each certified again under the coupling is worth less than 1).
    assert 1.0 <= gaussian.spent[0] < 50.0 and gaussian.spent[1] == 1e-2
    assert gaussian.releases[-1].joint_bound in ("box", "composed")
    # A ledger holding Gaussian-noise releases keeps them by default (a file
    # written when apgm was the default goes on counting).
    assert gaussian.count(["k"], True, epsilon=1.0).mechanism == "apgm"


@pytest.mark.slow
def test_a_default_ledger_holds_means_a_median_and_a_count_of_one_dataset():
    # Issue 28: a mean and a median of the same patients in one ledger with
    # no options, and the joint guarantee covers them all. Since issue 46
    # each release is planned under the ledger's one coupling (the moved
    # records' rows independent), so that they compose: at least the noise
    # the accessor gives it alone, never less.
    reference = skattr.datasets.make_hospital(2000, random_state=0)
    private = skattr.datasets.make_hospital(200, random_state=1)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    ledger = private.attrpriv.ledger(secret=secret, reference=reference,
                                     budget=(6.0, 1e-3), random_state=0)
    mean = ledger.mean(["weight"], epsilon=1.0)
    alone = private.attrpriv.plan(["weight"], secret=secret,
                                  reference=reference, epsilon=1.0)
    assert mean.mechanism == alone.mechanism == "approx-wasserstein"
    assert np.all(np.asarray(mean.noise_std) >= np.asarray(alone.noise_std)
                  * (1 - 1e-9))
    first = ledger.spent[0]
    assert 0.99 < first <= 1.0
    others = [ledger.mean(["blood_pressure"], epsilon=1.0),
              ledger.median(["weight"], epsilon=1.0),
              ledger.count(["gender"], "other", epsilon=1.0)]
    assert {r.mechanism for r in others} == {"approx-wasserstein"}
    spent, delta = ledger.spent
    # Four releases of epsilon 1 at one delta, planned under one coupling:
    # composed, about their sum (a little above it: the joint re-splits
    # one delta among them), and within the budget.
    assert 4.0 <= spent <= 4.5 and delta == 1e-3
    assert ledger.releases[-1].joint_bound == "composed"
    ledger.mean(["height"], epsilon=1.0)
    assert ledger.spent[0] <= 6.0
    with pytest.raises(BudgetExceededError):
        ledger.mean(["temperature"], epsilon=1.0)
    assert len(ledger.releases) == 5


def test_repeated_laplace_releases_of_one_count_add_up_and_hold_empirically():
    # The Wasserstein Mechanism on one count (exact laws, delta = 0): k
    # releases share one coupling, so the joint epsilon is the sum. Drawn
    # datasets on each side (the model's exact count law) plus the k Laplace
    # noises, averaged by the attacker: the empirical lower bound stays under
    # the sum and above one release's epsilon.
    data, reference = count_data(60, 1), count_data(4000, 0)
    ledger = data.attrpriv.ledger(secret=SECRET, reference=reference,
                                  theta="moments", budget=(3.0, DELTA),
                                  random_state=0)
    releases = [ledger.count(["k"], True, mechanism="wasserstein", epsilon=0.75)
                for _ in range(4)]
    assert ledger.spent == (pytest.approx(3.0), 0.0)      # exact laws: delta 0
    with pytest.raises(BudgetExceededError):
        ledger.count(["k"], True, mechanism="wasserstein", epsilon=0.75)
    scale = releases[0].noise_law.scale
    inside = reference["s"]
    p_in = reference.loc[inside, "k"].mean()
    p_out = reference.loc[~inside, "k"].mean()
    rng = np.random.default_rng(5)
    m = 200_000
    outs = []
    for a in (0.4, 0.6):
        n_in = int(round(a * len(data)))
        count = (rng.binomial(n_in, p_in, m)
                 + rng.binomial(len(data) - n_in, p_out, m))
        outs.append(count + rng.laplace(0, scale, (4, m)).mean(axis=0))
    lower = epsilon_lower_bound(*outs, 0.0)
    assert 0.75 < lower <= ledger.spent[0]


@pytest.mark.slow
def test_repeated_medians_add_epsilons_and_their_drawn_deltas():
    from skattr.datasets import make_hospital
    private = make_hospital(60, random_state=1)
    reference = make_hospital(1000, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    # The resampling model, named: its laws of a median of 60 are drawn.
    resample = skattr.theta.Resample(random_state=0)
    ledger = private.attrpriv.ledger(secret=secret, reference=reference,
                                     budget=(2.5, 1e-2), random_state=0,
                                     theta=resample)
    first = ledger.median(["weight"], epsilon=1.0, delta=2e-3)
    assert first.mechanism == "approx-wasserstein"
    ledger.median(["weight"], epsilon=1.0, delta=2e-3)
    # Deltas: the largest 0.0018 disregarded plus 2 x 0.0002 drawn failures.
    assert ledger.spent == (pytest.approx(2.0), pytest.approx(2.2e-3))
    with pytest.raises(BudgetExceededError, match="epsilon = 3"):
        ledger.median(["weight"], epsilon=1.0, delta=2e-3)
    # Drawn laws: each release's chance of a wrong tail bound (a tenth of
    # its delta) adds up; at the budget's whole delta a second is refused.
    tight = private.attrpriv.ledger(secret=secret, reference=reference,
                                    budget=(5.0, 1e-2), random_state=0,
                                    theta=resample)
    tight.median(["weight"], epsilon=1.0, delta=1e-2)
    with pytest.raises(BudgetExceededError, match="smaller delta"):
        tight.median(["weight"], epsilon=1.0, delta=1e-2)
    # The loaded ledger keeps counting them.
    loaded = skattr.Ledger.from_json(ledger.to_json(), private,
                                     reference=reference)
    assert loaded.plan(["weight"], statistic="median", epsilon=0.5,
                       delta=2e-3)[1] == pytest.approx(2.5)
    # The default, the reference's confidence bands (issue 27), draws
    # nothing. Since issue 46 each copy is planned under the ledger's one
    # coupling (not a (W, delta)-closeness), so the copies compose as
    # different statistics do, at the budget's delta: at most their sum.
    bands = private.attrpriv.ledger(secret=secret, reference=reference,
                                    budget=(2.5, 1e-2), random_state=0)
    for _ in range(2):
        release = bands.median(["weight"], epsilon=1.0, delta=2e-3)
        assert release.assumes("reference.band")
    assert bands.spent[0] <= 2.0 + 1e-9 and bands.spent[1] == 1e-2
    assert bands.releases[-1].joint_bound in ("box", "composed")


@pytest.mark.slow
def test_auto_picks_the_least_error_gaussian_mechanism():
    private, reference, ledger = hospital_ledger()
    rel = ledger.mean(["weight", "height"], mechanism="auto", epsilon=1.0)
    errors = {}
    for name in skattr.Ledger.GAUSSIAN:
        try:
            errors[name] = private.attrpriv.plan(
                ["weight", "height"], secret=ledger.secret, reference=reference,
                mechanism=name, law="gaussian", epsilon=1.0).expected_error
        except skattr.exceptions.SkattrError:
            pass
    assert rel.mechanism == min(errors, key=errors.get)
    assert rel.expected_error == pytest.approx(min(errors.values()))


def test_theta_as_parameter_ranges_is_refused_when_opening():
    from skattr.datasets import hospital_theta, make_hospital
    data = make_hospital(50, random_state=1)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    with pytest.raises(NotCertifiableError, match="parameter ranges"):
        data.attrpriv.ledger(secret=secret, theta=hospital_theta("weight"),
                             budget=(1.0, DELTA), law="gaussian")


# --- Laplace noise on different statistics: their joint law -----------------


def mirrored_reference(shift=0.0):
    """Six records in the group and six out, x1 the same values on both sides
    (shifted by ``shift`` in the group); x2 = x1 in the group, -x1 out of it."""
    values = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    x1 = np.concatenate([values + shift, values])
    x2 = np.concatenate([values + shift, -values])
    return pd.DataFrame({"s": [True] * 6 + [False] * 6, "x1": x1, "x2": x2})


GRID_SECRET = skattr.Secret.proportion("s", True, pairs=[(0.25, 0.75)])


def mirrored_ledger(shift, budget):
    from skattr.theta import Resample
    private = mirrored_reference(shift).iloc[[0, 1, 6, 7]]
    return private.attrpriv.ledger(
        secret=GRID_SECRET, reference=mirrored_reference(shift),
        theta=Resample(random_state=0), budget=budget, random_state=0)


def test_laplace_counterexample_each_exact_zero_jointly_refused():
    # mean(x1) and mean(x2) have the same law on both sides of the secret
    # (the values are mirrored), so the Wasserstein Mechanism releases each
    # without noise at any epsilon; together they reveal the secret (x2 =
    # x1 in the group, -x1 out of it). A sum of epsilons would allow it.
    ledger = mirrored_ledger(0.0, (3.0, DELTA))
    first = ledger.mean(["x1"], mechanism="wasserstein", epsilon=1.0)
    assert first.noise_law.is_zero and first.epsilon == 1.0
    plan = ledger.plan(["x2"], mechanism="wasserstein", epsilon=1.0)[0]
    assert plan.noise_law.is_zero
    assert first.epsilon + plan.epsilon <= ledger.budget[0]    # a sum: "fine"
    with pytest.raises(BudgetExceededError, match="epsilon = inf"):
        ledger.mean(["x2"], mechanism="wasserstein", epsilon=1.0)
    assert len(ledger.releases) == 1


def all_datasets(reference, k, n):
    """Row positions of every dataset of n records, k of them in the group."""
    import itertools
    inside = np.flatnonzero(reference["s"].to_numpy())
    outside = np.flatnonzero(~reference["s"].to_numpy())
    return np.array([list(i) + list(o) for i, o in itertools.product(
        itertools.combinations(inside, k), itertools.combinations(outside, n - k))])


def closeness_by_linear_programs(xa, pa, xb, pb, delta):
    """(W, delta)-closeness in L1 by brute force: for each candidate W, the
    most mass a partial coupling moves along pairs at most W apart (a linear
    program); the least W at which it reaches 1 - delta."""
    from scipy.optimize import linprog
    dist = np.abs(xa[:, None, :] - xb[None, :, :]).sum(axis=2)
    ia, ib = len(pa), len(pb)
    for w in np.unique(dist):
        allowed = np.flatnonzero((dist <= w).ravel())
        rows = np.zeros((ia + ib, allowed.size))
        rows[allowed // ib, np.arange(allowed.size)] = 1
        rows[ia + allowed % ib, np.arange(allowed.size)] = 1
        res = linprog(-np.ones(allowed.size), A_ub=rows,
                      b_ub=np.concatenate([pa, pb]), bounds=(0, None),
                      method="highs")
        if -res.fun >= 1 - delta - 1e-12:
            return float(w)
    raise AssertionError("no coupling")


def test_laplace_joint_of_two_means_is_the_exact_joint_closeness():
    # Shifted in the group: each mean alone has W > 0 and Laplace noise; the
    # joint is the (W, delta)-closeness of the stacked statistic's exact
    # laws in the metric |x1 - y1| / b1 + |x2 - y2| / b2, recomputed here by
    # linear programs over every dataset of the model.
    budget = (10.0, 0.05)
    ledger = mirrored_ledger(1.0, budget)
    r1 = ledger.mean(["x1"], mechanism="wasserstein", epsilon=1.0)
    r2 = ledger.mean(["x2"], mechanism="wasserstein", epsilon=1.0)
    b1, b2 = r1.noise_law.scale, r2.noise_law.scale
    assert b1 > 0 and b2 > 0
    reference = mirrored_reference(1.0)
    laws = []
    for k in (1, 3):
        rows = all_datasets(reference, k, 4)
        stacked = np.column_stack([reference["x1"].to_numpy()[rows].mean(axis=1) / b1,
                                   reference["x2"].to_numpy()[rows].mean(axis=1) / b2])
        support, count = np.unique(stacked, axis=0, return_counts=True)
        laws.append((support, count / count.sum()))
    (xa, pa), (xb, pb) = laws
    expected = closeness_by_linear_programs(xa, pa, xb, pb, budget[1])
    assert ledger.spent == (pytest.approx(expected, rel=1e-9), budget[1])
    # Not the sum of the two epsilons, in either direction in general; here
    # the mirrored x2 moves against x1 and the joint exceeds the sum.
    assert ledger.spent[0] > 2.0


@pytest.mark.slow
def test_laplace_joint_certificate_holds_empirically():
    # Datasets drawn at each side of the secret from the model, the two
    # means released with the ledger's Laplace noise: threshold tests on
    # x1, x2, their sum and difference stay under the joint certificate.
    budget = (10.0, 0.05)
    ledger = mirrored_ledger(1.0, budget)
    r1 = ledger.mean(["x1"], mechanism="wasserstein", epsilon=1.0)
    r2 = ledger.mean(["x2"], mechanism="wasserstein", epsilon=1.0)
    eps, delta = ledger.spent
    reference = mirrored_reference(1.0)
    rng = np.random.default_rng(11)
    m = 200_000
    outs = []
    for k in (1, 3):
        rows = all_datasets(reference, k, 4)
        pick = rows[rng.integers(0, len(rows), m)]
        y1 = (reference["x1"].to_numpy()[pick].mean(axis=1)
              + rng.laplace(0, r1.noise_law.scale, m))
        y2 = (reference["x2"].to_numpy()[pick].mean(axis=1)
              + rng.laplace(0, r2.noise_law.scale, m))
        outs.append((y1, y2))
    (a1, a2), (c1, c2) = outs
    lower = max(epsilon_lower_bound(fa, fb, delta) for fa, fb in (
        (a1, c1), (a2, c2), (a1 + a2, c1 + c2), (a1 - a2, c1 - c2)))
    assert 1.0 < lower <= eps


def test_laplace_joint_from_drawn_coupling_bounds_the_exact_one(monkeypatch):
    # The drawn coupling (datasets sharing all but their swapped records) is
    # one coupling, bounded from draws: never below the exact least W.
    ledger = mirrored_ledger(1.0, (10.0, 0.05))
    ledger.mean(["x1"], mechanism="wasserstein", epsilon=1.0)
    ledger.mean(["x2"], mechanism="wasserstein", epsilon=1.0)
    exact = ledger.spent[0]
    entries = [e.laplace for e in ledger.releases]
    from skattr.laws import _coupling

    monkeypatch.setattr(_coupling, "_joint_exact", lambda *args: None)
    drawn = ledger._laplace.epsilon(entries)
    assert exact <= drawn < 3 * exact


@pytest.mark.slow
def test_median_and_std_with_laplace_noise_are_certified_jointly():
    from skattr.datasets import make_hospital
    from skattr.theta import Resample
    private = make_hospital(60, random_state=1)
    reference = make_hospital(1000, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    ledger = private.attrpriv.ledger(secret=secret, reference=reference,
                                     theta=Resample(random_state=0),
                                     budget=(6.0, 1e-2), random_state=0)
    ledger.median(["weight"], epsilon=1.0, delta=2e-3)
    ledger.std(["height"], epsilon=1.0, delta=2e-3)
    joint, delta = ledger.spent
    assert delta == 1e-2 and 1.0 < joint < 6.0
    # What was spent is kept by a loaded ledger, which certifies the next
    # release from the same draws.
    loaded = skattr.Ledger.from_json(ledger.to_json(), private,
                                     reference=reference)
    assert loaded.theta == ledger.theta
    assert loaded.plan(["weight"], statistic="median", epsilon=1.0,
                       delta=2e-3)[1] == pytest.approx(
        ledger.plan(["weight"], statistic="median", epsilon=1.0,
                    delta=2e-3)[1], rel=1e-9)
    with pytest.raises(BudgetExceededError):
        ledger.quantile(["height"], q=0.9, epsilon=5.0, delta=2e-3)


# --- epsilon="remaining": the release fitted to what the budget leaves -------


def test_remaining_fits_the_release_to_the_budget():
    ledger = exhausted_ledger(budget=2.0)         # one release at epsilon 1
    plan, joint = ledger.plan(["x"], epsilon="remaining")
    assert len(ledger.releases) == 1                    # planning spends nothing
    assert 1.99 < joint <= 2.0
    # The largest own epsilon that fits: a little more would not.
    assert ledger.plan(["x"], epsilon=plan.epsilon * 1.01)[1] > 2.0
    rel = ledger.mean(["x"], epsilon="remaining")
    assert rel.epsilon == plan.epsilon
    assert ledger.spent[0] == pytest.approx(joint)


def test_remaining_adds_up_for_laplace_copies():
    # Copies of one count with Laplace noise: epsilons add, so what remains
    # is the budget less what was spent.
    data, reference = count_data(60, 1), count_data(2000, 0)
    ledger = data.attrpriv.ledger(secret=SECRET, reference=reference,
                                  theta="moments", budget=(2.5, DELTA),
                                  random_state=0)
    ledger.count(["k"], True, mechanism="wasserstein", epsilon=1.0)
    rel = ledger.count(["k"], True, mechanism="wasserstein", epsilon="remaining")
    assert rel.epsilon == pytest.approx(1.5, rel=2e-3) and rel.epsilon <= 1.5
    assert ledger.spent[0] <= 2.5


def test_remaining_refuses_when_nothing_fits(monkeypatch):
    # Two mirrored means: the second leaks the secret at any noise (its
    # partner was released without noise), so no epsilon fits.
    ledger = mirrored_ledger(0.0, (3.0, DELTA))
    ledger.mean(["x1"], mechanism="wasserstein", epsilon=1.0)
    drawn = []
    monkeypatch.setattr(skattr.noise.LaplaceNoise, "sample",
                        lambda self, random_state=None: drawn.append(self))
    with pytest.raises(BudgetExceededError, match="no epsilon fits"):
        ledger.mean(["x2"], mechanism="wasserstein", epsilon="remaining")
    assert not drawn and len(ledger.releases) == 1
    with pytest.raises(InvalidParameterError, match="'remaining'"):
        ledger.mean(["x2"], mechanism="wasserstein", epsilon="rest")


def test_nothing_remaining_is_said_at_once(monkeypatch):
    # A budget spent whole: epsilon="remaining" refuses before planning
    # anything, and an explicit epsilon says no release fits at any epsilon
    # (not "release it with a smaller epsilon").
    ledger = mirrored_ledger(0.0, (1.0, DELTA))
    ledger.mean(["x1"], mechanism="wasserstein", epsilon=1.0)
    assert ledger.spent[0] == 1.0
    planned = []
    plan = type(ledger)._planned
    monkeypatch.setattr(type(ledger), "_planned",
                        lambda self, *a: planned.append(1) or plan(self, *a))
    with pytest.raises(BudgetExceededError,
                       match="nothing remains of the budget"):
        ledger.mean(["x2"], mechanism="wasserstein", epsilon="remaining")
    assert len(planned) == 1         # one plan: does it cost nothing?
    monkeypatch.undo()
    with pytest.raises(BudgetExceededError,
                       match="nothing remains of the budget .* no release "
                             "fits, at any epsilon"):
        ledger.mean(["x2"], mechanism="wasserstein", epsilon=1e-6)
    assert len(ledger.releases) == 1


def test_a_release_that_costs_nothing_fits_when_nothing_remains():
    # A constant column's mean never moves: it fits a spent budget.
    private = make_hospital(200, random_state=1).assign(site=1.0)
    reference = make_hospital(2000, random_state=0).assign(site=1.0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    ledger = private.attrpriv.ledger(secret=secret, reference=reference,
                                     budget=(1.0, DELTA), random_state=0)
    ledger.mean(["weight"], epsilon=1.0)
    assert ledger.remaining == 0.0
    rel = ledger.mean(["site"], epsilon="remaining")
    assert rel.values.iloc[0] == 1.0 and ledger.spent[0] == 1.0


# --- Which mechanisms a ledger takes: read off the registry -----------------
def _declared_joint(cls) -> str | None:
    """What a mechanism declares, read independently of the ledger's rule.

    Gaussian noise calibrated to a Gaussian law of F composes through the
    statistics' joint Gaussian law; Laplace noise calibrated to the resampling
    model composes through couplings of datasets. Nothing else has a joint
    law here.
    """
    if not cls.auto_candidate:
        return None
    if cls.noise == "gaussian" and "gaussian" in cls.calibrates:
        return "gaussian"
    if cls.noise == "laplace" and "resampling" in cls.calibrates:
        return "laplace"
    return None


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.slow) if "wasserstein" in name else name
    for name in skattr.mechanisms.MECHANISMS])
def test_every_registered_mechanism_with_a_joint_law_is_taken(name):
    # A new mechanism whose law composes must release through a ledger with
    # no list to edit; one whose law does not is refused (fail closed), never
    # counted by a sum of epsilons.
    from skattr.datasets import make_hospital
    from skattr.theta import Resample

    cls = skattr.mechanisms.MECHANISMS[name]
    private = make_hospital(60, random_state=1)
    reference = make_hospital(600, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    joint = _declared_joint(cls)
    if joint == "laplace":
        ledger = private.attrpriv.ledger(
            secret=secret, reference=reference, budget=(5.0, 1e-2),
            theta=Resample(random_state=0), random_state=0)
        rel = ledger.median(["weight"], mechanism=name, epsilon=1.0,
                            **({} if name == "wasserstein" else {"delta": 1e-3}))
    else:
        ledger = private.attrpriv.ledger(
            secret=secret, reference=reference, budget=(5.0, 1e-3),
            law="gaussian", random_state=0)
        if joint is None:
            with pytest.raises((NotCertifiableError, InvalidParameterError)):
                ledger.mean(["weight"], mechanism=name, epsilon=1.0)
            assert not ledger.releases
            return
        rel = ledger.mean(["weight"], mechanism=name, epsilon=1.0)
    assert rel.mechanism == name
    assert len(ledger.releases) == 1 and 0 < ledger.spent[0] <= 1.0 + 1e-9


def test_a_relaxation_is_refused_in_a_ledger():
    # The joint is computed from the model's laws: a relaxation's gap (a
    # release certified at 1.2 for epsilon=1 and lam=0.1) would not be
    # counted, so it is refused before any noise.
    from skattr.mechanisms import MaxDivergenceGap

    rng = np.random.default_rng(0)
    data = pd.DataFrame({"s": rng.random(200) < 0.5, "x": rng.normal(size=200)})
    theta = ExpertTheta([GroupMoments(mean_in=[1.0], mean_out=[0.0],
                                      cov_in=1.0, cov_out=1.0, columns=("x",))])
    ledger = data.attrpriv.ledger(
        secret=skattr.Secret.proportion("s", True, pairs=[(0.4, 0.6)]),
        reference=data, theta=theta, budget=(3.0, 1e-3), law="gaussian",
        random_state=0)
    for epsilon in (1.0, "remaining"):
        with pytest.raises(NotCertifiableError, match="relaxation="):
            ledger.mean(["x"], epsilon=epsilon,
                        relaxation=MaxDivergenceGap(lam=0.1, eta=1e-6))
    assert ledger.releases == [] and ledger.spent == (0.0, 0.0)
    ledger.mean(["x"], epsilon=1.0)
    assert len(ledger.releases) == 1


def test_a_statistic_released_again_is_fitted_once(monkeypatch):
    # Theta does not depend on epsilon: a named mechanism is fitted once per
    # statistic and replanned; each release goes out at its own epsilon.
    data, reference = count_data(60, 1), count_data(2000, 0)
    ledger = data.attrpriv.ledger(secret=SECRET, reference=reference,
                                  budget=(5.0, 1e-2), random_state=0)
    fits = []
    original = skattr.mechanisms.WassersteinMechanism.fit

    def counted(self, *args, **kwargs):
        fits.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(skattr.mechanisms.WassersteinMechanism, "fit", counted)
    first = ledger.count(["k"], True, mechanism="wasserstein", epsilon=1.0)
    ledger.plan(["k"], statistic="count", value=True, mechanism="wasserstein",
                epsilon=0.3)
    second = ledger.count(["k"], True, mechanism="wasserstein", epsilon=0.5)
    assert len(fits) == 1
    assert (first.epsilon, second.epsilon) == (1.0, 0.5)
    assert second.noise_law.scale == pytest.approx(2 * first.noise_law.scale)
    assert ledger.spent[0] == pytest.approx(1.5)

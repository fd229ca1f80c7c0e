"""Bounded work: every computation that grows with its input estimates its cost
and finishes in seconds or refuses with the estimate and a cheaper option.

The cases are the reliability review's (issue 29, item 6): Song, Wang and
Chaudhuri's quilt search on a long chain and on a network of many nodes, a
count on ten million records, a Python function on many drawn datasets, and a
Gaussian search over thousands of pairs.
"""

import itertools
import math
import time

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.bayes import ParameterNetwork
from skattr.exceptions import (
    InvalidParameterError,
    NotCertifiableError,
    WorkLimitError,
)
from skattr.laws._distances import count_coupled_distances, envelope_slack
from skattr.mechanisms import MarkovQuiltMechanism
from skattr.mechanisms._chain_quilts import chain_scales
from skattr.utils._work import TimeGuard, work_seconds

# -- The chain's quilt search, against a direct computation ------------------

def _direct_chain_scales(initial, kernels, epsilon):
    """Every quilt {X_{i-a}, X_{i+b}} of every entry, from explicit joint laws.

    Shares nothing with the library: the joint law of (X_{i-a}, X_i, X_{i+b})
    is built from the marginal of X_{i-a} and the matrix products, and the
    max-influence read off it.
    """
    T = len(kernels) + 1
    k = len(initial)
    marg = [np.asarray(initial, float)]
    for K in kernels:
        marg.append(marg[-1] @ K)

    def product(s, t):          # P(X_t | X_s) for s <= t
        P = np.eye(k)
        for u in range(s, t):
            P = P @ kernels[u]
        return P

    out = np.empty(T)
    for i in range(T):
        best = T / epsilon
        for a in range(0, i + 1):          # 0: no quilt node before
            for b in range(0, T - i):      # 0: no quilt node after
                if a == 0 and b == 0:
                    continue
                # joint[x, y, z] = P(X_i = x, X_{i-a} = y, X_{i+b} = z)
                if a:
                    back = marg[i - a][:, None] * product(i - a, i)  # (y, x)
                else:
                    back = marg[i][None, :]                      # (1, x)
                fwd = product(i, i + b) if b else np.ones((k, 1))
                joint = np.einsum("yx,xz->xyz", back, fwd)
                px = joint.sum(axis=(1, 2))
                cond = joint[px > 0] / px[px > 0, None, None]
                cond = cond.reshape(cond.shape[0], -1)
                worst = 0.0
                for u, v in itertools.permutations(range(cond.shape[0]), 2):
                    seen = cond[u] > 0
                    if np.any(cond[v][seen] == 0):
                        worst = math.inf
                        break
                    worst = max(worst, float(np.max(np.log(
                        cond[u][seen] / cond[v][seen]))))
                if a and b:
                    size = a + b - 1
                elif b:
                    size = i + b
                else:
                    size = T - i + a - 1
                if worst < epsilon:
                    best = min(best, size / (epsilon - worst))
        out[i] = best
    return out


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_chain_search_equals_every_quilt(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 4))
    T = int(rng.integers(2, 40))
    homogeneous = seed % 2 == 0
    kernels = [rng.dirichlet(np.full(k, rng.choice([0.5, 2.0, 8.0])), size=k)
               for _ in range(1 if homogeneous else T - 1)]
    if seed % 3 == 0:
        kernels[0][0] = 0.0
        kernels[0][0, 0] = 1.0          # a state that never leaves
    initial = rng.dirichlet(np.ones(k))
    kernels = kernels * (T - 1) if homogeneous else kernels
    epsilon = float(rng.choice([0.3, 1.0, 3.0]))
    fast = chain_scales(initial, kernels[0] if homogeneous else kernels, T,
                        epsilon)
    direct = _direct_chain_scales(initial, kernels, epsilon)
    np.testing.assert_allclose(fast, direct, rtol=1e-9)


@pytest.mark.slow
def test_a_long_chain_is_searched_in_linear_work():
    """plan(n=10**6) took over 300 s; the entries' laws settle, so far from
    both ends every entry scores the same and is computed once."""
    law = dict(transition=[[0.9, 0.1], [0.2, 0.8]], initial=[0.5, 0.5])
    states = pd.DataFrame({"active": np.tile([0, 1], 1000)})
    mech = MarkovQuiltMechanism(query=skattr.Query.proportion("active"),
                                **law).fit(states)
    b_short = mech.plan(n=2000).noise_scale * 2000
    b_long = mech.plan(n=200_000).noise_scale * 200_000
    assert b_long == pytest.approx(b_short, rel=1e-12)
    # The same law, searched without memory entry by entry.
    kernels = [np.array(law["transition"])] * 1999
    direct = chain_scales(np.array(law["initial"]), kernels[:1][0], 2000, 1.0)
    assert direct.max() * 1 == pytest.approx(b_short)


def test_an_inhomogeneous_chain_over_its_limit_refuses_first():
    rng = np.random.default_rng(0)
    kernels = [rng.dirichlet(np.ones(2), size=2) for _ in range(999)]
    with pytest.raises(WorkLimitError, match=r"1,000 entries.*max_work"):
        chain_scales(np.array([0.5, 0.5]), kernels, 1000, 1.0, work_limit=1000)


def _tree(T):
    parents = {f"v{i}": ([f"v{(i - 1) // 2}"] if i else []) for i in range(T)}
    return ParameterNetwork(
        parents=parents, grids={v: [0, 1] for v in parents},
        cpts={v: ([0.5, 0.5] if not ps else [[0.8, 0.2], [0.3, 0.7]])
              for v, ps in parents.items()})


@pytest.mark.slow
def test_a_network_search_over_its_limit_refuses_with_a_smaller_quilt():
    net = _tree(14)
    rows = pd.DataFrame({"v": np.ones(14)})
    mech = MarkovQuiltMechanism(query=skattr.Query.sum("v"), network=net,
                                bounds=(0.0, 1.0)).fit(rows)
    with pytest.raises(WorkLimitError, match=r"14 nodes tries 114,688 quilts"
                       r".*max_quilt_size=7 .*max_work="):
        mech.plan(rows)             # refused before the work (minutes)
    mech.set_params(max_work=300_000).fit(rows)
    with pytest.raises(WorkLimitError, match=r"max_quilt_size=\d") as info:
        mech.plan(rows)
    suggested = int(str(info.value).split("max_quilt_size=")[1].split(" ")[0])
    cheaper = mech.set_params(max_quilt_size=suggested).fit(rows)
    assert np.isfinite(cheaper.plan(rows).noise_scale)


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["wide grids", "a star"])
def test_a_network_beyond_any_limit_refuses_without_overflow(shape):
    # Found by review: the estimate overflowed a float (OverflowError).
    k, T = (10, 320) if shape == "wide grids" else (2, 1100)
    P = np.full((k, k), 1 / k)
    net = ParameterNetwork(
        parents={0: [], **{t: [0] for t in range(1, T)}},
        grids={t: np.arange(k) for t in range(T)},
        cpts={t: (np.full(k, 1 / k) if t == 0 else P) for t in range(T)})
    rows = pd.DataFrame({"v": np.ones(T)})
    mech = MarkovQuiltMechanism(query=skattr.Query.sum("v"), network=net,
                                bounds=(0.0, 1.0)).fit(rows)
    with pytest.raises(WorkLimitError, match=r"10\^\d+ quilts.*more than "
                       r"10\^300 units.*max_quilt_size=\d.*no limit holds"):
        mech.plan(rows)


def test_fewer_quilts_never_give_less_noise():
    net = _tree(6)
    rows = pd.DataFrame({"v": np.ones(6)})
    full = MarkovQuiltMechanism(query=skattr.Query.sum("v"), network=net,
                                bounds=(0.0, 1.0), epsilon=3.0).fit(rows)
    small = MarkovQuiltMechanism(query=skattr.Query.sum("v"), network=net,
                                 bounds=(0.0, 1.0), epsilon=3.0,
                                 max_quilt_size=1).fit(rows)
    assert small.plan(rows).noise_scale >= full.plan(rows).noise_scale
    with pytest.raises(InvalidParameterError, match="max_work"):
        MarkovQuiltMechanism(query=skattr.Query.sum("v"), network=net,
                             max_work=0).fit(rows)


# -- A count on ten million records ------------------------------------------

@pytest.mark.parametrize("n,delta", [(2000, 1e-9), (2000, 1e-4),
                                     (10, envelope_slack(10))])
def test_the_envelope_is_skipped_only_where_it_cannot_win(n, delta):
    """Lossless: an envelope counting at least delta as infinite reads inf."""
    box = ((0.05, 0.3), (0.15, 0.45))
    (full,) = count_coupled_distances([(0.4, 0.6)], n, *box, "dataset", 1.0)
    (read,) = count_coupled_distances([(0.4, 0.6)], n, *box, "dataset", 1.0,
                                      delta=delta)

    def closeness(law):
        try:
            return law.closeness(delta)
        except NotCertifiableError:         # no W is (W, delta)-close
            return math.inf

    assert min(map(closeness, read)) == min(map(closeness, full)) < math.inf
    assert (len(read) == 1) == (envelope_slack(n) >= 2 * delta)
    if len(read) == 1:
        assert closeness(full[1]) == math.inf


@pytest.mark.slow
def test_a_count_on_ten_million_records_plans_in_seconds():
    """A default count on 10^7 records computed four count laws on 0..10^7
    per pair (87 s; 291 TiB on a Dask frame before that)."""
    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"rich": rng.random(20_000) < 0.3,
                        "age": rng.normal(40, 10, 20_000).round()})
    secret = skattr.Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    mech = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Query.count("age", lambda a: a > 40), secret=secret,
        delta=1e-9).fit(ref)
    plan = mech.plan(n=10**7)
    assert 0 < float(plan.noise_std[0]) < math.inf


# -- Drawn datasets and the Gaussian search: timed guards --------------------

@pytest.mark.wall_clock
def test_time_guard_projects_and_refuses():
    guard = TimeGuard(1000, 1e-3, what="ten things", cheaper="do fewer")
    time.sleep(0.01)
    with pytest.raises(WorkLimitError, match=r"Ten things would take about "
                       r".*first 1 of 1,000.*do fewer"):
        guard.advance(1)
    TimeGuard(10, 1e-3, what="x", cheaper="y").expect(1e-4, "quick")
    with pytest.raises(WorkLimitError, match="at least .*by count"):
        TimeGuard(10, 1.0, what="x", cheaper="y").expect(5.0, "by count")


def test_max_seconds_from_the_environment(monkeypatch):
    monkeypatch.setenv("SKATTR_MAX_SECONDS", "none")
    assert work_seconds() is None
    monkeypatch.setenv("SKATTR_MAX_SECONDS", "12.5")
    assert work_seconds() == 12.5
    for bad in ("-1", "soon", "inf"):
        monkeypatch.setenv("SKATTR_MAX_SECONDS", bad)
        with pytest.raises(InvalidParameterError, match="SKATTR_MAX_SECONDS"):
            work_seconds()


@pytest.fixture(scope="module")
def census():
    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"rich": rng.random(3000) < 0.3,
                        "age": rng.normal(40, 10, 3000).round(),
                        "hours": rng.normal(40, 12, 3000).round()})
    ref.loc[ref.rich, "hours"] += rng.normal(5, 8, int(ref.rich.sum()))
    return ref


@pytest.mark.slow
def test_a_slow_function_on_drawn_datasets_refuses_early(census):
    sample = census.sample(300, random_state=1)
    secret = skattr.Secret.proportion("rich", True, pairs=[(0.2, 0.4)])

    calls = []

    def spread(d):
        calls.append(len(d))
        time.sleep(0.002)                      # a slow Python function
        return d["age"].max() - d["age"].min()

    with pytest.raises(WorkLimitError, match=r"datasets of 300 records would "
                       r"take at least .*the function took .* on one dataset"
                       r".*n_draws=.*max_seconds"):
        sample.attrpriv.agg(spread, ["age"], secret=secret, reference=census,
                            theta=skattr.theta.Resample(max_seconds=1.0),
                            delta=1e-3, random_state=0)
    # Tens of thousands of calls take minutes; timed on one dataset, refused
    # at once: counted, not timed (4 calls: twice on the reference, then
    # timed twice on one dataset), against the 65,636 datasets drawn.
    assert 0 < len(calls) < 10, len(calls)
    # A vectorised statistic is not timed on one dataset; its draws are
    # timed as they go, and refused once they project an overrun.
    with pytest.raises(WorkLimitError, match=r"would take about .*measured on "
                       r"the first"):
        sample.attrpriv.agg(skattr.Statistic.trimmed_mean("age"),
                            secret=secret, reference=census, delta=1e-3,
                            random_state=0, theta=skattr.theta.Resample(
                                max_seconds=0.2))
    with pytest.raises(InvalidParameterError, match="max_seconds"):
        skattr.theta.Resample(max_seconds=0)


def test_the_gaussian_pair_search_is_guarded(census, monkeypatch):
    data = census.sample(200, random_state=2)
    secret = skattr.Secret.proportion("rich", True, pairs=[(0.1, 0.5)])
    kw = dict(secret=secret, reference=census, law="gaussian",
              mechanism="apgm", delta=1e-6, random_state=0)
    monkeypatch.setenv("SKATTR_MAX_SECONDS", "1e-9")
    with pytest.raises(WorkLimitError, match=r"pairs of laws with unequal "
                       r"covariances.*assume-equal.*SKATTR_MAX_SECONDS"):
        data.attrpriv.mean(["age", "hours"], **kw)
    monkeypatch.setenv("SKATTR_MAX_SECONDS", "none")
    assert data.attrpriv.mean(["age", "hours"], **kw).mechanism == "apgm"


# -- Item 7: the review's other errors ----------------------------------------

def test_a_1e300_reference_record_is_refused_or_summarised():
    """A 1e300 record in the reference gave a Release whose summary() raised
    OverflowError: now every path refuses with a skattr error that says what
    to do, or releases a summary that prints."""
    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"g": rng.random(500) < 0.4, "x": rng.normal(0, 1, 500)})
    ref.loc[3, "x"] = 1e300
    data = ref.sample(100, random_state=0)
    secret = skattr.Secret.proportion("g", True, pairs=[(0.3, 0.5)])
    outcomes = []
    # The reference's whole range holds the 1e300 (the default, "robust",
    # cuts it, below).
    for kw in ({"bounds": "reference"},
               {"law": "gaussian", "theta": "moments", "bounds": "reference"},
               {"mechanism": "apgm", "law": "gaussian", "theta": "moments",
                "bounds": None}):
        for verb in ("mean", "sum"):
            try:
                rel = getattr(data.attrpriv, verb)(["x"], secret=secret,
                                                   reference=ref, **kw)
            except SkattrErrorTypes as exc:
                outcomes.append(type(exc).__name__)
                continue
            assert rel.summary() and rel.to_dict() and repr(rel)
            outcomes.append("released")
    assert "DataValidationError" in outcomes
    with pytest.raises(skattr.exceptions.DataValidationError,
                       match="overflows.*Rescale"):
        data.attrpriv.mean(["x"], secret=secret, reference=ref, law="gaussian",
                           theta="moments", bounds="reference")
    with pytest.warns(skattr.exceptions.ClippingWarning, match="1 of 500"):
        rel = data.attrpriv.mean(["x"], secret=secret, reference=ref,
                                 law="gaussian", theta="moments")
    assert rel.summary() and rel.clipping.as_dict()["x"][1] < 10


SkattrErrorTypes = skattr.exceptions.SkattrError

"""NetworkTheta: count laws against brute force; the Wasserstein mechanisms on it."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import skattr
from skattr import Assumption
from skattr.bayes import NetworkTheta, ParameterNetwork
from skattr.datasets import make_schools, schools_network
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.mechanisms import ApproximateWassersteinMechanism, WassersteinMechanism

# Brute force (independent of skattr.bayes) ---------------------------------


def brute_joint(net, member=0):
    """P(every node's grid index), by the product of CPT entries."""
    cpts = net.members[member]
    out = {}
    for combo in itertools.product(*(range(net.sizes[v]) for v in net.nodes)):
        idx = dict(zip(net.nodes, combo, strict=True))
        p = 1.0
        for v in net.nodes:
            p *= cpts[v][tuple(idx[u] for u in net.parents[v])][idx[v]]
        out[combo] = p
    return out


def brute_count_law(net, node, i, reads, counted, n, member=0):
    """P(count = k | phi_node = grid[i]): sum over configurations of binomials."""
    law = np.zeros(n + 1)
    total = 0.0
    for combo, p in brute_joint(net, member).items():
        idx = dict(zip(net.nodes, combo, strict=True))
        if idx[node] != i:
            continue
        total += p
        q = counted[tuple(idx[v] for v in reads)]
        law += p * np.array([math.comb(n, k) * q ** k * (1 - q) ** (n - k)
                             for k in range(n + 1)])
    return law / total


def brute_w_infinity(pa, pb):
    """Least integer w with F_a(x) <= F_b(x + w) and F_b(x) <= F_a(x + w)."""
    fa = np.cumsum([Fraction(float(p)) for p in pa])
    fb = np.cumsum([Fraction(float(p)) for p in pb])
    fa, fb = fa / fa[-1], fb / fb[-1]
    n = len(pa) - 1
    for w in range(n + 1):
        if all(fa[x] <= fb[min(x + w, n)] and fb[x] <= fa[min(x + w, n)]
               for x in range(n + 1)):
            return w
    return n


def random_network(rng, n_nodes):
    names = [f"v{i}" for i in range(n_nodes)]
    parents = {v: [names[j] for j in range(i) if rng.random() < 0.5]
               for i, v in enumerate(names)}
    sizes = {v: int(rng.integers(2, 4)) for v in names}
    grids = {v: np.arange(sizes[v], dtype=float) for v in names}
    cpts = {v: rng.dirichlet(np.ones(sizes[v]),
                             size=tuple(sizes[p] for p in parents[v]))
            for v in names}
    return ParameterNetwork(parents=parents, grids=grids, cpts=cpts)


@pytest.mark.parametrize("seed", range(12))
def test_count_laws_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    net = random_network(rng, int(rng.integers(2, 5)))
    node = net.nodes[int(rng.integers(len(net.nodes)))]
    k = int(rng.integers(1, 3))
    reads = tuple(rng.choice(list(net.nodes), size=min(k, len(net.nodes)),
                             replace=False).tolist())
    counted = rng.random(tuple(net.sizes[v] for v in reads))
    theta = NetworkTheta(net, reads=list(reads), counted=counted)
    n = int(rng.integers(1, 8))
    for i, value in enumerate(net.grids[node]):
        support, (law,) = theta.count_laws(node, value, n)
        assert support.tolist() == list(range(n + 1))
        np.testing.assert_allclose(
            law, brute_count_law(net, node, i, reads, counted, n), atol=1e-12)


def test_a_set_of_networks_gives_one_law_each():
    rng = np.random.default_rng(3)
    base = random_network(rng, 3)
    members = [base.members[0],
               {v: rng.dirichlet(np.ones(base.sizes[v]),
                                 size=tuple(base.sizes[p] for p in base.parents[v]))
                for v in base.nodes}]
    net = ParameterNetwork(parents=base.parents, grids=base.grids, cpts=members)
    theta = NetworkTheta(net, reads="v2", counted=rng.random(net.sizes["v2"]))
    _, laws = theta.count_laws("v0", 1.0, 5)
    assert len(laws) == 2
    for m, law in enumerate(laws):
        np.testing.assert_allclose(
            law, brute_count_law(net, "v0", 1, ("v2",), theta.counted, 5, m),
            atol=1e-12)


def test_independent_reads_give_the_same_law_for_every_secret_value():
    # A v-structure a -> c <- b: b says nothing about a, so a count that
    # reads b alone has one law whatever a is (W = 0, no noise).
    net = ParameterNetwork(
        parents={"a": [], "b": [], "c": ["a", "b"]},
        grids={"a": [0, 1], "b": [0, 1], "c": [0, 1]},
        cpts={"a": [0.3, 0.7], "b": [0.6, 0.4],
              "c": [[[0.9, 0.1], [0.5, 0.5]], [[0.2, 0.8], [0.1, 0.9]]]})
    theta = NetworkTheta(net, reads="b", counted=[0.2, 0.7])
    _, (l0,) = theta.count_laws("a", 0, 10)
    _, (l1,) = theta.count_laws("a", 1, 10)
    np.testing.assert_allclose(l0, l1, atol=1e-15)


# The Wasserstein mechanisms on a network --------------------------------------

SECRET = skattr.Secret.mean("income", pairs=[(40_000, 80_000)])


def tall_theta():
    net = schools_network()
    counted = 1 - stats.norm.cdf((66 - net.grids["height"]) / 3.0)
    return NetworkTheta(net, reads="height", counted=counted)


@pytest.fixture(scope="module")
def school():
    return make_schools(1, 60, random_state=1)


def test_wasserstein_scale_is_the_brute_force_distance_over_epsilon(school):
    theta = tall_theta()
    net = theta.network
    n = len(school)
    laws = [brute_count_law(net, "income", i, ("height",), theta.counted, n)
            for i in (0, 2)]
    w = brute_w_infinity(*laws)
    for eps in (0.5, 2.0):
        mech = WassersteinMechanism(
            query=skattr.Query.count("height", lambda h: h > 66), secret=SECRET,
            theta=theta, privacy="distributional", epsilon=eps,
            random_state=0).fit(school)
        plan = mech.plan(school)
        assert plan.sensitivity == w
        assert plan.noise_scale == pytest.approx(w / eps)
        assert plan.delta == 0.0
        assert plan.guarantee == "distributional attribute privacy"
    # A proportion is the count over n.
    prop = WassersteinMechanism(
        query=skattr.Query.proportion("height", lambda h: h > 66), secret=SECRET,
        theta=theta, privacy="distributional").fit(school)
    assert prop.plan(school).sensitivity == pytest.approx(w / n)


@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
def test_approximate_wasserstein_is_never_above_the_exact(school):
    theta = tall_theta()
    kw = dict(query=skattr.Query.count("height", lambda h: h > 66), secret=SECRET,
              theta=theta, privacy="distributional")
    exact = WassersteinMechanism(**kw).fit(school).plan(school).sensitivity
    approx = ApproximateWassersteinMechanism(delta=0.05, **kw).fit(school)
    assert 0 < approx.plan(school).sensitivity <= exact


def test_release_records_the_network_assumption(school):
    mech = WassersteinMechanism(
        query=skattr.Query.count("height", lambda h: h > 66), secret=SECRET,
        theta=tall_theta(), privacy="distributional", random_state=0).fit(school)
    release = mech.release(school)
    assert release.assumed == (
        Assumption.of("network.counted", reads=("height",)),)
    assert "Bayesian network" in release.summary()


@pytest.mark.parametrize(("kw", "match"), [
    (dict(privacy="dataset"), "privacy='distributional'"),
    (dict(query=skattr.Query.mean("height")), "one count or proportion"),
    (dict(secret=skattr.Secret.mean("nowhere", pairs=[(0, 1)])),
     "governed by no node"),
])
def test_refusals_at_fit(kw, match):
    frame = make_schools(1, 30, random_state=0).assign(nowhere=0.0)
    params = dict(query=skattr.Query.count("height", lambda h: h > 66),
                  secret=SECRET, theta=tall_theta(), privacy="distributional")
    params.update(kw)
    with pytest.raises(InvalidParameterError, match=match):
        WassersteinMechanism(**params).fit(frame)


def test_off_grid_pair_is_refused_before_noise(school):
    mech = WassersteinMechanism(
        query=skattr.Query.count("height", lambda h: h > 66),
        secret=skattr.Secret.mean("income", pairs=[(40_000, 50_000)]),
        theta=tall_theta(), privacy="distributional").fit(school)
    with pytest.raises(NotCertifiableError, match="not on the grid"):
        mech.release(school)


def test_zero_probability_value_is_refused():
    net = ParameterNetwork(parents={"a": [], "b": ["a"]},
                           grids={"a": [0, 1], "b": [0, 1]},
                           cpts={"a": [1.0, 0.0], "b": [[0.5, 0.5], [0.5, 0.5]]})
    theta = NetworkTheta(net, reads="b", counted=[0.1, 0.9])
    with pytest.raises(NotCertifiableError, match="probability zero"):
        theta.count_laws("a", 1, 3)


@pytest.mark.parametrize(("kw", "match"), [
    (dict(reads="nope", counted=[0.5, 0.5, 0.5]), "not a node"),
    (dict(reads="height", counted=[0.5, 0.5]), "shape"),
    (dict(reads="height", counted=[0.5, 1.5, 0.5]), r"outside \[0, 1\]"),
    (dict(reads=["height", "height"], counted=[0.5] * 3), "distinct"),
    (dict(reads="height", counted="abc"), "probabilities"),
])
def test_bad_construction(kw, match):
    with pytest.raises(InvalidParameterError, match=match):
        NetworkTheta(schools_network(), **kw)


def test_not_a_network():
    with pytest.raises(InvalidParameterError, match="ParameterNetwork"):
        NetworkTheta({"a": 1}, reads="a", counted=[0.5])


def test_caller_arrays_are_not_mutated():
    counted = np.array([0.1, 0.5, 0.9])
    theta = NetworkTheta(schools_network(), reads="height", counted=counted)
    counted[0] = 0.7
    assert theta.counted[0] == 0.1
    frame = pd.DataFrame({"height": [60.0, 70.0, 64.0, 67.5, 66.0, 71.0]})
    before = frame.copy()
    WassersteinMechanism(
        query=skattr.Query.count("height", lambda h: h > 66), secret=SECRET,
        theta=theta, privacy="distributional", random_state=0,
    ).fit(frame).release(frame)
    pd.testing.assert_frame_equal(frame, before)


def test_the_quilts_noise_free_count_is_within_epsilon_by_its_exact_law(school):
    # Example 1's count of tall students is released with no noise; its
    # exact law given income (a mixture of binomials, brute force) must move
    # by at most the certified epsilon, and indeed by at most e(height | income).
    theta = tall_theta()
    net = theta.network
    n = len(school)
    mech = skattr.mechanisms.AttributePrivateMarkovQuilt(
        query=skattr.Query.count("height", lambda h: h > 66), secret=SECRET,
        network=net, epsilon=1.0).fit(school)
    assert mech.plan(school).noise_scale == 0.0
    laws = [brute_count_law(net, "income", i, ("height",), theta.counted, n)
            for i in range(3)]
    loss = max(float(np.max(np.abs(np.log(a / b))))
               for a in laws for b in laws)
    assert loss <= net.max_influence(["height"], "income") <= 1.0


def test_accessor_takes_a_network_theta_without_reference(school):
    theta = tall_theta()
    release = school.attrpriv.count(
        "height", lambda h: h > 66, secret=SECRET, mechanism="wasserstein",
        privacy="distributional", theta=theta, random_state=0)
    mech = WassersteinMechanism(
        query=skattr.Query.count("height", lambda h: h > 66), secret=SECRET,
        theta=theta, privacy="distributional", random_state=0).fit(school)
    assert release.noise_scale == mech.plan(school).noise_scale > 0
    assert release.values.iloc[0] == mech.release(school).values.iloc[0]
    # Any other Theta still needs reference data.
    with pytest.raises(InvalidParameterError, match="reference="):
        school.attrpriv.count("height", lambda h: h > 66, secret=SECRET,
                              mechanism="wasserstein", privacy="distributional")

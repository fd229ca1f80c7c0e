"""The Markov quilt mechanisms against their formulas, and Zhang et al.'s Example 1."""

import math

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.bayes import ParameterNetwork
from skattr.datasets import make_schools, schools_network
from skattr.exceptions import (
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.mechanisms import AttributePrivateMarkovQuilt, MarkovQuiltMechanism
from skattr.mechanisms._markov_quilt import chain_quilt_scales

SECRET = skattr.Secret.mean("income", pairs=[(40_000, 80_000)])
BOUNDS = {"height": (50.0, 80.0), "sat": (400.0, 1600.0), "weight": (80.0, 250.0),
          "income": (0.0, 200_000.0)}


@pytest.fixture(scope="module")
def schools():
    return make_schools(1, 200, random_state=0)


def _brute_scale(net, node, column_nodes, per_stat, epsilon):
    """Algorithm 2's scale from every quilt of the definition (maximal=False)."""
    def delta(near):
        return sum(d for d, nodes in zip(per_stat, column_nodes, strict=True)
                   if nodes & near)
    best = delta(frozenset(net.nodes)) / epsilon
    for quilt in net.markov_quilts(node, maximal=False):
        e = net.max_influence(quilt.quilt, node)
        if e < epsilon:
            best = min(best, delta(quilt.nearby) / (epsilon - e))
    return best


@pytest.mark.parametrize("epsilon", [0.2, 0.5, 1.0, 1.6, 3.0])
@pytest.mark.parametrize("columns", [["height"], ["sat"], ["height", "sat"],
                                     ["weight", "sat", "height"]])
def test_noise_is_algorithm_2_over_every_quilt(schools, epsilon, columns):
    net = schools_network()
    mech = AttributePrivateMarkovQuilt(
        query=skattr.Query.mean(columns), secret=SECRET, network=net,
        epsilon=epsilon, bounds=BOUNDS).fit(schools)
    per_stat = [BOUNDS[c][1] - BOUNDS[c][0] for c in columns]
    expected = _brute_scale(net, "income", [frozenset([c]) for c in columns],
                            per_stat, epsilon)
    plan = mech.plan(schools)
    assert plan.noise_scale == pytest.approx(expected, rel=1e-7)
    assert plan.delta == 0.0 and plan.epsilon == epsilon
    assert plan.noise_law.kind == "laplace"
    # Theorem 4's accuracy, two-sided: P(|Lap(b)| > b log(1/beta)) = beta.
    if len(columns) == 1 and expected > 0:
        assert plan.noise_law.alpha(0.05) == pytest.approx(
            expected * math.log(20), rel=1e-9)


def test_example_1_height_needs_no_noise(schools):
    # Zhang et al., Example 1: Q = {gender} leaves height remote, so the count
    # of students taller than 66 inches is released without noise.
    net = schools_network()
    quilt = next(q for q in net.markov_quilts("income")
                 if q.quilt == frozenset({"gender"}))
    assert quilt.nearby == {"income", "sat"} and quilt.remote == {"height",
                                                                  "weight"}
    e_gender = net.max_influence(["gender"], "income")
    assert 0 < e_gender < 1
    mech = AttributePrivateMarkovQuilt(
        query=skattr.Query.count("height", lambda h: h > 66), secret=SECRET,
        network=net, epsilon=1.0, random_state=0).fit(schools)
    rel = mech.release(schools)
    assert rel.noise_scale == 0.0
    assert rel.values.iloc[0] == (schools["height"] > 66).sum()
    choice = mech.quilt_choices(len(schools))["income"]
    assert choice.near_targets == frozenset() and choice.influence < 1.0


def test_example_1_sat_adds_the_quilts_noise(schools):
    # Adding SAT > 1300 to the predicate: A = {h, s}, A and N = {s} for the
    # same quilt, scale Delta_s F / (epsilon - e(X_gender | X_income)) with
    # Delta_s F = n for a count. Algorithm 2 keeps the trivial Delta_A F /
    # epsilon when it is smaller.
    net = schools_network()
    df = schools.assign(tall_high_sat=((schools["height"] > 66)
                                       & (schools["sat"] > 1300)).astype(int))
    n = len(df)
    e_gender = net.max_influence(["gender"], "income")
    for epsilon in (1.0, 2.0, 4.0):
        mech = AttributePrivateMarkovQuilt(
            query=skattr.Query.count("tall_high_sat"), secret=SECRET,
            network=net, epsilon=epsilon,
            reads={"tall_high_sat": ["height", "sat"]}).fit(df)
        quilt_scale = n / (epsilon - e_gender)
        expected = _brute_scale(net, "income", [frozenset({"height", "sat"})],
                                [n], epsilon)
        assert expected <= min(quilt_scale, n / epsilon) + 1e-9
        assert mech.plan(df).noise_scale == pytest.approx(expected, rel=1e-9)


def test_a_set_of_networks_takes_the_worst_case(schools):
    net = schools_network()
    flat = {v: np.asarray(t) for v, t in net.members[0].items()}
    flat["gender"] = np.full((3, 3), 1 / 3)      # gender independent of income
    both = ParameterNetwork(parents=net.parents, grids=net.grids,
                            cpts=[net.members[0], flat])
    only_flat = ParameterNetwork(parents=net.parents, grids=net.grids, cpts=flat)
    q = skattr.Query.mean(["height", "sat"])
    scales = {}
    for name, network in (("fig1", net), ("flat", only_flat), ("both", both)):
        scales[name] = AttributePrivateMarkovQuilt(
            query=q, secret=SECRET, network=network, epsilon=0.6,
            bounds=BOUNDS).fit(schools).plan(schools).noise_scale
    assert scales["both"] >= max(scales["fig1"], scales["flat"]) - 1e-9
    assert scales["flat"] < scales["fig1"]


def test_errors_say_what_to_do(schools):
    q = skattr.Query.count("height", lambda h: h > 66)
    with pytest.raises(InvalidParameterError, match="needs network="):
        AttributePrivateMarkovQuilt(query=q, secret=SECRET).fit(schools)
    other = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    net = ParameterNetwork(parents={}, grids={"height": [60, 70]},
                           cpts={"height": [0.5, 0.5]})
    with pytest.raises(InvalidParameterError, match="governed by no node"):
        AttributePrivateMarkovQuilt(query=q, secret=other, network=net).fit(schools)
    with pytest.raises(InvalidParameterError, match="not nodes of the network"):
        AttributePrivateMarkovQuilt(
            query=q, secret=SECRET, network=schools_network(),
            reads={"height": ["shoe"]}).fit(schools)
    mech = AttributePrivateMarkovQuilt(
        query=skattr.Query.mean("height"), secret=SECRET,
        network=schools_network(), bounds={"height": (60, 70)}).fit(schools)
    # Heights outside the declared bounds are clipped to them, not refused.
    assert mech.release(schools).clipping.as_dict() == {"height": (60.0, 70.0)}
    with pytest.raises(InvalidParameterError, match="need declared bounds"):
        AttributePrivateMarkovQuilt(query=skattr.Query.mean("height"),
                                    secret=SECRET,
                                    network=schools_network()).fit(schools)


def test_unmodelled_columns_are_always_noised(schools):
    df = schools.assign(extra=1.0)
    mech = AttributePrivateMarkovQuilt(
        query=skattr.Query.mean(["extra"]), secret=SECRET,
        network=schools_network(), bounds={"extra": (0.0, 2.0)},
        epsilon=1.0).fit(df)
    assert mech.plan(df).noise_scale == pytest.approx(2.0)


def test_releases_never_mutate_and_follow_the_seed(schools):
    before = schools.copy()
    kwargs = dict(query=skattr.Query.mean(["sat"]), secret=SECRET,
                  network=schools_network(), bounds=BOUNDS, epsilon=0.5,
                  random_state=3)
    a = AttributePrivateMarkovQuilt(**kwargs).fit(schools).release(schools)
    b = AttributePrivateMarkovQuilt(**kwargs).fit(schools).release(schools)
    pd.testing.assert_frame_equal(schools, before)
    assert a.values.equals(b.values) and a.noise_scale > 0


@pytest.mark.slow
def test_accessor_and_auto(schools):
    net = schools_network()
    rel = schools.attrpriv.count("height", lambda h: h > 66, secret=SECRET,
                                 mechanism="markov-quilt", network=net)
    assert rel.mechanism == "markov-quilt" and rel.noise_scale == 0.0
    reference = make_schools(1, 2000, random_state=1)
    auto = schools.attrpriv.plan("height", statistic="count",
                                 value=lambda h: h > 66, secret=SECRET,
                                 reference=reference, network=net)
    assert auto.mechanism == "markov-quilt"
    # Without a network, auto does not consider it.
    plain = schools.attrpriv.plan(
        ["height"], reference=reference, law="gaussian",
        secret=skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)]))
    assert plain.mechanism != "markov-quilt"


def _brute_chain_scale(chain, epsilon):
    T = len(chain.nodes)
    worst = 0.0
    for i in chain.nodes:
        best = T / epsilon
        for quilt in chain.markov_quilts(i):
            e = chain.max_influence(quilt.quilt, i)
            if e < epsilon:
                best = min(best, len(quilt.nearby) / (epsilon - e))
        worst = max(worst, best)
    return worst


@pytest.mark.parametrize("transition", [[[0.9, 0.1], [0.1, 0.9]],
                                        [[0.7, 0.2, 0.1], [0.2, 0.6, 0.2],
                                         [0.1, 0.3, 0.6]]])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_swc_chain_search_matches_every_quilt(transition, epsilon):
    k = len(transition)
    chain = ParameterNetwork.markov_chain(np.full(k, 1 / k), transition, 7)
    fast = chain_quilt_scales(chain, epsilon).max()
    assert fast == pytest.approx(_brute_chain_scale(chain, epsilon), rel=1e-9)


def test_swc_mechanism_noise_is_lipschitz_times_b_max():
    transition = [[0.8, 0.2], [0.3, 0.7]]
    states = pd.DataFrame({"active": np.tile([0, 1], 4)})
    mech = MarkovQuiltMechanism(query=skattr.Query.count("active", 1),
                                transition=transition, epsilon=1.0).fit(states)
    chain = ParameterNetwork.markov_chain([0.5, 0.5], transition, 8)
    assert mech.plan(states).noise_scale == pytest.approx(
        _brute_chain_scale(chain, 1.0), rel=1e-9)          # L = 1 for a count
    # A general network (not a chain) goes through the quilt enumeration.
    net = schools_network()
    rows = pd.DataFrame({"v": [1.0, 2.0, 0.0, 1.0, 2.0]})
    general = MarkovQuiltMechanism(query=skattr.Query.sum("v"), network=net,
                                   bounds=(0.0, 2.0), epsilon=2.0).fit(rows)
    expected = 0.0
    for node in net.nodes:
        best = 5 / 2.0
        for quilt in net.markov_quilts(node):
            e = net.max_influence(quilt.quilt, node)
            if e < 2.0:
                best = min(best, len(quilt.nearby) / (2.0 - e))
        expected = max(expected, best)
    assert general.plan(rows).noise_scale == pytest.approx(2.0 * expected)
    with pytest.raises(NotCertifiableError, match="5 entries"):
        general.plan(n=4)
    with pytest.raises(InvalidParameterError, match="either network="):
        MarkovQuiltMechanism(query=skattr.Query.sum("v"), bounds=(0, 2)).fit(rows)


def test_schools_example_runs(capsys):
    import pathlib
    import runpy
    path = pathlib.Path(__file__).parents[2] / "examples" / "schools.py"
    found = runpy.run_path(str(path))["main"](show=False)
    out = capsys.readouterr().out
    assert "count(height > 66) = " in out and "noise scale 0," in out
    assert "R = ['height', 'weight']" in out
    # The comparison, both certified under the same Theta: the quilt needs no
    # noise on the remote count, the Wasserstein Mechanism W = 35; on the
    # predicate near income, the quilt's n / epsilon = 200 against W = 42.
    table = found["comparison"].set_index("release")
    assert table["Markov quilt scale"].tolist() == [0.0, 200.0]
    assert table["Wasserstein scale"].tolist() == [35.0, 42.0]
    assert "The same releases, same Theta" in out

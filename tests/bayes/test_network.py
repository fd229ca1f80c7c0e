import itertools
import math

import numpy as np
import pytest

from skattr.bayes import MarkovQuilt, ParameterNetwork
from skattr.exceptions import InvalidParameterError

# Brute-force helpers (independent of skattr.bayes) -------------------------


def subsets(items):
    items = list(items)
    for k in range(len(items) + 1):
        for combo in itertools.combinations(items, k):
            yield frozenset(combo)


def random_cpts(rng, parents, sizes, alpha=0.8):
    return {v: rng.dirichlet(np.full(sizes[v], alpha),
                             size=tuple(sizes[p] for p in parents[v]))
            for v in parents}


def random_grids(rng, sizes):
    return {v: np.sort(rng.choice(100, size=k, replace=False)) / 10.0
            for v, k in sizes.items()}


def random_sizes(rng, names, low=2, high=4):
    return {v: int(rng.integers(low, high + 1)) for v in names}


def shuffled_names(rng, n):
    # names[i] is the node at topological position i; labels are shuffled so
    # that the label order is not a topological order.
    return [f"v{i}" for i in rng.permutation(n)]


def random_dag(rng, n, max_parents=3):
    names = shuffled_names(rng, n)
    parents = {}
    for i, v in enumerate(names):
        k = int(rng.integers(0, min(max_parents, i) + 1))
        parents[v] = [names[j] for j in rng.choice(i, size=k, replace=False)]
    return names, parents


def random_forest(rng, n):
    names = shuffled_names(rng, n)
    parents = {names[0]: []}
    for i in range(1, n):
        parents[names[i]] = ([] if rng.random() < 0.2
                             else [names[int(rng.integers(i))]])
    return names, parents


def chain(names):
    return {v: ([names[i - 1]] if i else []) for i, v in enumerate(names)}


def build(rng, names, parents, members=1, low=2, high=4, alpha=0.8):
    sizes = random_sizes(rng, names, low, high)
    tables = [random_cpts(rng, parents, sizes, alpha) for _ in range(members)]
    net = ParameterNetwork(parents=parents, grids=random_grids(rng, sizes),
                           cpts=tables[0] if members == 1 else tables)
    fulls = [brute_full_joint(names, parents, sizes, t) for t in tables]
    return net, fulls


def brute_full_joint(order, parents, sizes, cpts):
    # P(x) = prod_v cpt_v[x_parents(v), x_v], at every full assignment x.
    shape = tuple(sizes[v] for v in order)
    index = np.indices(shape)
    pos = {v: i for i, v in enumerate(order)}
    out = np.ones(shape)
    for v in order:
        table = np.asarray(cpts[v], dtype=np.float64)
        out = out * table[tuple(index[pos[u]] for u in (*parents[v], v))]
    return out


def brute_marginal(full, order, nodes):
    keep = [order.index(v) for v in nodes]
    drop = tuple(i for i in range(len(order)) if i not in keep)
    table = full.sum(axis=drop) if drop else full
    remaining = sorted(keep)
    return np.transpose(table, [remaining.index(i) for i in keep])


def brute_influence(fulls, order, targets, source):
    targets = list(dict.fromkeys(targets))
    if not targets:
        return 0.0
    rest = [t for t in targets if t != source]
    worst = 0.0
    for full in fulls:
        table = brute_marginal(full, order, [source, *rest])
        ks = table.shape[0]
        table = table.reshape(ks, -1)
        conditionals = {}
        for a in range(ks):
            pa = table[a].sum()
            if pa <= 0:
                continue
            cond = table[a] / pa
            if source in targets:
                # the target configuration also fixes the source's own value
                widened = np.zeros((ks, cond.size))
                widened[a] = cond
                cond = widened.ravel()
            conditionals[a] = cond
        for a, b in itertools.permutations(conditionals, 2):
            pa, pb = conditionals[a], conditionals[b]
            possible = pa > 0
            if np.any(possible & (pb <= 0)):
                return math.inf
            worst = max(worst, float(np.max(np.log(pa[possible] / pb[possible]))))
    return worst


def d_separated(parents, xs, ys, zs):
    # Moral ancestral graph criterion, with a plain BFS.
    xs, ys, zs = set(xs), set(ys), set(zs)
    ancestral, stack = set(), list(xs | ys | zs)
    while stack:
        v = stack.pop()
        if v not in ancestral:
            ancestral.add(v)
            stack.extend(parents[v])
    adjacent = {v: set() for v in ancestral}
    for v in ancestral:
        ps = list(parents[v])
        for p in ps:
            adjacent[v].add(p)
            adjacent[p].add(v)
        for p, q in itertools.combinations(ps, 2):
            adjacent[p].add(q)
            adjacent[q].add(p)
    seen = set(xs - zs)
    frontier = list(seen)
    while frontier:
        v = frontier.pop()
        for w in adjacent[v]:
            if w not in seen and w not in zs:
                seen.add(w)
                frontier.append(w)
    return not (seen & ys)


def assert_influence(code, brute):
    if math.isinf(brute):
        assert code == math.inf
    else:
        assert math.isfinite(code)
        assert code >= brute * (1 - 1e-12) - 1e-12, (code, brute)
        assert code <= brute * (1 + 1e-6) + 1e-12, (code, brute)


# 1. joint --------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_joint_matches_brute_force_on_random_dags(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    names, parents = random_dag(rng, n)
    net, (full,) = build(rng, names, parents)
    assert np.isclose(full.sum(), 1.0)
    queries = [names, list(reversed(names))]
    queries += [[v] for v in names]
    for _ in range(6):
        k = int(rng.integers(1, n + 1))
        queries.append([names[i] for i in rng.choice(n, size=k, replace=False)])
    for query in queries:
        got = net.joint(query)
        want = brute_marginal(full, names, query)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)


def test_joint_matches_brute_force_on_literal_enumeration():
    # The product of CPT entries, one full assignment at a time.
    rng = np.random.default_rng(11)
    names = ["c", "a", "b", "d"]
    parents = {"c": [], "a": ["c"], "b": ["c", "a"], "d": ["b", "a", "c"]}
    sizes = {"c": 2, "a": 3, "b": 2, "d": 3}
    cpts = random_cpts(rng, parents, sizes)
    net = ParameterNetwork(parents=parents, grids=random_grids(rng, sizes),
                           cpts=cpts)
    want = np.zeros((sizes["d"], sizes["a"]))
    for x in itertools.product(*(range(sizes[v]) for v in names)):
        at = dict(zip(names, x, strict=True))
        p = 1.0
        for v in names:
            p *= cpts[v][tuple(at[u] for u in (*parents[v], v))]
        want[at["d"], at["a"]] += p
    np.testing.assert_allclose(net.joint(["d", "a"]), want, rtol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_joint_of_each_member_of_a_set(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 6))
    names, parents = random_dag(rng, n)
    net, fulls = build(rng, names, parents, members=3)
    assert len(net.members) == 3
    query = [names[i] for i in rng.permutation(n)[:3]]
    for k, full in enumerate(fulls):
        np.testing.assert_allclose(net.joint(query, member=k),
                                   brute_marginal(full, names, query),
                                   rtol=1e-10, atol=1e-15)
    assert not np.allclose(net.joint(query, member=0), net.joint(query, member=1))


# 2. max_influence ------------------------------------------------------------


def structure(kind, rng):
    if kind == "chain":
        names = shuffled_names(rng, int(rng.integers(3, 6)))
        return names, chain(names)
    if kind == "fork":
        names = shuffled_names(rng, int(rng.integers(3, 6)))
        return names, {v: ([names[0]] if i else []) for i, v in enumerate(names)}
    if kind == "v":
        names = ["a", "b", "c"]
        return names, {"a": [], "b": [], "c": ["a", "b"]}
    return random_dag(rng, int(rng.integers(3, 6)))


@pytest.mark.parametrize("kind", ["chain", "fork", "v", "dag"])
@pytest.mark.parametrize("seed", range(4))
def test_max_influence_matches_brute_force(kind, seed):
    rng = np.random.default_rng(200 + seed)
    names, parents = structure(kind, rng)
    net, fulls = build(rng, names, parents)
    for source in names:
        others = [v for v in names if v != source]
        target_sets = [[v] for v in others] + [others]
        for _ in range(3):
            k = int(rng.integers(1, len(others) + 1))
            target_sets.append([others[i] for i in
                                rng.choice(len(others), size=k, replace=False)])
        for targets in target_sets:
            assert_influence(net.max_influence(targets, source),
                             brute_influence(fulls, names, targets, source))


def test_max_influence_v_structure_parents():
    rng = np.random.default_rng(3)
    for _ in range(5):
        names = ["a", "b", "c"]
        net, fulls = build(rng, names, {"a": [], "b": [], "c": ["a", "b"]})
        assert net.max_influence(["b"], "a") <= 1e-12
        assert net.max_influence(["a"], "b") <= 1e-12
        assert abs(brute_influence(fulls, names, ["b"], "a")) <= 1e-12
        on_c = net.max_influence(["c"], "a")
        assert on_c > 0
        assert_influence(on_c, brute_influence(fulls, names, ["c"], "a"))
        assert net.max_influence(["b", "c"], "a") >= on_c


def test_max_influence_chain_data_processing():
    rng = np.random.default_rng(4)
    for _ in range(10):
        names = ["a", "b", "c"]
        net, _ = build(rng, names, chain(names))
        assert net.max_influence(["c"], "a") <= net.max_influence(["b"], "a")
        # given b, c adds nothing about a
        assert net.max_influence(["b", "c"], "a") == pytest.approx(
            net.max_influence(["b"], "a"), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_max_influence_is_monotone(seed):
    rng = np.random.default_rng(300 + seed)
    names, parents = random_dag(rng, 5)
    net, fulls = build(rng, names, parents)
    for source in names:
        others = [v for v in names if v != source]
        for q in subsets(others):
            e_q = net.max_influence(q, source)
            for v in others:
                if v not in q:
                    bigger = net.max_influence(q | {v}, source)
                    assert bigger >= e_q * (1 - 1e-12) - 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_max_influence_of_a_set_is_max_of_members(seed):
    rng = np.random.default_rng(400 + seed)
    names, parents = random_dag(rng, 4)
    sizes = random_sizes(rng, names)
    grids = random_grids(rng, sizes)
    first, second = (random_cpts(rng, parents, sizes) for _ in range(2))
    both = ParameterNetwork(parents=parents, grids=grids, cpts=[first, second])
    one = ParameterNetwork(parents=parents, grids=grids, cpts=first)
    two = ParameterNetwork(parents=parents, grids=grids, cpts=second)
    fulls = [brute_full_joint(names, parents, sizes, t) for t in (first, second)]
    for source in names:
        for targets in subsets(v for v in names if v != source):
            got = both.max_influence(targets, source)
            assert got == max(one.max_influence(targets, source),
                              two.max_influence(targets, source))
            assert_influence(got, brute_influence(fulls, names, targets, source))


def test_max_influence_infinite_when_a_value_is_impossible_under_one_source_value():
    net = ParameterNetwork(
        parents={"a": [], "b": ["a"], "c": ["b"]},
        grids={"a": [0, 1], "b": [0, 1, 2], "c": [0, 1]},
        cpts={"a": [0.4, 0.6],
              "b": [[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]],
              "c": [[0.9, 0.1], [0.4, 0.6], [0.3, 0.7]]})
    assert net.max_influence(["b"], "a") == math.inf
    assert net.max_influence(["c", "b"], "a") == math.inf
    # c is still positive everywhere: finite
    assert math.isfinite(net.max_influence(["c"], "a"))
    # in a set of networks one member with the impossible value is enough
    fine = {"a": [0.4, 0.6], "b": [[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]],
            "c": [[0.9, 0.1], [0.4, 0.6], [0.3, 0.7]]}
    theta = ParameterNetwork(parents=net.parents, grids=net.grids,
                             cpts=[fine, dict(net.members[0])])
    assert theta.max_influence(["b"], "a") == math.inf
    # the other way round (b's value 2 impossible given a=0): also infinite
    assert net.max_influence(["a"], "b") == math.inf


def test_max_influence_ignores_source_values_of_probability_zero():
    net = ParameterNetwork(
        parents={"a": [], "b": ["a"]},
        grids={"a": [0, 1, 2], "b": [0, 1]},
        cpts={"a": [0.5, 0.5, 0.0], "b": [[0.6, 0.4], [0.3, 0.7], [1.0, 0.0]]})
    assert_influence(net.max_influence(["b"], "a"), math.log(2.0))
    # a zero-probability ancestor value must not leak through marginalisation
    net2 = ParameterNetwork(
        parents={"r": [], "a": ["r"], "b": ["a"]},
        grids={"r": [0, 1], "a": [0, 1, 2], "b": [0, 1]},
        cpts={"r": [1.0, 0.0], "a": [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]],
              "b": [[0.6, 0.4], [0.3, 0.7], [1.0, 0.0]]})
    assert_influence(net2.max_influence(["b"], "a"), math.log(2.0))
    assert net2.max_influence(["a"], "r") == 0.0


def test_max_influence_empty_targets_is_zero():
    rng = np.random.default_rng(5)
    names, parents = random_dag(rng, 4)
    net, _ = build(rng, names, parents)
    for v in names:
        assert net.max_influence([], v) == 0.0
        assert net.max_influence(frozenset(), v) == 0.0


def test_max_influence_of_source_on_itself():
    rng = np.random.default_rng(6)
    names, parents = random_dag(rng, 4)
    net, fulls = build(rng, names, parents)
    for v in names:
        assert net.max_influence([v], v) == math.inf
        assert brute_influence(fulls, names, [v], v) == math.inf


def test_max_influence_of_degenerate_source_on_itself():
    net = ParameterNetwork(parents={"s": [], "t": ["s"]},
                           grids={"s": [0, 1], "t": [0, 1]},
                           cpts={"s": [1.0, 0.0], "t": [[0.5, 0.5], [0.2, 0.8]]})
    sizes = {"s": 2, "t": 2}
    full = brute_full_joint(["s", "t"], net.parents, sizes, net.members[0])
    assert brute_influence([full], ["s", "t"], ["s"], "s") == 0.0
    assert net.max_influence(["t"], "s") == 0.0
    assert net.max_influence(["s"], "s") == 0.0


# 3. Markov quilts ------------------------------------------------------------


def brute_quilts(names, parents, node, max_size=None):
    others = [v for v in names if v != node]
    everything = frozenset(names)
    out = set()
    for q in subsets(others):
        if max_size is not None and len(q) > max_size:
            continue
        for r in subsets(v for v in others if v not in q):
            if d_separated(parents, {node}, r, q):
                out.add((q, everything - q - r, r))
    return out


def triples(quilts):
    return [(mq.quilt, mq.nearby, mq.remote) for mq in quilts]


def check_quilts(net, names, parents, node, max_size=None):
    every = brute_quilts(names, parents, node, max_size)
    got = list(net.markov_quilts(node, maximal=False, max_size=max_size))
    assert all(isinstance(mq, MarkovQuilt) and mq.node == node for mq in got)
    assert len(got) == len(set(triples(got)))
    assert set(triples(got)) == every
    assert got[0].quilt == frozenset()
    sizes = [len(mq.quilt) for mq in got]
    assert sizes == sorted(sizes)

    largest = {}
    for q, _, r in every:
        if q not in largest or len(r) > len(largest[q]):
            largest[q] = r
    for q, _, r in every:  # the largest R holds every other R of that Q
        assert r <= largest[q]
    maximal = list(net.markov_quilts(node, max_size=max_size))
    assert len(maximal) == len(largest)
    assert {mq.quilt: mq.remote for mq in maximal} == largest
    for mq in maximal:
        assert mq.nearby == frozenset(names) - mq.quilt - mq.remote
        assert node in mq.nearby
    assert maximal[0].quilt == frozenset()
    sizes = [len(mq.quilt) for mq in maximal]
    assert sizes == sorted(sizes)
    if max_size is not None:
        assert max(sizes) <= max_size


@pytest.mark.parametrize("seed", range(6))
def test_markov_quilts_match_brute_force(seed):
    rng = np.random.default_rng(500 + seed)
    names, parents = random_dag(rng, int(rng.integers(4, 7)))
    net, _ = build(rng, names, parents, low=2, high=2)
    for node in names:
        for max_size in (None, 0, 1, 2):
            check_quilts(net, names, parents, node, max_size)


def test_markov_quilts_v_structure():
    names = ["a", "b", "c"]
    parents = {"a": [], "b": [], "c": ["a", "b"]}
    net, _ = build(np.random.default_rng(7), names, parents)
    assert not net.is_tree
    quilts = {mq.quilt: mq.remote for mq in net.markov_quilts("a")}
    assert quilts[frozenset()] == {"b"}
    assert quilts[frozenset({"c"})] == frozenset()  # conditioning on c opens a-b
    assert quilts[frozenset({"b"})] == frozenset()  # a -> c stays
    check_quilts(net, names, parents, "a")


@pytest.mark.parametrize("seed", range(4))
def test_markov_quilts_on_forests(seed):
    rng = np.random.default_rng(600 + seed)
    names, parents = random_forest(rng, int(rng.integers(4, 7)))
    net, _ = build(rng, names, parents, low=2, high=2)
    assert net.is_tree
    for node in names:
        check_quilts(net, names, parents, node)


def test_is_tree():
    rng = np.random.default_rng(8)
    names = ["a", "b", "c", "d", "e"]
    forest = {"a": [], "b": ["a"], "c": ["a"], "d": ["c"], "e": []}
    assert build(rng, names, forest)[0].is_tree
    assert build(rng, ["x"], {"x": []})[0].is_tree
    vee = {"a": [], "b": [], "c": ["a", "b"], "d": [], "e": ["d"]}
    assert not build(rng, names, vee)[0].is_tree
    diamond = {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"], "e": []}
    assert not build(rng, names, diamond)[0].is_tree


# 4. least_influence_covers ---------------------------------------------------


def brute_covers(fulls, names, parents, node, targets):
    # every quilt Q of node: (Q, S(Q), e(Q)), with R(Q) the maximal remote set
    rows = []
    for q in subsets(v for v in names if v != node):
        near = frozenset(t for t in targets if t not in q
                         and not d_separated(parents, {node}, {t}, q))
        rows.append((q, near, brute_influence(fulls, names, q, node)))
    return rows


def least_by_near(rows, epsilon, max_size=None):
    least = {}
    for q, near, e in rows:
        if e < epsilon and (max_size is None or len(q) <= max_size):
            if near not in least or e < least[near]:
                least[near] = e
    return least


def check_covers(net, fulls, names, parents, node, targets, rows, epsilon,
                 max_size=None):
    got = net.least_influence_covers(node, targets, epsilon=epsilon,
                                     max_size=max_size)
    least = least_by_near(rows, epsilon, max_size)
    brute_e = {q: e for q, _, e in rows}
    # (c) every entry is a real quilt of node, with S and e as reported
    for near, (e, mq) in got.items():
        assert isinstance(mq, MarkovQuilt) and mq.node == node
        assert node in mq.nearby and node not in mq.quilt
        assert mq.quilt | mq.nearby | mq.remote == frozenset(names)
        assert not (mq.quilt & mq.nearby or mq.quilt & mq.remote
                    or mq.nearby & mq.remote)
        assert d_separated(parents, {node}, mq.remote, mq.quilt)
        assert near == (targets & mq.nearby)
        assert e < epsilon
        if max_size is not None:
            assert len(mq.quilt) <= max_size
        assert_influence(e, brute_e[mq.quilt])
    # (a) the entry leaving no target near
    assert (frozenset() in got) == (frozenset() in least)
    if frozenset() in least:
        assert_influence(got[frozenset()][0], least[frozenset()])
    # (b) every Pareto-minimal S (no S' strictly inside it does as well, and in
    # particular not S' = {}) is reported with its least influence
    for near, e in least.items():
        dominated = any(other < near and e_other <= e + 1e-9
                        for other, e_other in least.items())
        if not dominated:
            assert near in got, (near, e)
            assert_influence(got[near][0], e)
    # and every S the brute force finds is dominated by a reported entry
    for near, e in least.items():
        assert any(other <= near and got_e <= e * (1 + 1e-6) + 1e-12
                   for other, (got_e, _) in got.items()), (near, e)
    return got, least


def epsilons(rows):
    # thresholds halfway between influences that differ by more than float
    # noise (and the code's 1e-9 rounding up)
    values = []
    for e in sorted(e for _, _, e in rows if math.isfinite(e)):
        if not values or e > values[-1] * (1 + 1e-6) + 1e-9:
            values.append(e)
    eps = [math.inf, 0.0]
    if len(values) >= 3:
        eps.append((values[1] + values[2]) / 2)  # few quilts qualify
        mid = len(values) // 2
        eps.append((values[mid - 1] + values[mid]) / 2)
    return eps


def covers_cases(kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "dag":
        names, parents = random_dag(rng, int(rng.integers(4, 8)))
        net, fulls = build(rng, names, parents, high=3)
    else:
        n = int(rng.integers(6, 13))
        names, parents = random_forest(rng, n)
        net, fulls = build(rng, names, parents, high=3 if n <= 8 else 2)
    cases = []
    for node in rng.choice(names, size=3, replace=False):
        node = str(node)
        others = [v for v in names if v != node]
        k = int(rng.integers(1, min(4, len(others)) + 1))
        targets = frozenset(others[i] for i in
                            rng.choice(len(others), size=k, replace=False))
        rows = brute_covers(fulls, names, parents, node, targets)
        cases.append((node, targets, rows))
    return net, fulls, names, parents, cases


@pytest.mark.parametrize("seed", range(12))
def test_least_influence_covers_random_dags(seed):
    net, fulls, names, parents, cases = covers_cases("dag", 700 + seed)
    for node, targets, rows in cases:
        for epsilon in epsilons(rows):
            check_covers(net, fulls, names, parents, node, targets, rows, epsilon)
        check_covers(net, fulls, names, parents, node, targets, rows, math.inf,
                     max_size=1)


@pytest.mark.parametrize("seed", range(5))
def test_least_influence_covers_random_forests(seed):
    net, fulls, names, parents, cases = covers_cases("forest", 800 + seed)
    assert net.is_tree
    for node, targets, rows in cases:
        for epsilon in epsilons(rows):
            check_covers(net, fulls, names, parents, node, targets, rows, epsilon)
        check_covers(net, fulls, names, parents, node, targets, rows, math.inf,
                     max_size=2)


def test_least_influence_covers_no_targets():
    rng = np.random.default_rng(9)
    names, parents = random_dag(rng, 4)
    net, _ = build(rng, names, parents)
    got = net.least_influence_covers(names[0], [])
    assert list(got) == [frozenset()]
    assert got[frozenset()][0] == 0.0
    assert got[frozenset()][1].quilt == frozenset()
    assert net.least_influence_covers(names[0], [], epsilon=0.0) == {}


def test_least_influence_covers_collider_outside_the_ancestors():
    # a -> t2, a -> c <- t1: Q = {c} (not an ancestor of a or the targets)
    # leaves S = {t1, t2} near at small influence; S = {t2} does better.
    net = ParameterNetwork(
        parents={"a": [], "t1": [], "t2": ["a"], "c": ["a", "t1"]},
        grids={v: [0, 1] for v in ("a", "t1", "t2", "c")},
        cpts={"a": [0.5, 0.5], "t1": [0.5, 0.5],
              "t2": [[0.9, 0.1], [0.1, 0.9]],
              "c": [[[0.5, 0.5], [0.3, 0.7]], [[0.45, 0.55], [0.3, 0.7]]]})
    names = list(net.nodes)
    full = brute_full_joint(names, net.parents, net.sizes, net.members[0])
    targets = frozenset({"t1", "t2"})
    rows = brute_covers([full], names, net.parents, "a", targets)
    for epsilon in (math.inf, 1.0, 0.01):
        check_covers(net, [full], names, net.parents, "a", targets, rows, epsilon)
    got = net.least_influence_covers("a", targets)
    assert got[frozenset({"t2"})][0] == 0.0
    assert_influence(got[frozenset()][0], math.log(9.0))


def brute_min_cost(rows, epsilon, cost):
    return min((cost(near) / (epsilon - e) for _, near, e in rows if e < epsilon),
               default=math.inf)


@pytest.mark.parametrize("kind", ["dag", "forest"])
@pytest.mark.parametrize("seed", range(3))
def test_least_influence_covers_mechanism_cost(kind, seed):
    net, fulls, names, parents, cases = covers_cases(kind, 900 + seed)
    rng = np.random.default_rng(seed)
    weights = {v: float(rng.uniform(0.5, 2.0)) for v in names}
    costs = [len, lambda s: 1 + len(s), lambda s: 0.3 + sum(weights[v] for v in s)]
    for node, targets, rows in cases:
        for epsilon in epsilons(rows):
            if not math.isfinite(epsilon):
                continue
            got = net.least_influence_covers(node, targets, epsilon=epsilon)
            for cost in costs:
                want = brute_min_cost(rows, epsilon, cost)
                have = min((cost(s) / (epsilon - e) for s, (e, _) in got.items()),
                           default=math.inf)
                if math.isinf(want):
                    assert have == math.inf
                else:
                    assert have == pytest.approx(want, rel=1e-6, abs=1e-12)


# 5. Markov chain -------------------------------------------------------------


def test_markov_chain_two_states():
    rng = np.random.default_rng(10)
    for _ in range(5):
        initial = rng.dirichlet([1.0, 1.0])
        transition = rng.dirichlet([1.0, 1.0], size=2)
        net = ParameterNetwork.markov_chain(initial, transition, 4)
        assert net.nodes == (0, 1, 2, 3)
        assert net.parents == {0: (), 1: (0,), 2: (1,), 3: (2,)}

        def brute(t):
            return max(math.log(t[a, y] / t[b, y])
                       for a in range(2) for b in range(2) for y in range(2))

        assert_influence(net.max_influence([1], 0), brute(transition))
        assert_influence(net.max_influence([2], 0), brute(transition @ transition))
        assert_influence(net.variable_max_influence([3], 0),
                         brute(transition @ transition @ transition))
        np.testing.assert_allclose(net.joint([2]),
                                   initial @ transition @ transition, rtol=1e-12)


def test_markov_chain_states_and_length():
    net = ParameterNetwork.markov_chain([0.5, 0.5], [[0.9, 0.1], [0.2, 0.8]], 1,
                                        states=[3.0, 7.0])
    assert net.nodes == (0,)
    np.testing.assert_array_equal(net.grids[0], [3.0, 7.0])
    with pytest.raises(InvalidParameterError, match="length"):
        ParameterNetwork.markov_chain([0.5, 0.5], [[1, 0], [0, 1]], 0)
    with pytest.raises(InvalidParameterError, match="shape"):
        ParameterNetwork.markov_chain([0.5, 0.5], [[1, 0, 0]], 3)


# 6. Validation ---------------------------------------------------------------


GOOD_GRIDS = {"a": [0, 1], "b": [0, 1, 2]}
GOOD_CPTS = {"a": [0.5, 0.5], "b": [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]}


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(parents={"a": ["b"], "b": ["a"]}, grids=GOOD_GRIDS,
          cpts={"a": [[0.5, 0.5]] * 3, "b": [[0.2, 0.3, 0.5]] * 2}), "cycle"),
    (dict(parents={"b": ["a"]}, grids=GOOD_GRIDS,
          cpts={"a": [0.5, 0.5], "b": [0.2, 0.3, 0.5]}), "shape"),
    (dict(parents={"b": ["a"]}, grids=GOOD_GRIDS,
          cpts={"a": [0.5, 0.5], "b": [[0.2, 0.3, 0.4], [0.1, 0.1, 0.8]]}),
     "sum to one"),
    (dict(parents={"b": ["a"]}, grids=GOOD_GRIDS,
          cpts={"a": [1.2, -0.2], "b": GOOD_CPTS["b"]}), "negative"),
    (dict(parents={"b": ["a", "z"]}, grids=GOOD_GRIDS, cpts=GOOD_CPTS),
     "without a grid"),
    (dict(parents={"b": ["a"]}, grids={"a": [0, 0], "b": [0, 1, 2]},
          cpts=GOOD_CPTS), "repeats"),
    (dict(parents={"b": ["a"]}, grids=GOOD_GRIDS, cpts=[]), "empty"),
])
def test_invalid_networks(kwargs, fragment):
    with pytest.raises(InvalidParameterError, match=fragment) as info:
        ParameterNetwork(**kwargs)
    assert isinstance(info.value, ValueError)


def test_unknown_nodes():
    net = ParameterNetwork(parents={"b": ["a"]}, grids=GOOD_GRIDS, cpts=GOOD_CPTS)
    calls = [lambda: net.max_influence(["b"], "z"),
             lambda: net.max_influence(["z"], "a"),
             lambda: list(net.markov_quilts("z")),
             lambda: net.least_influence_covers("z", ["b"]),
             lambda: net.least_influence_covers("a", ["z"]),
             lambda: net.joint(["a", "z"])]
    for call in calls:
        with pytest.raises(InvalidParameterError, match="not a node"):
            call()

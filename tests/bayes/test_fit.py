"""fit_network: grouped estimates, grids, the Chow-Liu tree, CPTs and errors."""

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import mutual_info_score

from skattr.bayes._fit import _discretised, _mutual_information, fit_network
from skattr.exceptions import DataValidationError, InvalidParameterError

CHAIN = {"a": ("A", 1), "b": ("B", 1), "c": ("C", 1)}


def chain_data(seed=0, groups=400, size=100, flip=0.15):
    """Groups whose proportions follow a -> b -> c, each 0.2 or 0.8.

    b copies a's level except with probability ``flip``, c copies b's.
    """
    rng = np.random.default_rng(seed)
    a = rng.uniform(size=groups) < 0.5
    b = a ^ (rng.uniform(size=groups) < flip)
    c = b ^ (rng.uniform(size=groups) < flip)
    frame = {"school": np.repeat(np.arange(groups), size)}
    for name, level in zip("ABC", (a, b, c), strict=True):
        p = np.repeat(np.where(level, 0.8, 0.2), size)
        frame[name] = (rng.uniform(size=p.size) < p).astype(int)
    frame["score"] = rng.normal(500 + 100 * frame["A"], 20)
    return pd.DataFrame(frame)


def group_estimates(data, group, specs):
    """Per-group estimates by a plain loop over the groups, groups sorted."""
    out = {}
    for g in sorted(data[group].unique()):
        rows = data[data[group] == g]
        out[g] = {}
        for v, spec in specs.items():
            if isinstance(spec, tuple):
                column, value = spec
                mask = value(rows[column]) if callable(value) else rows[column] == value
                out[g][v] = float(np.mean(mask))
            else:
                out[g][v] = float(rows[spec].mean())
    return out


def nearest(x, grid):
    best = 0
    for j, g in enumerate(grid):
        if abs(x - g) < abs(x - grid[best]):
            best = j
    return best


def undirected_edges(net):
    return {frozenset(e) for e in net.graph.edges}


def test_chow_liu_recovers_the_chain():
    data = chain_data()
    net = fit_network(data, group="school", parameters=CHAIN, bins=2)
    assert undirected_edges(net) == {frozenset("ab"), frozenset("bc")}
    # Oriented away from the first node by default, or from root.
    assert net.parents == {"a": (), "b": ("a",), "c": ("b",)}
    net = fit_network(data, group="school", parameters=CHAIN, bins=2, root="c")
    assert net.parents == {"c": (), "b": ("c",), "a": ("b",)}
    assert net.columns == {"a": ("A",), "b": ("B",), "c": ("C",)}
    # Equal-count bins split at the median, not between the levels 0.2 / 0.8,
    # so a bin may mix them; it still holds one level mostly.
    low, high = net.grids["b"]
    assert 0.15 < low < 0.35 < 0.65 < high < 0.85


def test_mutual_information_matches_sklearn_and_the_tree_is_maximal():
    data = chain_data(seed=1)
    nodes, _, _, labels = _discretised(data, group="school", parameters=CHAIN,
                                       grids=None, bins=3)
    mi = {}
    for u, v in itertools.combinations(nodes, 2):
        mi[frozenset((u, v))] = mutual_info_score(labels[u], labels[v])
        assert _mutual_information(labels[u], labels[v]) == pytest.approx(
            mi[frozenset((u, v))], rel=1e-12, abs=1e-15)
    # Independent labels give (near) zero, never a negative number.
    rng = np.random.default_rng(2)
    x, y = rng.integers(0, 3, 5000), rng.integers(0, 4, 5000)
    assert 0 <= _mutual_information(x, y) == pytest.approx(mutual_info_score(x, y))
    # On three nodes the spanning trees are the three pairs of edges.
    net = fit_network(data, group="school", parameters=CHAIN, bins=3)
    trees = [set(t) for t in itertools.combinations(mi, 2)]
    best = max(trees, key=lambda t: sum(mi[e] for e in t))
    assert undirected_edges(net) == best


def test_cpts_are_smoothed_counts():
    data = chain_data(seed=3, groups=120, size=30)
    specs = {"a": ("A", 1), "b": ("B", lambda s: s > 0), "s": "score"}
    grids = {"a": [0.1, 0.5, 0.9], "b": [0.2, 0.8], "s": [520, 560, 600]}
    alpha = 0.5
    net = fit_network(data, group="school", parameters=specs, grids=grids,
                      structure={"s": ["a", "b"], "b": ["a"]}, alpha=alpha)
    est = group_estimates(data, "school", specs)
    idx = {g: {v: nearest(e[v], grids[v]) for v in specs} for g, e in est.items()}

    counts_a = np.zeros(3)
    counts_b = np.zeros((3, 2))
    counts_s = np.zeros((3, 2, 3))
    for i in idx.values():
        counts_a[i["a"]] += 1
        counts_b[i["a"], i["b"]] += 1
        counts_s[i["a"], i["b"], i["s"]] += 1
    for node, counts in (("a", counts_a), ("b", counts_b), ("s", counts_s)):
        expected = np.empty_like(counts)
        for row in np.ndindex(counts.shape[:-1]):
            expected[row] = (counts[row] + alpha) / (counts[row].sum()
                                                     + alpha * counts.shape[-1])
        np.testing.assert_allclose(net.members[0][node], expected, rtol=1e-12)
    assert net.parents["s"] == ("a", "b")
    assert net.columns["s"] == ("score",)


def test_explicit_structures_and_independent():
    data = chain_data(seed=4, groups=60, size=20)
    as_dict = fit_network(data, group="school", parameters=CHAIN,
                          structure={"b": ["a"], "c": ["a", "b"]})
    as_edges = fit_network(data, group="school", parameters=CHAIN,
                           structure=[("a", "b"), ("a", "c"), ("b", "c")])
    assert as_dict.parents == as_edges.parents == {
        "a": (), "b": ("a",), "c": ("a", "b")}
    for v in CHAIN:
        np.testing.assert_array_equal(as_dict.grids[v], as_edges.grids[v])
        np.testing.assert_array_equal(as_dict.members[0][v], as_edges.members[0][v])
    alone = fit_network(data, group="school", parameters=CHAIN,
                        structure="independent")
    assert alone.graph.number_of_edges() == 0
    assert all(t.ndim == 1 for t in alone.members[0].values())


def test_given_grid_takes_the_nearest_value():
    rng = np.random.default_rng(5)
    groups = np.repeat(np.arange(80), 4)
    data = pd.DataFrame({"g": groups, "x": rng.integers(0, 2, groups.size),
                         "y": rng.normal(0, 1, groups.size)})
    grids = {"p": [0.0, 0.5, 1.0], "m": [-1.0, -0.2, 0.3, 2.0]}
    specs = {"p": ("x", 1), "m": "y"}
    nodes, _, fitted, labels = _discretised(data, group="g", parameters=specs,
                                            grids=grids, bins=3)
    est = group_estimates(data, "g", specs)
    for v in nodes:
        np.testing.assert_array_equal(fitted[v], grids[v])
        # groupby(sort=False) keeps the groups in order of appearance: 0..79.
        assert labels[v].tolist() == [nearest(e[v], grids[v]) for e in est.values()]
    # A proportion of 1/4 or 3/4 is halfway between grid values: the lower wins.
    quarter = [k for k, e in enumerate(est.values()) if e["p"] == 0.25]
    assert quarter and all(labels["p"][k] == 0 for k in quarter)
    # Through the public API: independent CPTs are the smoothed label counts.
    net = fit_network(data, group="g", parameters=specs, grids=grids,
                      structure="independent", alpha=1.0)
    counts = np.bincount(labels["m"], minlength=4)
    np.testing.assert_allclose(net.members[0]["m"], (counts + 1) / (80 + 4))


def test_learned_grid_is_the_bin_means():
    rng = np.random.default_rng(6)
    groups = np.repeat(np.arange(50), 10)
    data = pd.DataFrame({"g": groups, "y": rng.normal(0, 1, groups.size)})
    _, _, fitted, labels = _discretised(data, group="g", parameters={"m": "y"},
                                        grids=None, bins=4)
    est = np.array([e["m"] for e in group_estimates(data, "g", {"m": "y"}).values()])
    edges = np.quantile(est, [0, 0.25, 0.5, 0.75, 1])
    expected_labels = [min(sum(x >= e for e in edges[1:-1]), 3) for x in est]
    assert labels["m"].tolist() == expected_labels
    expected_grid = [est[labels["m"] == k].mean() for k in range(4)]
    np.testing.assert_allclose(fitted["m"], expected_grid, rtol=1e-12)
    # Fewer distinct estimates than bins: the grid is the distinct values.
    data = pd.DataFrame({"g": [0, 0, 1, 1, 2, 2], "x": [1, 1, 0, 1, 1, 1]})
    _, _, fitted, labels = _discretised(data, group="g", parameters={"p": ("x", 1)},
                                        grids=None, bins=3)
    assert fitted["p"].tolist() == [0.5, 1.0]
    assert labels["p"].tolist() == [1, 0, 1]


def _frame():
    return pd.DataFrame({"g": [0, 0, 1, 1, 2, 2], "x": [1, 0, 1, 1, 0, 0],
                         "y": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                         "s": ["F", "M", "F", "F", "M", "F"]})


@pytest.mark.parametrize(("change", "error", "fragment"), [
    ({"data": _frame().to_numpy()}, DataValidationError, "must be a pandas DataFrame"),
    ({"group": "nope"}, DataValidationError, r"\['nope'\] not found"),
    ({"parameters": {"p": ("nope", 1)}}, DataValidationError, "not found"),
    ({"parameters": {"m": "s"}}, DataValidationError, "is not numeric"),
    ({"data": _frame().assign(y=[1.0, np.nan, 3, 4, 5, 6])}, DataValidationError,
     "NaN or infinite"),
    ({"data": _frame().assign(s=["F", None, "F", "F", "M", "F"]),
      "parameters": {"w": ("s", "F")}}, DataValidationError, "missing"),
    ({"data": _frame().assign(g=[0, 0, np.nan, 1, 1, 1])}, DataValidationError,
     "missing"),
    ({"data": _frame().assign(g=0)}, DataValidationError, "at least 2"),
    ({"parameters": {}}, InvalidParameterError, "non-empty dict"),
    ({"parameters": {"p": ("x", 1, 2)}}, InvalidParameterError, "must be"),
    ({"parameters": {"p": ["x", 1]}}, InvalidParameterError, "not a column label"),
    ({"parameters": {"p": ("x", lambda s: s.to_numpy()[:2] > 0)}},
     InvalidParameterError, "one boolean per record"),
    ({"grids": {"q": [0, 1]}}, InvalidParameterError, "not in parameters"),
    ({"grids": {"m": [1.0, 0.5]}}, InvalidParameterError, "strictly increasing"),
    ({"grids": {"m": []}}, InvalidParameterError, "non-empty 1-D"),
    ({"grids": {"m": [0, np.inf]}}, InvalidParameterError, "finite"),
    ({"bins": 0}, InvalidParameterError, "bins must be a positive int"),
    ({"alpha": 0}, InvalidParameterError, "alpha must be a positive"),
    ({"alpha": np.nan}, InvalidParameterError, "alpha must be a positive"),
    ({"structure": "tree"}, InvalidParameterError, "structure must be one of"),
    ({"structure": 3}, InvalidParameterError, "structure must be one of"),
    ({"structure": {"m": "p"}}, InvalidParameterError, "list of parents"),
    ({"structure": {"m": ["q"]}}, InvalidParameterError, r"node\(s\) \['q'\]"),
    ({"structure": [("p", "m", 1)]}, InvalidParameterError, "not \\(parent, child"),
    ({"structure": [("p", "m"), ("p", "m")]}, InvalidParameterError, "repeats"),
    ({"structure": {"m": ["p"], "p": ["m"]}}, InvalidParameterError, "cycle"),
    ({"structure": [("m", "m")]}, InvalidParameterError, "cycle"),
    ({"root": "q"}, InvalidParameterError, "root 'q' is not a node"),
    ({"root": "p", "structure": "independent"}, InvalidParameterError,
     "root orients a Chow-Liu tree"),
])
def test_errors(change, error, fragment):
    kwargs = {"data": _frame(), "group": "g",
              "parameters": {"p": ("x", 1), "m": "y"}, **change}
    data = kwargs.pop("data")
    with pytest.raises(error, match=fragment):
        fit_network(data, **kwargs)


def test_errors_are_value_errors():
    with pytest.raises(ValueError, match="at least 2"):
        fit_network(_frame().assign(g=1), group="g", parameters={"m": "y"})


def test_input_frame_is_unchanged():
    data = chain_data(seed=7, groups=40, size=10)
    data["school"] = pd.Categorical(data["school"].astype(str))
    data.index = np.repeat(np.arange(40), 10)  # a repeated index
    copy = data.copy(deep=True)
    net = fit_network(data, group="school", bins=2,
                      parameters={"a": ("A", lambda s: s == 1), "s": "score"})
    pd.testing.assert_frame_equal(data, copy)
    assert set(net.nodes) == {"a", "s"}

"""Drawing a parameter network and the quilt a mechanism chose."""

import sys

import numpy as np
import pytest

import skattr
from skattr.datasets import make_schools, schools_network
from skattr.exceptions import InvalidParameterError, MissingDependencyError

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

SECRET = skattr.Secret.mean("income", pairs=[(40_000, 80_000)])


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def node_colours(ax, net):
    """Node -> face colour, from the drawn scatter (nodes in net.nodes order)."""
    (nodes,) = [c for c in ax.collections if len(c.get_offsets()) == len(net.nodes)]
    return dict(zip(net.nodes, (to_hex(c) for c in nodes.get_facecolors()),
                    strict=True))


def test_quilt_parts_get_their_colours():
    net = schools_network()
    quilt = next(q for q in net.markov_quilts("income")
                 if q.quilt == frozenset({"gender"}))
    ax = net.plot(quilt=quilt, targets=["height"], title="Example 1")
    colours = node_colours(ax, net)
    assert colours["income"] == "#d62728"
    assert colours["gender"] == "#ff7f0e"
    assert colours["sat"] == "#ffd966"
    assert colours["height"] == colours["weight"] == "#b6d7a8"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["sensitive node", "quilt Q", "nearby N",
                      "remote R (no noise)", "queried"]
    assert ax.get_title() == "Example 1"


def test_parents_are_drawn_above_their_children():
    net = schools_network()
    ax = net.plot()
    (nodes,) = [c for c in ax.collections if len(c.get_offsets()) == len(net.nodes)]
    y = dict(zip(net.nodes, np.asarray(nodes.get_offsets())[:, 1], strict=True))
    for u, v in net.graph.edges:
        assert y[u] > y[v]


def test_draws_into_a_given_axes():
    _, ax = plt.subplots()
    assert schools_network().plot(ax=ax) is ax


def test_mechanism_draws_its_chosen_quilt():
    school = make_schools(1, 50, random_state=0)
    net = schools_network()
    mech = skattr.mechanisms.AttributePrivateMarkovQuilt(
        query=skattr.Query.count("height", lambda h: h > 66), secret=SECRET,
        network=net).fit(school)
    choice = mech.quilt_choices(len(school))["income"]
    ax = mech.plot_quilt(school)
    colours = node_colours(ax, net)
    for v in choice.quilt.quilt:
        assert colours[v] == "#ff7f0e"
    assert "Laplace scale 0" in ax.get_title()
    with pytest.raises(InvalidParameterError, match="not a sensitive node"):
        mech.plot_quilt(50, node="gender")


@pytest.mark.parametrize(("kw", "match"), [
    (dict(quilt="gender"), "MarkovQuilt"),
    (dict(targets=["nope"]), "not a node"),
])
def test_bad_arguments(kw, match):
    with pytest.raises(InvalidParameterError, match=match):
        schools_network().plot(**kw)


def test_missing_matplotlib_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(MissingDependencyError, match=r"skattr\[plot\]"):
        schools_network().plot()

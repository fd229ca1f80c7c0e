"""skattr.plotting: the plotted numbers, the gaps, the chance line, the errors."""

import copy
import importlib
import math
import sys

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.attacks import AttackResult, PropertyInferenceAttack, attack_scorer
from skattr.datasets import make_hospital
from skattr.exceptions import (
    InvalidParameterError,
    MissingDependencyError,
    NotCertifiableError,
)
from skattr.mechanisms import AttributePrivateGaussian
from skattr.noise import GaussianNoise, LaplaceNoise
from skattr.plotting import plot_attack_accuracy, plot_release, plot_tradeoff

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
INSTALL = 'pip install "skattr[plot]"'


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def reference():
    return make_hospital(1000, random_state=0)


@pytest.fixture(scope="module")
def private():
    # 20 records: the Gaussian law refuses a release with no noise below 30, so
    # apgm is not certifiable at large epsilons.
    return make_hospital(20, random_state=1)


@pytest.fixture(scope="module")
def defence(reference):
    return AttributePrivateGaussian(query=skattr.Query.mean(["weight"]),
                                    secret=SECRET, law="gaussian",
                                    random_state=0).fit(reference)


def _lines(ax):
    """The labelled lines (not the marks on the epsilon axis), by legend text."""
    return {line.get_label(): line for line in ax.get_lines()
            if not line.get_label().startswith("_")}


def _marks(ax, gid):
    """The x positions of the marks with ``gid`` drawn on the epsilon axis."""
    return sorted(float(x) for line in ax.get_lines() if line.get_gid() == gid
                  for x in line.get_xdata())


def _plan_error(frame, reference, mechanism, epsilon, **params):
    """The accessor's own plan: a fresh fit, independent of plot_tradeoff."""
    return frame.attrpriv.plan(["weight"], secret=SECRET, reference=reference,
                               mechanism=mechanism, epsilon=epsilon,
                               **params).expected_error


def _interval_segments(container):
    """(low, high) of each bar of an errorbar, along the bars' direction."""
    (bars,) = container.lines[2]
    # matplotlib draws no bar (an empty segment) at a NaN point.
    return np.array([segment if len(segment) else np.full((2, 2), np.nan)
                     for segment in bars.get_segments()])


# --------------------------------------------------------------------------------
# plot_tradeoff
# --------------------------------------------------------------------------------


@pytest.mark.slow
def test_tradeoff_draws_the_plans_and_leaves_gaps(private, reference):
    grid = (0.5, 1.0, 2.0, 5.0, 10.0)
    ax = plot_tradeoff(private, ["weight"], secret=SECRET, reference=reference,
                       epsilons=grid, law="gaussian",
                       mechanisms=("apgm", "expm-gaussian", "expm-laplace"))
    lines = _lines(ax)
    assert list(lines) == [
        "apgm (not certifiable at epsilon = 5 and 10)",
        "expm-gaussian",
        "expm-laplace: not certifiable at any epsilon plotted",
    ]
    apgm = lines["apgm (not certifiable at epsilon = 5 and 10)"]
    np.testing.assert_array_equal(apgm.get_xdata(), grid)
    for epsilon, error in zip(grid, apgm.get_ydata(), strict=True):
        if epsilon < 5:
            assert error == pytest.approx(
                _plan_error(private, reference, "apgm", epsilon, law="gaussian"),
                rel=1e-12)
        else:
            assert math.isnan(error)
            with pytest.raises(NotCertifiableError):
                _plan_error(private, reference, "apgm", epsilon, law="gaussian")
    expected = [_plan_error(private, reference, "expm-gaussian", e, law="gaussian")
                for e in grid]
    np.testing.assert_allclose(lines["expm-gaussian"].get_ydata(), expected,
                               rtol=1e-12)
    # Not certifiable anywhere: kept in the legend, all NaN, no marks.
    assert np.isnan(lines["expm-laplace: not certifiable at any epsilon plotted"]
                    .get_ydata()).all()
    assert _marks(ax, "not certifiable") == [5.0, 10.0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == list(lines)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "epsilon"
    assert ax.get_ylabel() == "expected error (units of the statistic)"
    assert "n = 20" in ax.get_title()


def test_tradeoff_marks_releases_with_no_noise(private, reference):
    # Planned for 50 records (n=), the data's own variance covers the secret at
    # epsilon = 10: zero error, kept as 0 in the line and marked on the axis.
    ax = plot_tradeoff(private, ["weight"], secret=SECRET, reference=reference,
                       epsilons=(1.0, 10.0), mechanisms="apgm", n=50,
                       law="gaussian")
    (label, line), = _lines(ax).items()
    assert label == "apgm (no noise at epsilon = 10)"
    fifty = make_hospital(50, random_state=1)
    assert line.get_ydata()[0] == pytest.approx(
        _plan_error(fifty, reference, "apgm", 1.0, law="gaussian"), rel=1e-12)
    assert line.get_ydata()[1] == 0.0
    assert _marks(ax, "no noise") == [10.0]
    assert _marks(ax, "not certifiable") == []


@pytest.mark.slow
def test_tradeoff_auto_is_the_registry_choice_at_each_epsilon(reference):
    # A proportion's default Theta is the reference's confidence box (no
    # draws): every fit is the same, so the accessor's "auto" plan can be
    # compared number for number. At n = 100 apgm wins at epsilon 0.1 and
    # approx-wasserstein at 1.
    ref = reference.assign(heavy=reference["weight"] > 150)
    private = make_hospital(100, random_state=1)
    private = private.assign(heavy=private["weight"] > 150)
    grid = (0.1, 1.0)
    ax = plot_tradeoff(private, ["heavy"], secret=SECRET, reference=ref,
                       statistic="proportion", value=True, epsilons=grid)
    plans = [private.attrpriv.plan(["heavy"], statistic="proportion", value=True,
                                   secret=SECRET, reference=ref, epsilon=e)
             for e in grid]
    (label, line), = _lines(ax).items()
    chosen = [plan.mechanism for plan in plans]
    assert chosen[0] != chosen[1]           # the choice changes with epsilon
    assert label.startswith(f"auto: {chosen[0]} (0.1), {chosen[1]} (1)")
    np.testing.assert_allclose(line.get_ydata(),
                               [plan.expected_error for plan in plans],
                               rtol=1e-12)


def test_tradeoff_of_fitted_mechanisms_with_beta(defence):
    before = (defence.get_params(), dict(defence._plans))
    ax = plot_tradeoff({"mine": defence}, n=50, epsilons=[2.0, 0.5], beta=0.1)
    (label, line), = _lines(ax).items()
    assert label == "mine"
    np.testing.assert_array_equal(line.get_xdata(), [0.5, 2.0])
    independent = copy.deepcopy(defence)
    expected = [independent.set_params(epsilon=e).plan(n=50).alpha(0.1)
                for e in (0.5, 2.0)]
    np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-12)
    assert "probability 0.1" in ax.get_ylabel()
    # The caller's mechanism is copied, never changed.
    assert defence.get_params() == before[0]
    assert dict(defence._plans) == before[1]
    # A single mechanism is labelled by its name.
    ax = plot_tradeoff(defence, n=50, epsilons=(1.0,))
    assert list(_lines(ax)) == ["apgm"]


def test_tradeoff_draws_on_the_axes_given(defence):
    fig, axes = plt.subplots(1, 2)
    assert plot_tradeoff(defence, n=50, epsilons=(1.0,), ax=axes[1]) is axes[1]
    assert not axes[0].get_lines()


@pytest.mark.parametrize("epsilons", [(), (0.0, 1.0), (-1.0,), (1.0, math.inf),
                                      (1.0, float("nan")), "1", 1.0, (True,),
                                      {1.0: 2}])
def test_tradeoff_refuses_bad_epsilons(private, epsilons):
    with pytest.raises(InvalidParameterError, match="'epsilons' parameter"):
        plot_tradeoff(private, ["weight"], secret=SECRET, epsilons=epsilons)


@pytest.mark.parametrize("kwargs, match", [
    ({"beta": 1.5}, "'beta' parameter of plot_tradeoff"),
    ({"n": 0}, "'n' parameter of plot_tradeoff"),
    ({"ax": "left"}, "'ax' parameter of plot_tradeoff"),
    ({"mechanisms": ("apgm", 3)}, "'mechanisms' parameter"),
    ({"mechanisms": ("apgmm",)}, "Unknown mechanism 'apgmm'"),
    ({"mechanisms": ("approx-wasserstein", "apgmm")}, "Did you mean 'apgm'"),
    ({"epsilon": 1.0}, "drop epsilon="),
    ({"law": "gausian"}, "'law' parameter"),
    ({"bogus": 1}, r"takes no parameter\(s\) \['bogus'\]"),
])
def test_tradeoff_refuses_bad_arguments(private, reference, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        plot_tradeoff(private, ["weight"], secret=SECRET, reference=reference,
                      **kwargs)


def test_tradeoff_refuses_what_does_not_fit_its_data(private, defence):
    with pytest.raises(InvalidParameterError, match="needs n="):
        plot_tradeoff(defence)
    with pytest.raises(InvalidParameterError, match=r"no \['secret'\]"):
        plot_tradeoff(defence, n=50, secret=SECRET)
    with pytest.raises(InvalidParameterError, match=r"no \['delta'\]"):
        plot_tradeoff(defence, n=50, delta=0.01)
    with pytest.raises(InvalidParameterError, match="got list"):
        plot_tradeoff([1, 2, 3], secret=SECRET)
    with pytest.raises(InvalidParameterError, match="needs network="):
        plot_tradeoff(private, ["weight"], secret=SECRET,
                      mechanisms="markov-quilt")
    assert issubclass(InvalidParameterError, ValueError)


# --------------------------------------------------------------------------------
# plot_release and Release.plot
# --------------------------------------------------------------------------------


def _release(noise, values, names):
    k = len(values)
    return skattr.Release(
        mechanism="apgm", statistics=tuple(names), n=100, epsilon=0.5,
        delta=1e-3, calibration="analytic", secrets=(SECRET.label,), theta="",
        sensitivity=1.0, inherent_variance=(0.0,) * k, noise_law=noise,
        values=pd.Series(values, index=names))


@pytest.mark.parametrize("noise", [
    GaussianNoise(np.array([[4.0, 1.0], [1.0, 0.25]])),
    LaplaceNoise.on_each(2.0, 2),
])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_release_bars_are_the_confidence_intervals(noise, alpha):
    rel = _release(noise, [152.5, 98.6], ["weight", "temperature"])
    ax = plot_release(rel, alpha=alpha)
    (container,) = ax.containers
    data = container.lines[0]
    intervals = rel.conf_int(alpha)
    # The first statistic is the top row.
    np.testing.assert_array_equal(data.get_xdata(), rel.values.to_numpy())
    np.testing.assert_array_equal(data.get_ydata(), [1, 0])
    segments = _interval_segments(container)
    np.testing.assert_allclose(segments[:, 0, 0], intervals["lower"], rtol=1e-12)
    np.testing.assert_allclose(segments[:, 1, 0], intervals["upper"], rtol=1e-12)
    np.testing.assert_array_equal(segments[:, :, 1], [[1, 1], [0, 0]])
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert [t.split("\n")[0] for t in ticks] == ["weight", "temperature"]
    assert ax.get_title().startswith("(0.5, 0.001)-attribute privacy\napgm")
    assert "n = 100" in ax.get_title()
    assert f"{100 * (1 - alpha):g}% interval" in ax.get_xlabel()


def test_release_plot_method_delegates(private, reference):
    rel = private.attrpriv.mean(["weight", "height"], secret=SECRET,
                                reference=reference, mechanism="apgm",
                                law="gaussian", epsilon=2.0, random_state=0)
    fig, ax = plt.subplots()
    with pytest.warns(FutureWarning, match="plot_release"):
        assert rel.plot(alpha=0.1, ax=ax) is ax
    (container,) = ax.containers
    segments = _interval_segments(container)
    np.testing.assert_allclose(segments[:, 0, 0], rel.conf_int(0.1)["lower"])
    np.testing.assert_allclose(segments[:, 1, 0], rel.conf_int(0.1)["upper"])
    with pytest.warns(FutureWarning, match="plot_release"):
        assert rel.plot().get_title() == ax.get_title()


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, "0.05", None])
def test_release_plot_refuses_bad_alpha(alpha):
    rel = _release(LaplaceNoise.on_each(1.0, 1), [1.0], ["x"])
    with pytest.raises(InvalidParameterError, match="'alpha' parameter"):
        plot_release(rel, alpha=alpha)


def test_plot_release_refuses_what_is_not_a_release():
    with pytest.raises(InvalidParameterError, match="'release' parameter"):
        plot_release(pd.Series([1.0]))


# --------------------------------------------------------------------------------
# plot_attack_accuracy
# --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def attack_data():
    return make_hospital(1000, random_state=3), make_hospital(1000, random_state=4)


ATTACK = {"values": (0.4, 0.6), "n": 20, "n_shadow": 20, "n_test": 20,
          "random_state": 0}


def _chance(ax):
    (line,) = [line for line in ax.get_lines() if line.get_gid() == "chance"]
    return line


@pytest.mark.slow
def test_attack_accuracy_of_a_mechanism(defence, attack_data):
    auxiliary, test = attack_data
    grid = (0.1, 1.0, 10.0)
    before = copy.deepcopy(defence)
    ax = plot_attack_accuracy(defence, auxiliary, test, epsilons=grid,
                              confidence=0.9, **ATTACK)
    # The same attacks, run here: a copy of the defence at each epsilon (with
    # n = 20 the Gaussian law refuses no noise, so 10 is not certifiable).
    expected = []
    for epsilon in grid:
        mechanism = copy.deepcopy(before).set_params(epsilon=epsilon)
        try:
            expected.append(PropertyInferenceAttack(mechanism, **ATTACK).fit(
                auxiliary).evaluate(test, confidence=0.9))
        except NotCertifiableError:
            expected.append(None)
    assert [r is None for r in expected] == [False, False, True]
    (container,) = ax.containers
    data = container.lines[0]
    np.testing.assert_array_equal(data.get_xdata(), grid)
    np.testing.assert_array_equal(data.get_ydata()[:2],
                                  [r.accuracy for r in expected[:2]])
    assert math.isnan(data.get_ydata()[2])
    segments = _interval_segments(container)
    np.testing.assert_allclose(segments[:2, :, 1],
                               [[r.ci_low, r.ci_high] for r in expected[:2]])
    assert _marks(ax, "not certifiable") == [10.0]
    # Chance, and the attack on the exact statistic.
    np.testing.assert_array_equal(_chance(ax).get_ydata(), [0.5, 0.5])
    bare = PropertyInferenceAttack(query=defence.query_, secret=SECRET,
                                   **ATTACK).fit(auxiliary).evaluate(
        test, confidence=0.9)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [
        f"no defence: {bare.accuracy:.2f} ({bare.ci_low:.2f}-{bare.ci_high:.2f})",
        "chance (0.5)",
        "apgm, 90% interval (not certifiable at epsilon = 10)",
    ]
    (no_defence,) = [line for line in ax.get_lines()
                     if line.get_label().startswith("no defence")]
    np.testing.assert_array_equal(no_defence.get_ydata(), [bare.accuracy] * 2)
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "attack accuracy"
    assert defence.get_params()["epsilon"] == before.epsilon


@pytest.mark.slow
def test_attack_accuracy_from_grid_search(reference, attack_data):
    from sklearn.model_selection import GridSearchCV

    auxiliary, test = attack_data
    search = GridSearchCV(
        AttributePrivateGaussian(query=skattr.Query.mean(["weight"]),
                                 secret=SECRET, law="gaussian",
                                 random_state=np.random.default_rng(0)),
        {"epsilon": [5.0, 0.5]},
        scoring={"attack": attack_scorer(auxiliary, test, **{**ATTACK, "n": 50})},
        refit=False, cv=2).fit(reference)
    results = search.cv_results_
    ax = plot_attack_accuracy(results)
    (container,) = ax.containers
    data = container.lines[0]
    order = np.argsort(np.asarray(results["param_epsilon"], dtype=float))
    mean = results["mean_test_attack"][order]
    std = results["std_test_attack"][order]
    np.testing.assert_array_equal(data.get_xdata(), [0.5, 5.0])
    np.testing.assert_allclose(data.get_ydata(), mean)
    segments = _interval_segments(container)
    np.testing.assert_allclose(segments[:, 0, 1], mean - std)
    np.testing.assert_allclose(segments[:, 1, 1], mean + std)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["chance (0.5)", "mean ± sd over 2 folds"]


def test_attack_accuracy_groups_other_searched_parameters():
    results = {
        "param_epsilon": np.ma.masked_array([1.0, 1.0, 4.0, 4.0, 0.0],
                                            mask=[0, 0, 0, 0, 1], dtype=object),
        "params": [{"epsilon": 1.0, "calibration": "classic"},
                   {"epsilon": 1.0, "calibration": "analytic"},
                   {"epsilon": 4.0, "calibration": "classic"},
                   {"epsilon": 4.0, "calibration": "analytic"},
                   {"delta": 0.01}],
        "mean_test_attack": np.array([0.5, 0.55, 0.7, 0.8, 0.9]),
        "std_test_attack": np.array([0.01, 0.02, 0.03, 0.04, 0.05]),
    }
    ax = plot_attack_accuracy(results)
    lines = {c.get_label(): c.lines[0] for c in ax.containers}
    assert sorted(lines) == ["calibration=analytic, mean ± sd",
                             "calibration=classic, mean ± sd"]
    np.testing.assert_array_equal(
        lines["calibration=analytic, mean ± sd"].get_ydata(), [0.55, 0.8])
    np.testing.assert_array_equal(
        lines["calibration=classic, mean ± sd"].get_xdata(), [1.0, 4.0])


def test_attack_accuracy_from_a_table():
    table = pd.DataFrame({"label": ["a", "a", "b", "b"],
                          "epsilon": [2.0, 0.5, 1.0, 3.0],
                          "accuracy": [0.7, 0.55, 0.6, np.nan],
                          "ci_low": [0.6, 0.45, 0.5, np.nan],
                          "ci_high": [0.8, 0.65, 0.7, np.nan]})
    ax = plot_attack_accuracy(table)
    lines = {c.get_label(): c for c in ax.containers}
    assert sorted(lines) == ["a, interval", "b, interval (no accuracy at epsilon = 3)"]
    assert _marks(ax, "no accuracy") == [3.0]
    data = lines["a, interval"].lines[0]
    np.testing.assert_array_equal(data.get_xdata(), [0.5, 2.0])
    np.testing.assert_array_equal(data.get_ydata(), [0.55, 0.7])
    np.testing.assert_allclose(_interval_segments(lines["a, interval"])[:, :, 1],
                               [[0.45, 0.65], [0.6, 0.8]])
    np.testing.assert_array_equal(_chance(ax).get_ydata(), [0.5, 0.5])
    # Without intervals, no bars beyond the points.
    ax = plot_attack_accuracy(table[["epsilon", "accuracy"]])
    (container,) = ax.containers
    segments = _interval_segments(container)
    np.testing.assert_array_equal(segments[:, 0, 1], segments[:, 1, 1])


def test_attack_accuracy_from_results():
    results = {1.0: AttackResult(0.6, 0.5, 0.7, 100, confidence=0.9)}
    ax = plot_attack_accuracy(results)
    assert ax.containers[0].get_label() == "90% interval"


@pytest.mark.parametrize("source, kwargs, match", [
    ([0.5, 0.6], {}, "got list"),
    (pd.DataFrame({"eps": [1.0], "accuracy": [0.5]}), {}, r"no column\(s\)"),
    (pd.DataFrame({"epsilon": [0.0], "accuracy": [0.5]}), {}, "positive"),
    (pd.DataFrame({"epsilon": [1.0], "accuracy": [1.5]}), {}, r"\[0, 1\]"),
    ({"mean_test_attack": [0.5], "param_delta": [0.1]}, {}, "param="),
    (pd.DataFrame({"epsilon": [1.0], "accuracy": [0.5]}), {"n": 20},
     "take none"),
    (pd.DataFrame({"epsilon": [1.0], "accuracy": [0.5]}), {"confidence": 1.0},
     "'confidence' parameter"),
    (pd.DataFrame({"epsilon": [1.0], "accuracy": [0.5]}), {"ax": 3},
     "'ax' parameter"),
])
def test_attack_accuracy_refuses_bad_input(source, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        plot_attack_accuracy(source, **kwargs)


def test_attack_accuracy_refuses_bad_attack_arguments(defence, attack_data):
    auxiliary, test = attack_data
    with pytest.raises(InvalidParameterError, match="auxiliary data"):
        plot_attack_accuracy(defence)
    with pytest.raises(InvalidParameterError, match=r"\['n_shadows'\]"):
        plot_attack_accuracy(defence, auxiliary, test, n_shadows=10)
    with pytest.raises(InvalidParameterError, match="'n_shadow' parameter"):
        plot_attack_accuracy(defence, auxiliary, test, n_shadow=1)
    with pytest.raises(InvalidParameterError, match="'epsilons' parameter"):
        plot_attack_accuracy(defence, auxiliary, test, epsilons=(0,))


# --------------------------------------------------------------------------------
# Without matplotlib
# --------------------------------------------------------------------------------


@pytest.fixture
def no_matplotlib(monkeypatch):
    for name in [m for m in sys.modules if m.split(".")[0] == "matplotlib"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)


def test_importing_needs_no_matplotlib(no_matplotlib, monkeypatch):
    # A fresh import of the package, its modules included, with matplotlib gone.
    original = skattr.plotting
    monkeypatch.setattr(skattr, "plotting", original)
    for name in [m for m in sys.modules if m.startswith("skattr.plotting")]:
        monkeypatch.delitem(sys.modules, name)
    fresh = importlib.import_module("skattr.plotting")
    assert fresh is not original
    with pytest.raises(MissingDependencyError) as info:
        fresh.plot_attack_accuracy({1.0: AttackResult(0.6, 0.5, 0.7, 100)})
    assert INSTALL in str(info.value)


@pytest.mark.parametrize("call", [
    lambda: plot_tradeoff(None),
    lambda: plot_release(None),
    lambda: plot_attack_accuracy(None),
])
def test_plots_name_the_extra_without_matplotlib(no_matplotlib, call):
    # Before any other check: the missing library is the first thing to fix.
    with pytest.raises(MissingDependencyError) as info:
        call()
    assert INSTALL in str(info.value)
    assert isinstance(info.value, ValueError)

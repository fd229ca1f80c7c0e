"""The Wasserstein-vs-group-privacy example (Zhang et al. Example 2) and its numbers."""

import importlib.util
import sys
from itertools import product
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

PATH = Path(__file__).resolve().parents[1] / "examples" / "group_dp_comparison.py"
_spec = importlib.util.spec_from_file_location("example_group_dp_comparison", PATH)
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)

# Table 1 of Zhang et al. (long version): P(F = j | g(X2) = 0) and = 4, n = 4.
TABLE_1 = {"g(X2) = 0/4": [0.0256, 0.1536, 0.3456, 0.3456, 0.1296],
           "g(X2) = 4/4": [0.1296, 0.3456, 0.3456, 0.1536, 0.0256]}


def _w_infinity_binomials(n, p, q):
    """W_inf between Binomial(n, p) and Binomial(n, q) from the quantile functions.

    Both quantile functions are constant between consecutive values of the two
    cdfs, so comparing them at the midpoints of those intervals is exact.
    """
    support = np.arange(n + 1)
    u, v = stats.binom.cdf(support, n, p), stats.binom.cdf(support, n, q)
    cuts = np.unique(np.concatenate([[0.0], u, v]))
    cuts = cuts[cuts < 1 - 1e-12]
    levels = (cuts + np.append(cuts[1:], 1.0)) / 2
    quantile_u = np.minimum(np.searchsorted(u, levels), n)
    quantile_v = np.minimum(np.searchsorted(v, levels), n)
    return float(np.abs(quantile_u - quantile_v).max())


@pytest.fixture(scope="module")
def run():
    tables = example.main(show=False)
    if "matplotlib.pyplot" in sys.modules and sys.modules["matplotlib.pyplot"]:
        sys.modules["matplotlib.pyplot"].close("all")
    return tables


@pytest.mark.slow
def test_returns_every_table(run):
    tables = run
    assert set(tables) == {"laws", "example 2", "releases", "extreme pair", "sweep"}


@pytest.mark.slow
def test_table_1(run):
    laws = run["laws"]
    for row, paper in TABLE_1.items():
        np.testing.assert_allclose(laws.loc[row].to_numpy(), paper, atol=5e-5)
    np.testing.assert_allclose(laws.sum(axis=1), 1.0)


@pytest.mark.slow
def test_example_2_w_is_1_and_group_sensitivity_is_4(run):
    table = run["example 2"]
    wasserstein = table.loc[example.WASSERSTEIN]
    group = table.loc[example.GROUP_DP]
    assert wasserstein["sensitivity"] == 1.0 and wasserstein["noise scale b"] == 1.0
    assert group["sensitivity"] == 4.0 and group["noise scale b"] == 4.0
    # Independently: the quantile gap of Table 1's two laws.
    assert _w_infinity_binomials(4, 0.6, 0.4) == 1.0


@pytest.mark.slow
def test_measured_errors_match_laplace_theory(run):
    table = run["releases"]
    releases = example.N_RELEASES
    assert releases >= 2000 and (table["releases"] == releases).all()
    # Laplace(b) at epsilon = 1: E|noise| = b and sd(|noise|) = b, b from the paper.
    for name, b in ((example.WASSERSTEIN, 1.0), (example.GROUP_DP, 4.0)):
        row = table.loc[name]
        assert row["noise scale b"] == b and row["expected |error|"] == pytest.approx(b)
        standard_error = b / np.sqrt(releases)
        assert abs(row["measured |error|"] - b) < 4 * standard_error
        assert row["standard error"] == pytest.approx(standard_error, rel=0.1)


@pytest.mark.slow
def test_extreme_pair_gives_the_w_of_all_pairs(run):
    table = run["extreme pair"]
    for n, row in table.iterrows():
        assert row.nunique() == 1, row
        assert row.iloc[0] == _w_infinity_binomials(int(n), 0.6, 0.4)


@pytest.mark.slow
def test_sweep_scales_and_w_below_group_sensitivity(run):
    table = run["sweep"]
    assert sorted(zip(table["n"], table["epsilon"], strict=True)) == sorted(
        product(example.SWEEP_N, example.SWEEP_EPSILON))
    for _, row in table.iterrows():
        n, epsilon, w = row["n"], row["epsilon"], row["W"]
        assert row["group sensitivity"] == n
        assert w <= n
        assert w == _w_infinity_binomials(int(n), 0.6, 0.4)
        assert row["Wasserstein scale"] == pytest.approx(w / epsilon)
        assert row["group DP scale"] == pytest.approx(n / epsilon)
    # W grows about as (0.6 - 0.4) n, so the gain over group privacy stays near 5.
    largest = table[table["n"] == max(example.SWEEP_N)].iloc[0]
    assert 0.2 <= largest["W / n"] < 0.25


def test_figure_plots_both_scales_on_log_axes():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    table = example.sweep(ns=(4, 8), epsilons=(1.0, 2.0))
    fig = example.plot_sweep(table)
    try:
        (ax,) = fig.axes
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        lines = ax.get_lines()
        assert len(lines) == 4
        for line, (epsilon, column) in zip(lines, product(
                (1.0, 2.0), ("Wasserstein scale", "group DP scale")), strict=True):
            part = table[table["epsilon"] == epsilon]
            np.testing.assert_allclose(line.get_ydata(), part[column])
    finally:
        plt.close(fig)


def test_figure_is_skipped_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    assert example.plot_sweep(example.sweep(ns=(4,), epsilons=(1.0,))) is None

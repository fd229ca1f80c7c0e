"""The kinds of statistic (skattr._kinds): the registry and what each answers."""

import numpy as np
import pandas as pd
import pytest

import skattr._kinds._base as kinds_base
from skattr import Query, Statistic
from skattr._kinds import (
    Count,
    Mean,
    Median,
    OrderKind,
    StatisticKind,
    kind_of,
    kinds,
    law_builder,
    query_kind,
    register_kind,
    register_law,
)
from skattr._persistence import from_json, to_json


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(kinds_base, "_KINDS", dict(kinds_base._KINDS))
    monkeypatch.setattr(kinds_base, "_LAWS", dict(kinds_base._LAWS))


def test_a_stored_name_gives_its_kind_and_nothing_else_does():
    assert isinstance(kind_of("mean"), Mean)
    assert kind_of(kind_of("mean")) is kind_of("mean")
    for other in ("stacked", "Mean", None, len, 3):
        assert kind_of(other) is None
    assert query_kind(Query.count("a", 1)) is kind_of("count")
    assert query_kind(Query.mean("a") + Query.sum("b")) is None
    assert Statistic.quantile("a", q=[0.1, 0.9]).kind is kind_of("quantile")


def test_the_kinds_keep_the_names_saved_files_hold():
    assert [k.name for k in kinds(linear=True)] == [
        "mean", "sum", "count", "proportion"]
    assert [k.name for k in kinds(linear=False)] == [
        "median", "quantile", "std", "trimmed-mean", "ols", "function"]


def test_what_the_linear_kinds_answer():
    n = 8
    assert [kind_of(s).weight(n) for s in ("mean", "sum", "count", "proportion")
            ] == [1 / 8, 1.0, 1.0, 1 / 8]
    assert [kind_of(s).counts for s in ("mean", "sum", "count", "proportion")
            ] == [False, False, True, True]
    ranges = [kind_of(s).output_range(None, -1.0, 3.0, n)
              for s in ("mean", "sum", "count", "proportion")]
    assert ranges == [(-1.0, 3.0), (-8.0, 24.0), (0.0, 8.0), (0.0, 1.0)]


def test_the_order_kinds_combine_order_statistics_as_numpy():
    rng = np.random.default_rng(0)
    for n in (5, 6, 7, 10):
        x = np.sort(rng.normal(size=n))
        stat = Statistic.quantile("a", q=[0.0, 0.3, 0.5, 0.95, 1.0])
        for kind, want in ((kind_of("median"), [np.median(x)]),
                           (kind_of("quantile"), np.quantile(x, stat.q))):
            got = [kind.interpolate(x[b], x[a], t)
                   for b, a, t in kind.order_plan(stat, n)]
            np.testing.assert_array_equal(got, want)


def test_a_kind_is_registered_once_and_laws_by_kind_class(registry):
    with pytest.raises(ValueError, match="registered already"):
        @register_kind
        class Other(StatisticKind):
            name = "mean"

    @register_kind
    class Middle(OrderKind):
        name = "middle"

        def levels(self, stat):
            return (0.5,)

    # A subclass inherits its base's builders; a registered one wins.
    assert law_builder("order", "middle") is law_builder("order", Median())
    assert law_builder("band", Count()) is None

    def build(stat, fields):
        return "built"

    register_law("band", Middle)(build)
    assert law_builder("band", "middle") is build
    assert law_builder("band", "quantile") is not build
    assert law_builder("band", "no such kind") is None


def test_a_queries_kind_is_derived_from_its_saved_name():
    for query in (Query.proportion("a", "x"), Statistic.std("a", ddof=0),
                  Statistic.trimmed_mean("a", 0.2)):
        loaded = from_json(to_json(query))
        assert loaded == query and loaded.kind is query.kind


def test_the_kernel_reads_the_kinds_rows_and_outputs():
    # One source for each per-kind fact (issue 45): a regression of y on
    # two regressors with a constant needs 3 rows, as its kind says (it
    # said 1 while the kernel said 3); a std needs ddof + 1.
    cases = [(Statistic.ols("y", ["a", "b"]), ["y", "a", "b"], 3, 3),
             (Statistic.ols("y", ["a"], add_constant=False), ["y", "a"], 1, 1),
             (Statistic.std(["a", "b"], ddof=2), ["a", "b"], 3, 2),
             (Statistic.quantile(["a", "b"], q=[0.1, 0.5, 0.9]), ["a", "b"],
              1, 6),
             (Statistic.median(["a"]), ["a"], 1, 1),
             (Statistic.trimmed_mean(["a", "b"]), ["a", "b"], 1, 2)]
    for stat, columns, rows, outputs in cases:
        assert stat.kind.min_rows(stat, columns) == rows, stat
        assert stat.kind.min_rows(stat) == rows, stat
        assert stat.min_rows(columns) == rows
        assert stat.kind.n_outputs(stat, columns) == outputs
        assert stat.n_outputs(columns) == outputs
    ols = Statistic.ols("y", ["a", "b"])
    frame = pd.DataFrame(np.arange(6.0).reshape(2, 3), columns=["y", "a", "b"])
    with pytest.raises(ValueError, match="needs at least 3"):
        ols.prepare(frame, ["y", "a", "b"])


def test_the_verbs_and_aggregations_come_from_the_kinds():
    # The command line's --statistic choices and agg's names, built from the
    # kinds in their order: the same lists as the literal tables they were.
    from skattr._verbs import _AGGREGATIONS
    from skattr.cli import build_parser

    assert list(_AGGREGATIONS) == ["mean", "sum", "median", "std"]
    assert _AGGREGATIONS["std"](["a"]) == Statistic.std(["a"])
    assert _AGGREGATIONS["mean"](["a"]) == Query.mean(["a"])
    release = next(a for a in build_parser()._subparsers._group_actions[0]
                   .choices["release"]._actions if a.dest == "statistic")
    assert release.choices == ["mean", "sum", "count", "proportion", "median",
                               "quantile", "std"]
    assert [k.name for k in kinds() if k.takes_value()] == ["count",
                                                            "proportion"]
    assert [k.name for k in kinds() if k.takes_levels()] == ["quantile"]

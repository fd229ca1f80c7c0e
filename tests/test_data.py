"""The data seam: the only code that reads a frame's rows."""

import ast
import pathlib

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr._data import (
    GroupStatistics,
    column_totals,
    group_statistics,
    record_contributions,
    secret_indicator,
    statistics_of,
)


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"s": rng.random(500) < 0.3,
                         "x": rng.normal(1e6, 1.0, 500),
                         "y": rng.integers(0, 9, 500).astype(float)})


def test_group_statistics_are_the_groups_moments(frame):
    secret = skattr.Secret.proportion("s", True, pairs=[(0.2, 0.4)])
    (stats,) = group_statistics(frame, skattr.Query.mean(["x", "y"]),
                                ("x", "y"), [secret])
    h = frame[["x", "y"]].to_numpy()
    for side, mask in ((0, ~frame["s"].to_numpy()), (1, frame["s"].to_numpy())):
        assert stats.count[side] == mask.sum()
        np.testing.assert_allclose(stats.mean[side], h[mask].mean(axis=0),
                                   rtol=1e-15)
        np.testing.assert_allclose(stats.covariance(side),
                                   np.cov(h[mask].T, ddof=0), rtol=1e-9)
    # A mean of 1e6 with unit spread keeps its variance (centred, not raw sums).
    assert stats.covariance(1)[0, 0] == pytest.approx(1.0, rel=0.2)


@pytest.mark.parametrize("cut", [1, 17, 250, 499])
def test_merging_chunks_gives_the_whole(frame, cut):
    h = frame[["x", "y"]].to_numpy()
    z = frame["s"].to_numpy().astype(int)
    whole = statistics_of(h, z)
    merged = statistics_of(h[:cut], z[:cut]).merge(statistics_of(h[cut:], z[cut:]))
    np.testing.assert_array_equal(merged.count, whole.count)
    np.testing.assert_allclose(merged.mean, whole.mean, rtol=1e-14)
    np.testing.assert_allclose(merged.m2, whole.m2, rtol=1e-8)


def test_an_empty_chunk_merges_as_nothing(frame):
    h = frame[["x"]].to_numpy()
    z = frame["s"].to_numpy().astype(int)
    empty = GroupStatistics(count=np.zeros(2), mean=np.zeros((2, 1)),
                            m2=np.zeros((2, 1, 1)))
    whole = statistics_of(h, z)
    merged = empty.merge(whole)
    np.testing.assert_allclose(merged.m2, whole.m2)
    np.testing.assert_allclose(merged.mean, whole.mean)


def test_totals_contributions_and_indicator(frame):
    query = skattr.Query.count(["y"], lambda v: v > 4)
    np.testing.assert_array_equal(column_totals(frame, query, ("y",)),
                                  [(frame["y"] > 4).sum()])
    np.testing.assert_array_equal(record_contributions(frame, query, ("y",))[:, 0],
                                  (frame["y"] > 4).astype(float))
    secret = skattr.Secret.proportion("s", True, pairs=[(0.2, 0.4)])
    np.testing.assert_array_equal(secret_indicator(frame, secret),
                                  frame["s"].astype(float))


def test_fitted_moments_are_those_of_the_rows(frame):
    # theta="moments" fits GroupMoments from the seam's sufficient statistics.
    from skattr.theta._fit import group_moments

    z = frame["s"].to_numpy().astype(int)
    h = frame[["x", "y"]].to_numpy()
    model = group_moments(statistics_of(h, z), sampling="without-replacement",
                          columns=("x", "y"), secret_label="s")
    inside = z == 1
    np.testing.assert_allclose(model.mean_in, h[inside].mean(axis=0), rtol=1e-15)
    np.testing.assert_allclose(model.cov_out, np.cov(h[~inside].T, ddof=0),
                               rtol=1e-9)
    assert model.p == inside.mean()
    assert (model.size_in, model.size_out) == (inside.sum(), (~inside).sum())


# The seam's rule: only skattr/_data.py (and the query and secret types that
# define the per-record kernels) read rows through these methods.
_ROW_READERS = {"contributions", "totals", "indicator"}
_ALLOWED = {"_data.py", "_query.py", "_statistic.py", "_secret.py",
            "_base_query.py"}


@pytest.mark.slow
def test_nothing_outside_the_seam_reads_rows():
    root = pathlib.Path(skattr.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if path.name in _ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _ROW_READERS):
                offenders.append(f"{path.relative_to(root)}:{node.lineno} "
                                 f".{node.func.attr}(...)")
    assert not offenders, "read rows through skattr._data: " + ", ".join(offenders)

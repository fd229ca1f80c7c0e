"""The public names: what ``dir``, ``help`` and ``__all__`` show, and where."""

import importlib
import math
import pydoc

import numpy as np
import pandas as pd
import pytest

import skattr

PACKAGES = ["skattr"] + [
    f"skattr.{name}"
    for name in ("attacks", "audit", "backends", "calibration", "datasets", "dp",
                 "laws", "mechanisms", "noise",
                 "model_selection", "plotting", "predicates", "synth", "theta",
                 "utils", "wasserstein")
]

DP_FUNCTIONS = [
    "check_privacy_level",
    "epsilon_of_rho",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "randomized_response",
    "randomized_response_estimate",
    "randomized_response_variance",
    "rho_of_epsilon",
]

# Helpers the mechanisms call, no longer in skattr.theta: (private module, name).
THETA_INTERNALS = [
    ("skattr.laws._count_sensitivity", "BoxSensitivity"),
    ("skattr.laws._count_sensitivity", "count_sensitivity"),
    ("skattr.laws._count_sensitivity", "count_sensitivity_box"),
    ("skattr.theta._fit", "fit_group_moments"),
    ("skattr.theta._fit", "fit_joint_gaussian"),
    ("skattr.laws._resampled", "ResampledLaws"),
    ("skattr.laws._draws", "draw_subsets"),
    ("skattr.laws._draws", "quantile_bounds"),
    ("skattr.laws._draws", "tail_bounds"),
    ("skattr.theta._sampled", "MonteCarloMoments"),
    ("skattr.laws._sums", "bootstrap_exact_law"),
    ("skattr.laws._sums", "fit_exact_law"),
    ("skattr.laws._sums", "pair_pmfs"),
    ("skattr.laws._sums", "sum_sensitivity"),
]


def _is_dunder(name):
    return name.startswith("__") and name.endswith("__")


@pytest.mark.parametrize("package", PACKAGES)
def test_dir_lists_the_public_names_only(package):
    module = importlib.import_module(package)
    listed = dir(module)
    assert listed == sorted(module.__all__)
    assert [name for name in listed if name.startswith("_") and not _is_dunder(name)
            ] == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves(package):
    module = importlib.import_module(package)
    assert len(set(module.__all__)) == len(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
    namespace = {}
    exec(f"from {package} import *", namespace)
    assert set(module.__all__) <= set(namespace)


def test_every_public_package_is_listed_at_the_top():
    public = {name for name in skattr.__all__
              if isinstance(getattr(skattr, name), type(skattr))}
    assert {package.rsplit(".", 1)[-1] for package in PACKAGES[1:]} <= public


def test_private_modules_stay_importable_and_patchable(monkeypatch):
    # dir() hides them; attribute access, imports and monkeypatch still work.
    query = importlib.import_module("skattr._query")
    assert skattr._query is query
    assert "_query" not in dir(skattr)
    monkeypatch.setattr("skattr.dp._primitives.check_random_state",
                        lambda _: np.random.default_rng(7))
    reports = skattr.dp.randomized_response(["a", "b"] * 50, 0.1)
    expected = skattr.dp.randomized_response(["a", "b"] * 50, 0.1, random_state=7)
    np.testing.assert_array_equal(reports, expected)


def test_help_documents_the_public_names():
    text = pydoc.render_doc(skattr, renderer=pydoc.plaintext)
    contents = text.split("PACKAGE CONTENTS", 1)[1].split("CLASSES", 1)[0]
    assert "dp (package)" in contents
    assert "mechanisms (package)" in contents
    text = pydoc.render_doc(skattr.mechanisms, renderer=pydoc.plaintext)
    assert "class AttributePrivateGaussian" in text
    assert "randomized_response" not in text


# --------------------------------------------------------------------------------
# skattr.dp: the classic record-level primitives, moved out of skattr.mechanisms
# --------------------------------------------------------------------------------


def test_dp_exports_exactly_the_primitives():
    assert sorted(skattr.dp.__all__) == DP_FUNCTIONS


@pytest.mark.parametrize("name", DP_FUNCTIONS)
def test_mechanisms_no_longer_exposes_the_primitives(name):
    assert name not in skattr.mechanisms.__all__
    assert not hasattr(skattr.mechanisms, name)
    with pytest.raises(ImportError):
        exec(f"from skattr.mechanisms import {name}", {})


def test_primitives_module_moved_to_dp():
    assert importlib.import_module("skattr.dp._primitives").__all__ == [
        f for f in DP_FUNCTIONS
        if f not in ("check_privacy_level", "epsilon_of_rho", "rho_of_epsilon")]
    assert importlib.import_module("skattr.dp._zcdp").__all__ == [
        "epsilon_of_rho", "rho_of_epsilon"]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("skattr.mechanisms._primitives")


def test_dp_randomized_response_is_seeded():
    values = pd.Series(["a", "b", "c"] * 400, name="answer")
    first = skattr.dp.randomized_response(values, 0.5, categories=["a", "b", "c"],
                                          random_state=3)
    again = skattr.dp.randomized_response(values, 0.5, categories=["a", "b", "c"],
                                          random_state=3)
    pd.testing.assert_series_equal(first, again)
    assert first.name == "answer" and set(first) <= {"a", "b", "c"}
    # Kept with probability e^0.5 / (e^0.5 + 2) = 0.452; 6 standard errors.
    keep = math.exp(0.5) / (math.exp(0.5) + 2)
    assert abs((first == values).mean() - keep) < 6 * math.sqrt(
        keep * (1 - keep) / values.size)


def test_dp_randomized_response_estimate_inverts_the_channel():
    reports = ["x"] * 70 + ["y"] * 30
    got = skattr.dp.randomized_response_estimate(reports, 1.0, categories=["x", "y"])
    e = math.e
    keep, other = e / (e + 1), 1 / (e + 1)
    assert got["x"] == pytest.approx((0.7 - other) / (keep - other))
    assert got.sum() == pytest.approx(1.0)


def test_dp_randomized_response_variance_binary_closed_form():
    # For k = 2 the variance is e^eps / (n (e^eps - 1)^2), whatever p.
    got = skattr.dp.randomized_response_variance(500, 0.2, 0.7)
    assert got == pytest.approx(math.exp(0.7) / (500 * math.expm1(0.7) ** 2))


def test_dp_exponential_mechanism_probabilities_are_a_softmax():
    got = skattr.dp.exponential_mechanism_probabilities([1.0, 3.0], 2.0, 1.0)
    weights = np.exp([1.0, 3.0])  # exp(eps * score / (2 * sensitivity))
    np.testing.assert_allclose(got, weights / weights.sum())


def test_dp_exponential_mechanism_is_seeded():
    candidates, scores = ["low", "mid", "high"], [0.0, 5.0, 10.0]
    draws = [skattr.dp.exponential_mechanism(candidates, scores, 1.0, 1.0,
                                             random_state=seed) for seed in range(5)]
    assert draws == [skattr.dp.exponential_mechanism(candidates, scores, 1.0, 1.0,
                                                     random_state=seed)
                     for seed in range(5)]
    assert set(draws) <= set(candidates)


# --------------------------------------------------------------------------------
# skattr.theta: the Theta objects and the laws users call; helpers stay private
# --------------------------------------------------------------------------------


def test_theta_exports_what_users_pass_or_call():
    assert sorted(skattr.theta.__all__) == [
        "Bootstrap", "ConfidenceBand", "ConfidenceBox", "ExpertTheta",
        "GroupMoments",
        "JointGaussian", "MonteCarlo", "ProbabilityBox", "Resample", "SumLaws",
        "ThetaSpec",
        "count_pmf", "joint_law", "sum_pmf",
    ]


@pytest.mark.parametrize("module, name", THETA_INTERNALS)
def test_theta_internals_live_in_their_private_modules(module, name):
    assert name not in skattr.theta.__all__
    assert not hasattr(skattr.theta, name)
    assert callable(getattr(importlib.import_module(module), name))


def test_predicates_export_the_declarative_predicates():
    # Public as skattr.predicates, not at the top level: the top level keeps
    # the nouns of a release (Secret, Query, Statistic, Plan, Release, Ledger).
    assert sorted(skattr.predicates.__all__) == [
        "Above", "And", "AtLeast", "AtMost", "Below", "Between", "Equals", "Not",
        "OneOf", "Or", "Predicate"]
    assert not hasattr(skattr, "Above")

"""Every declared parameter constraint of every estimator, fed a value it refuses.

The walk reads each class's ``_parameter_constraints`` at collection time, so a
new parameter is covered without editing this file, and a constraint of a kind
the walker cannot violate fails the test instead of going untested.
"""

import math
import numbers
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.datasets import make_hospital
from skattr.exceptions import InvalidParameterError
from skattr.theta._protocol import GivesLaw
from skattr.utils import all_estimators
from skattr.utils._param_validation import (
    HasMethods,
    Interval,
    OneOrMore,
    Options,
    PositiveNumbers,
)

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


class _Opaque:
    """An instance of no type any estimator accepts."""

    def __repr__(self):
        return "<opaque>"


def _valid(cls):
    """An estimator of ``cls`` that fits the hospital data (see test_common)."""
    accepted = cls().get_params()
    params = {"secret": SECRET, "random_state": 0}
    if "bounds" in accepted:
        params["bounds"] = (0.0, 400.0)
    if "law" in accepted:
        # law="auto" refuses four continuous statistics; the Gaussian law of
        # their means is what test_common takes too.
        params["law"] = "gaussian"
    if "network" in accepted and cls.mechanism_name == "markov-quilt":
        params["network"] = skattr.bayes.ParameterNetwork(
            parents={}, grids={"gender": [0.4, 0.6]}, cpts={"gender": [0.5, 0.5]})
    if "transition" in accepted:
        params["transition"] = [[0.8, 0.2], [0.3, 0.7]]
    return cls(**params)


def _accepts(constraint, value) -> bool:
    """Whether ``value`` meets ``constraint``, read from its declaration alone."""
    if constraint is None:
        return value is None
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    if isinstance(constraint, Interval):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        if constraint.kind == "integral" and not isinstance(value, numbers.Integral):
            return False
        if not math.isfinite(value):
            return False
        closed_left = constraint.closed in ("both", "left")
        closed_right = constraint.closed in ("both", "right")
        if constraint.left is not None and not (
                value >= constraint.left if closed_left else value > constraint.left):
            return False
        return constraint.right is None or (
            value <= constraint.right if closed_right else value < constraint.right)
    if isinstance(constraint, Options):
        try:
            return value in constraint.values
        except TypeError:
            return False
    if constraint == "random_state":
        return value is None or (
            isinstance(value, (numbers.Integral, np.random.Generator,
                               np.random.RandomState))
            and not isinstance(value, bool))
    if isinstance(constraint, OneOrMore):
        if isinstance(value, constraint.type):
            return True
        if not isinstance(value, (list, tuple)):
            return False
        return bool(value) and all(isinstance(s, constraint.type) for s in value)
    if constraint == "callable":
        return callable(value)
    if constraint == "boolean":
        return isinstance(value, (bool, np.bool_))
    if isinstance(constraint, PositiveNumbers):
        # A non-empty flat list, tuple or array of real numbers (no bools,
        # no text), each finite and above 0.
        if isinstance(value, pd.Series):
            value = value.tolist()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, np.ndarray):
            if value.ndim != 1:
                return False
            value = value.tolist()
        if not isinstance(value, (list, tuple)) or not value:
            return False
        return all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                   and math.isfinite(v) and v > 0 for v in value)
    if isinstance(constraint, (HasMethods, GivesLaw)):
        # An instance (not a class) answering the methods; a Theta spec
        # also stating law kinds must state one the mechanism calibrates.
        methods = (constraint.methods if isinstance(constraint, HasMethods)
                   else ("fit_law",))
        if isinstance(value, type) or not all(
                callable(getattr(value, m, None)) for m in methods):
            return False
        kinds = getattr(value, "law_kinds", None)
        return (isinstance(constraint, HasMethods) or kinds is None
                or bool(set(kinds) & set(constraint.kinds)))
    raise AssertionError(f"the walker does not know the constraint {constraint!r}")


class _SpecOfNoKind:
    """A Theta spec giving a law of a kind no mechanism calibrates."""

    law_kinds = ("no-such-kind",)

    def fit_law(self, request):
        raise AssertionError("a refused spec is never asked for its law")


def _violators(constraint) -> list:
    """Values that break ``constraint``: its edges, wrong types, non-finite."""
    if constraint is None:
        return [_Opaque()]
    if isinstance(constraint, type):
        return [_Opaque(), "not-an-instance"]
    if isinstance(constraint, Interval):
        integral = constraint.kind == "integral"
        out = [float("nan"), float("inf"), -float("inf"), "1", True]
        for bound, closed, step in (
                (constraint.left, constraint.closed in ("both", "left"), -1),
                (constraint.right, constraint.closed in ("both", "right"), 1)):
            if bound is None:
                continue
            beyond = [bound + step] if closed else [bound, bound + step]
            out += [int(v) if integral else float(v) for v in beyond]
            if integral:
                # A real number inside the interval is not an integer.
                out.append(float(bound) - step * 0.5)
        return out
    if isinstance(constraint, Options):
        words = sorted(v for v in constraint.values if isinstance(v, str))
        out = ["not-an-option", _Opaque()]
        if words:
            # Options compare exactly: a different case is another word.
            out.append(words[0].upper())
        return out
    if constraint == "random_state":
        return ["seed", 0.5, True]
    if isinstance(constraint, OneOrMore):
        return ["gender", 42, [], ["gender"]]
    if constraint == "callable":
        return [42]
    if constraint == "boolean":
        return [1, "yes", None]
    if isinstance(constraint, PositiveNumbers):
        return [[], [0.0], [1.0, -1.0], [1.0, float("nan")], [1.0, float("inf")],
                [[1.0, 2.0]], [True], ["1"], "12", 3.0, _Opaque(),
                pd.Series([1.0, 0.0]), pd.DataFrame({"a": [1.0]}), {},
                {"a": 0.0}, {"a": "1"}]
    if isinstance(constraint, (HasMethods, GivesLaw)):
        # No method at all; the class instead of an instance; a spec of
        # another kind of law.
        return [_Opaque(), _SpecOfNoKind, _SpecOfNoKind()]
    raise AssertionError(f"the walker cannot violate the constraint {constraint!r}")


def _bad_values(constraints) -> list:
    """Violators of any one constraint that every other constraint refuses too."""
    candidates = {(type(v), repr(v)): v for c in constraints for v in _violators(c)}
    return [v for v in candidates.values()
            if not any(_accepts(c, v) for c in constraints)]


# Bugs this test found, by parameter (every estimator shares the check), to be
# fixed in skattr; then the marker goes.
KNOWN_BUGS: dict = {}


def _cases():
    cases = []
    for name, cls in all_estimators():
        for parameter in cls._parameter_constraints:
            reason = KNOWN_BUGS.get(parameter)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(cls, parameter, id=f"{name}-{parameter}",
                                      marks=marks))
    return cases


@pytest.fixture(scope="module")
def hospital():
    return make_hospital(200, random_state=0)


@pytest.mark.parametrize("cls", [cls for _, cls in all_estimators()],
                         ids=[name for name, _ in all_estimators()])
def test_reference_estimator_fits(cls, hospital):
    # The estimator each violation starts from is valid: only the violated
    # parameter can make its fit fail.
    with warnings.catch_warnings():
        warnings.simplefilter("error", skattr.exceptions.PrivacyLeakWarning)
        fitted = _valid(cls).fit(hospital)
    assert fitted.n_features_in_ == hospital.shape[1]


@pytest.mark.parametrize("cls, parameter", _cases())
def test_invalid_parameter_is_refused_at_fit(cls, parameter, hospital):
    constraints = cls._parameter_constraints[parameter]
    assert parameter in cls().get_params(), (
        f"{cls.__name__} declares a constraint for {parameter!r}, which it does "
        "not take")
    values = _bad_values(constraints)
    assert values, (f"no value violates every constraint of {cls.__name__}."
                    f"{parameter}: {constraints}")
    failures = []
    for value in values:
        estimator = _valid(cls).set_params(**{parameter: value})
        expected = (rf"The '{parameter}' parameter of {cls.__name__} must be "
                    rf".+\. Got {re.escape(repr(value))} instead\.")
        try:
            estimator.fit(hospital)
        except InvalidParameterError as exc:
            if not re.fullmatch(expected, str(exc), flags=re.DOTALL):
                failures.append(f"{value!r}: message {str(exc)!r}")
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(f"{value!r}: {type(exc).__name__}: {exc}")
        else:
            failures.append(f"{value!r}: accepted")
    assert not failures, "\n".join(failures)


def test_walker_knows_every_declared_constraint():
    # A constraint kind the walker cannot violate would go untested.
    for name, cls in all_estimators():
        for parameter, constraints in cls._parameter_constraints.items():
            for constraint in constraints:
                bad = _violators(constraint)
                assert bad, f"{name}.{parameter}: nothing violates {constraint!r}"
                assert not any(_accepts(constraint, v) for v in bad), (
                    f"{name}.{parameter}: a violator of {constraint!r} meets it")


def test_walker_violators_are_refused_by_the_declared_constraint():
    # The walker's reading of Interval and Options agrees with skattr's own.
    for constraint in (Interval("real", 0, 1, closed="left"),
                       Interval("integral", 1, None, closed="left"),
                       Interval("real", 0, None, closed="neither"),
                       Options(frozenset({"analytic", "classic"}))):
        for value in _violators(constraint):
            assert not constraint.is_satisfied_by(value), (constraint, value)

"""Input fuzzing: every call releases with a certificate or raises skattr's error.

Generated frames (NaN, +/-inf, mixed object columns, nullable dtypes,
categoricals with unused categories, duplicate and non-string column labels,
secret groups with no record, 1e300, single rows, empty frames, bool and
datetime columns) and bad parameters go through the accessor's verbs, the
ledger, every estimator's fit/release and ``skattr release``. The outcome is
either a certified result (finite values, epsilon > 0 finite, delta in
[0, 1)) or a :class:`skattr.exceptions.SkattrError` (a ValueError); never
another exception, a NaN or an uncertified value.

Every example is seeded (``derandomize=True``); the number of cases tried is
printed in the terminal summary ("test_fuzz: N fuzz cases"). A test that
could only ever refuse would pass: each fuzz test has floors
(``@pytest.mark.floors``) on how many of its calls released, by entry point,
and on the kinds of its refusals.
"""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from _fuzzing import (
    CAMPAIGN_SETTINGS,
    CASES,
    FUZZ_SETTINGS,
    assert_floors,  # noqa: F401  (tests/conftest.py calls it for the floors)
    attempt,
    deadline,
    record,
    tally,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import pandas as hpd

import skattr
from skattr.cli import main
from skattr.datasets import make_hospital
from skattr.mechanisms import MECHANISMS


@pytest.fixture(autouse=True)
def _tally(request):
    """Count each test's calls apart (see :func:`_fuzzing.tally`)."""
    yield from tally(request)


# ---------------------------------------------------------------------------
# Nasty columns.

def _column(kind, n, rng, secret=False):
    """A column of ``kind`` with n values (the secret's or a released one)."""
    g = rng.random(n) < 0.5
    x = rng.normal(150.0, 20.0, n)
    if kind == "float":
        return pd.Series(x)
    if kind == "int":
        return pd.Series(np.round(x).astype(np.int64))
    if kind == "nan":
        return pd.Series(np.where(rng.random(n) < 0.2, np.nan, x))
    if kind == "inf":
        return pd.Series(np.where(rng.random(n) < 0.2, np.inf, x))
    if kind == "-inf":
        return pd.Series(np.where(rng.random(n) < 0.2, -np.inf, x))
    if kind == "huge":
        return pd.Series(np.where(rng.random(n) < 0.3, 1e300, x))
    if kind == "tiny":
        return pd.Series(x * 1e-300)
    if kind == "constant":
        return pd.Series(np.full(n, 7.0))
    if kind == "object-mixed":
        return pd.Series([v if i % 3 else "n/a" for i, v in enumerate(x)],
                         dtype=object)
    if kind == "object-numbers":
        return pd.Series(list(x), dtype=object)
    if kind == "object-none":
        return pd.Series([None if i % 4 == 0 else v for i, v in enumerate(x)],
                         dtype=object)
    if kind == "Int64":
        return pd.Series(pd.array([None if i % 5 == 0 else int(v)
                                   for i, v in enumerate(x)], dtype="Int64"))
    if kind == "Int64-full":
        return pd.Series(pd.array(np.round(x).astype(int), dtype="Int64"))
    if kind == "Float64":
        return pd.Series(pd.array([None if i % 5 == 0 else v
                                   for i, v in enumerate(x)], dtype="Float64"))
    if kind == "Float64-full":
        return pd.Series(pd.array(x, dtype="Float64"))
    if kind == "boolean":
        return pd.Series(pd.array([None if i % 5 == 0 else bool(v)
                                   for i, v in enumerate(g)], dtype="boolean"))
    if kind == "bool":
        return pd.Series(g)
    if kind == "string":
        return pd.Series(np.where(g, "a", "b"), dtype="string")
    if kind == "string-na":
        return pd.Series(pd.array([None if i % 5 == 0 else ("a" if v else "b")
                                   for i, v in enumerate(g)], dtype="string"))
    if kind == "object-str":
        return pd.Series(np.where(g, "a", "b"), dtype=object)
    if kind == "category":
        return pd.Series(pd.Categorical(np.where(g, "a", "b"),
                                        categories=["a", "b", "unused"]))
    if kind == "category-int":
        return pd.Series(pd.Categorical(g.astype(int), categories=[0, 1, 2]))
    if kind == "only-b":
        # The secret's category "a" has no record: an empty secret group.
        return pd.Series(["b"] * n, dtype=object)
    if kind == "category-only-b":
        return pd.Series(pd.Categorical(["b"] * n, categories=["a", "b"]))
    if kind == "datetime":
        return pd.Series(pd.Timestamp("2020-01-01")
                         + pd.to_timedelta(np.arange(n), unit="D"))
    if kind == "timedelta":
        return pd.Series(pd.to_timedelta(np.arange(n), unit="h"))
    if kind == "complex":
        return pd.Series(x + 1j)
    raise ValueError(kind)


SECRET_KINDS = ["object-str", "string", "string-na", "category", "only-b",
                "category-only-b", "bool", "boolean", "int", "float", "nan",
                "object-mixed", "datetime", "category-int"]
VALUE_KINDS = ["float", "int", "nan", "inf", "-inf", "huge", "tiny", "constant",
               "object-mixed", "object-numbers", "object-none", "Int64",
               "Int64-full", "Float64", "Float64-full", "boolean", "bool",
               "string", "category", "datetime", "timedelta", "complex"]
FAIR_SECRETS = ["object-str", "string", "category", "bool", "category-int",
                "int", "only-b", "category-only-b"]
FAIR_VALUES = ["float", "int", "huge", "tiny", "constant", "object-numbers",
               "Int64-full", "Float64-full", "bool"]
LABELS = {
    "str": ("g", "x", "z"),
    "int": (0, 1, 2),
    "mixed": ("g", 1, 2.5),
    "tuple": (("s", "g"), ("v", "x"), ("v", "z")),
    "duplicate": ("g", "x", "x"),
    "bool": (True, False, None),
}


def _secret_category(kind):
    """The category whose proportion is the secret, for a secret column kind."""
    return {"bool": True, "boolean": True, "int": 1, "category-int": 1,
            "float": 150.0, "nan": 150.0, "datetime": pd.Timestamp("2020-01-01"),
            }.get(kind, "a")


def _frame(n, secret_kind, value_kinds, labels, rng):
    columns = [_column(secret_kind, n, rng, secret=True)]
    columns += [_column(k, n, rng) for k in value_kinds]
    frame = pd.concat(columns, axis=1, ignore_index=True) if n else pd.DataFrame(
        {i: c for i, c in enumerate(columns)})
    frame.columns = list(labels[:len(columns)])
    return frame


@st.composite
def cases(draw):
    """A private frame, a reference, a secret, and the call's parameters."""
    # Half the cases have only releasable columns and fair parameters, so
    # that the release path (not only the refusals) is fuzzed.
    fair = draw(st.booleans())
    labels = LABELS[draw(st.sampled_from(["str", "int", "tuple"] if fair
                                         else sorted(LABELS)))]
    secret_kind = draw(st.sampled_from(FAIR_SECRETS if fair else SECRET_KINDS))
    value_kinds = draw(st.lists(st.sampled_from(FAIR_VALUES if fair
                                                else VALUE_KINDS),
                                min_size=1, max_size=2))
    n = draw(st.sampled_from([40, 40, 30, 1, 2, 5] if fair else [0, 1, 2, 5, 40]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    private = _frame(n, secret_kind, value_kinds, labels, rng)
    reference_kind = draw(st.sampled_from(
        ["clean", "same"] if fair else ["clean", "same", "self", "empty",
                                        "tiny", "none"]))
    if reference_kind == "clean":
        # A fair case's secret column is coded alike in both frames (a number
        # against its text is refused, tests/test_aligned_frames.py).
        reference = _frame(150, secret_kind if fair else "object-str",
                           ["float"] * len(value_kinds), labels, rng)
    elif reference_kind == "same":
        reference = _frame(150, secret_kind, value_kinds, labels, rng)
    elif reference_kind == "empty":
        reference = _frame(0, secret_kind, value_kinds, labels, rng)
    elif reference_kind == "tiny":
        reference = _frame(3, secret_kind, value_kinds, labels, rng)
    else:
        reference = {"self": "self", "none": None}[reference_kind]
    category = draw(st.sampled_from(
        [_secret_category(secret_kind)] if fair
        else [_secret_category(secret_kind), "a", "missing", None]))
    pairs = draw(st.sampled_from(
        [[(0.4, 0.6)], [(0.2, 0.8)], [(0.3, 0.5), (0.5, 0.7)]] if fair
        else [[(0.4, 0.6)], [(0.0, 1.0)], [(0.6, 0.4)], [(0.5, 0.5)],
              [(-0.1, 0.5)], [(0.2, float("nan"))]]))
    return dict(fair=fair, private=private, reference=reference, labels=labels,
                secret_column=labels[0], category=category, pairs=pairs,
                released=list(labels[1:1 + len(value_kinds)]),
                epsilon=draw(st.sampled_from(
                    [1.0, 0.5, 4.0, 1e6, 1e-3] if fair
                    else [1.0, 0.0, -1.0, float("nan"), float("inf"), 1e-300,
                          1e300, "1", True, None])),
                delta=draw(st.sampled_from(
                    [None, None, 1e-3, 1e-6] if fair
                    else [None, 1e-3, 0.0, 1.0, -0.1, float("nan"), 1e-300])),
                mechanism=draw(st.sampled_from(
                    ["auto", "apgm", "dp-laplace", "dp-gaussian", "optimal"]
                    if fair else
                    ["auto", "apgm", "wasserstein", "approx-wasserstein",
                     "dp-laplace", "dp-gaussian", "optimal", "expm-laplace",
                     "markov-quilt", "bogus"])))


def _secret(case):
    return skattr.Secret.proportion(case["secret_column"], case["category"],
                                    pairs=case["pairs"])


def _params(case):
    # The plug-in Theta keeps a case fast (the bootstrap's 50 replicates
    # make optimal's leakage take 10 s); the fuzz is about the inputs.
    params = {"law": "gaussian", "theta": "moments"} if case["mechanism"] in (
        "apgm", "optimal", "expm-laplace") else {}
    if case["mechanism"].startswith("dp-"):
        params["bounds"] = (0.0, 400.0)
    # A fair case asks no delta of Laplace noise, which certifies delta = 0
    # (asking it is refused: an unfair case tries that).
    if case["delta"] is not None and not (
            case.get("fair") and case["mechanism"] == "dp-laplace"):
        params["delta"] = case["delta"]
    return params


def _counted(case):
    """The value a count or proportion counts.

    'a' (the text of the secret's and the text columns' codes); a fair case
    counts a value its first released column holds, so that counts of
    numbers are released too, not only refused as text among numbers.
    """
    if not case.get("fair"):
        return "a"
    for frame in (case["private"], case["reference"]):
        if isinstance(frame, pd.DataFrame) and len(frame):
            value = frame[case["released"][0]].iloc[0]
            return value.item() if isinstance(value, np.generic) else value
    return "a"


_ACCESSOR_VERBS = ["mean", "sum", "count", "proportion", "median", "quantile",
                   "std", "plan", "leakage", "ledger-mean", "ledger-quantile"]


def _call(case, verb):
    """Return the zero-argument call of ``verb`` on the case's private frame."""
    frame, columns = case["private"], case["released"]

    def run():
        accessor = frame.attrpriv
        secret = _secret(case)
        kw = dict(secret=secret, reference=case["reference"],
                  mechanism=case["mechanism"], random_state=0, **_params(case))
        if case["mechanism"] == "auto" and verb not in (
                "median", "quantile", "std", "ledger-quantile"):
            # The exact law of an integer mean under the bootstrap Theta takes
            # minutes for 40 records (reported); the plug-in takes a second.
            kw["theta"] = "moments"
        if verb in ("mean", "sum", "median", "std"):
            return getattr(accessor, verb)(columns, epsilon=case["epsilon"], **kw)
        if verb in ("count", "proportion"):
            return getattr(accessor, verb)(columns, _counted(case),
                                           epsilon=case["epsilon"], **kw)
        if verb == "quantile":
            return accessor.quantile(columns, [0.1, 0.9], epsilon=case["epsilon"],
                                     monotone=True, **kw)
        if verb == "plan":
            return accessor.plan(columns, epsilon=case["epsilon"], **kw)
        if verb == "leakage":
            kw.pop("random_state")
            kw["delta"] = kw.get("delta", 1e-3)
            return accessor.leakage(columns, **kw)
        # A ledger refuses reference='self' (tests/test_ledger.py): here it
        # reads the case's table as its public reference, so the fuzzed
        # ledgers reach their releases.
        reference = case["reference"]
        if isinstance(reference, str):
            reference = case["private"].copy()
        ledger = accessor.ledger(secret=secret, reference=reference,
                                 budget=(3.0, 1e-3), random_state=0,
                                 law=_params(case).get("law"),
                                 theta=_params(case).get("theta", "auto"))
        if verb == "ledger-mean":
            return ledger.mean(columns, epsilon=case["epsilon"])
        return ledger.quantile(columns[:1], [0.5], epsilon=case["epsilon"])

    return run


def _fair_ledger_case():
    """A plain case a ledger releases: the floor is not left to the draw."""
    rng = np.random.default_rng(0)
    labels = LABELS["str"]
    return dict(fair=True, private=_frame(40, "object-str", ["float"], labels, rng),
                reference=_frame(150, "object-str", ["float"], labels, rng),
                labels=labels, secret_column=labels[0],
                category=_secret_category("object-str"), pairs=[(0.4, 0.6)],
                released=[labels[1]], epsilon=1.0, delta=None, mechanism="auto")


# Released 5 of 53 calls of the accessor's verbs, 1 of 8 of a ledger's (7
# calls of a ledger drawn after the frames' codings were checked alike
# released none, so one plain ledger case is always among them).
@pytest.mark.slow
@pytest.mark.floors({"accessor": 2, "ledger": 1})
@FUZZ_SETTINGS
@given(case=cases(), verb=st.sampled_from(_ACCESSOR_VERBS))
@example(case=_fair_ledger_case(), verb="ledger-mean")
def test_accessor_certifies_or_refuses(case, verb):
    attempt(f"accessor.{verb}", _call(case, verb))


# Released 12 of 60.
@pytest.mark.slow
@pytest.mark.floors({"estimator": 6})
@FUZZ_SETTINGS
@given(case=cases(), name=st.sampled_from(sorted(MECHANISMS)))
def test_estimators_certify_or_refuse(case, name):
    cls = MECHANISMS[name]
    accepted = cls().get_params()
    params = {k: v for k, v in _params({**case, "mechanism": name}).items()
              if k in accepted}
    if "law" in accepted:
        params["law"] = "gaussian"
        params["theta"] = "moments"
    if name == "markov-quilt":
        params["network"] = skattr.bayes.ParameterNetwork(
            parents={}, grids={case["secret_column"]: [0.4, 0.6]},
            cpts={case["secret_column"]: [0.5, 0.5]})
    if name == "markov-quilt-swc":
        params["transition"] = [[0.8, 0.2], [0.3, 0.7]]
    if "bounds" in accepted:
        params["bounds"] = (0.0, 400.0)
    reference = case["reference"]
    if not isinstance(reference, pd.DataFrame):
        reference = case["private"]

    def run():
        est = cls(query=skattr.Query.mean(case["released"]), secret=_secret(case),
                  epsilon=case["epsilon"], random_state=0, **params)
        est.fit(reference)
        return est.release(case["private"])

    attempt(f"estimator.{name}", run)


# ---------------------------------------------------------------------------
# hypothesis.extra.pandas: arbitrary floats and categories in two columns.

_floats = st.floats(allow_nan=True, allow_infinity=True, width=64)


# Released 17 of 60.
@pytest.mark.slow
@pytest.mark.floors({"extra.pandas": 8})
@FUZZ_SETTINGS
@given(private=hpd.data_frames(
           [hpd.column("g", elements=st.sampled_from(["a", "b", "c"])),
            hpd.column("x", elements=_floats),
            hpd.column("y", dtype="int64",
                       elements=st.integers(-(2**40), 2**40))],
           index=hpd.range_indexes(min_size=0, max_size=30)),
       verb=st.sampled_from(["mean", "sum", "count", "median", "plan"]),
       mechanism=st.sampled_from(["auto", "dp-laplace", "apgm"]))
def test_arbitrary_values_certify_or_refuse(private, verb, mechanism):
    reference = make_hospital(150, random_state=0).rename(
        columns={"gender": "g", "weight": "x", "height": "y"})[["g", "x", "y"]]
    reference["g"] = reference["g"].map({"female": "a", "other": "b"})
    reference["y"] = reference["y"].round().astype("int64")
    case = dict(fair=True, private=private, reference=reference, secret_column="g",
                category="a", pairs=[(0.4, 0.6)], released=["x", "y"],
                epsilon=1.0, delta=None, mechanism=mechanism)
    attempt(f"extra.pandas.{verb}", _call(case, verb))


# ---------------------------------------------------------------------------
# An explicit table of nasty cases, each with the outcome it must have.

def _hospital(n=60, seed=1):
    return make_hospital(n, random_state=seed)


REF = make_hospital(400, random_state=0)
SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


def _with(frame, **columns):
    frame = frame.copy()
    for name, values in columns.items():
        frame[name] = values
    return frame


def _nasty():
    h = _hospital()
    n = len(h)
    kw = dict(secret=SECRET, reference=REF, random_state=0)
    gauss = dict(kw, law="gaussian", mechanism="apgm")
    return {
        # (call, expected outcome)
        "NaN in a released column": (
            lambda: _with(h, weight=np.r_[np.nan, h.weight[1:]]).attrpriv.mean(
                ["weight"], **kw), "refused"),
        "+inf in a released column": (
            lambda: _with(h, weight=np.r_[np.inf, h.weight[1:]]).attrpriv.mean(
                ["weight"], **gauss), "refused"),
        "-inf in a released column (median)": (
            lambda: _with(h, weight=np.r_[-np.inf, h.weight[1:]]).attrpriv.median(
                ["weight"], **kw), "refused"),
        "1e300 in a released column (mean)": (
            lambda: _with(h, weight=np.r_[1e300, h.weight[1:]]).attrpriv.mean(
                ["weight"], **gauss), None),
        "1e300 in every record (sum)": (
            lambda: _with(h, weight=np.full(n, 1e300)).attrpriv.sum(
                ["weight"], **gauss), None),
        "1e300 in the reference": (
            lambda: h.attrpriv.mean(["weight"], **dict(gauss, reference=_with(
                REF, weight=np.r_[1e300, REF.weight[1:]]))), None),
        "1e300 under dp-laplace": (
            lambda: _with(h, weight=np.r_[1e300, h.weight[1:]]).attrpriv.mean(
                ["weight"], secret=SECRET, mechanism="dp-laplace",
                bounds=(0, 400), random_state=0), None),
        "Int64 with NA": (
            lambda: _with(h, weight=pd.array([None] + [1] * (n - 1),
                                             dtype="Int64")).attrpriv.mean(
                ["weight"], **gauss), "refused"),
        "Float64 with NA": (
            lambda: _with(h, weight=pd.array([None] + [1.0] * (n - 1),
                                             dtype="Float64")).attrpriv.sum(
                ["weight"], **gauss), "refused"),
        "boolean with NA (proportion)": (
            lambda: _with(h, flag=pd.array([None] + [True] * (n - 1),
                                           dtype="boolean")).attrpriv.proportion(
                ["flag"], **kw), None),
        "string column released": (
            lambda: _with(h, weight=h.weight.astype(str).astype("string")
                          ).attrpriv.mean(["weight"], **kw), "refused"),
        "datetime column released": (
            lambda: _with(h, when=pd.Timestamp("2020-01-01")).attrpriv.mean(
                ["when"], **kw), "refused"),
        "mixed object column released": (
            lambda: _with(h, weight=[1, "a"] * (n // 2)).attrpriv.mean(
                ["weight"], **kw), "refused"),
        "categorical secret with unused categories": (
            lambda: _with(h, gender=pd.Categorical(
                h.gender, categories=["female", "other", "unused"])).attrpriv.mean(
                ["weight"], **dict(gauss, reference=_with(REF, gender=pd.Categorical(
                    REF.gender, categories=["female", "other", "unused"])))),
            "released"),
        "no record of the secret's category in the reference": (
            lambda: h.attrpriv.mean(["weight"], **dict(
                gauss, reference=REF[REF.gender == "other"])), "refused"),
        "no record of the secret's category in the private data": (
            lambda: h[h.gender == "other"].attrpriv.mean(["weight"], **gauss),
            "released"),
        "single private row": (
            lambda: h.iloc[:1].attrpriv.mean(["weight"], **gauss), None),
        "single private row (median)": (
            lambda: h.iloc[:1].attrpriv.median(["weight"], **kw), None),
        "empty private frame": (
            lambda: h.iloc[:0].attrpriv.mean(["weight"], **kw), "refused"),
        "empty private frame (plan)": (
            lambda: h.iloc[:0].attrpriv.plan(["weight"], **gauss), "refused"),
        "empty reference": (
            lambda: h.attrpriv.mean(["weight"], **dict(kw, reference=REF.iloc[:0])),
            "refused"),
        "no columns": (
            lambda: pd.DataFrame(index=range(5)).attrpriv.mean(**kw), "refused"),
        "integer column labels": (
            lambda: h.set_axis(range(5), axis=1).attrpriv.mean(
                [2], **dict(gauss, secret=skattr.Secret.proportion(
                    0, "female", pairs=[(0.4, 0.6)]),
                    reference=REF.set_axis(range(5), axis=1))), "released"),
        "string and integer column labels (was a TypeError)": (
            lambda: h.rename(columns={"weight": 1}).attrpriv.mean(
                [1], **dict(gauss, reference=REF.rename(columns={"weight": 1}))),
            "refused"),
        "unknown column": (
            lambda: h.attrpriv.mean(["weigth"], **kw), "refused"),
        "the secret's own column released": (
            lambda: h.attrpriv.mean(["gender"], **kw), "refused"),
        "bool column released (mean)": (
            lambda: _with(h, tall=h.height > 68).attrpriv.mean(
                ["tall"], **dict(kw, reference=_with(REF, tall=REF.height > 68))),
            "released"),
        "epsilon NaN": (
            lambda: h.attrpriv.mean(["weight"], **dict(gauss, epsilon=np.nan)),
            "refused"),
        "epsilon inf": (
            lambda: h.attrpriv.mean(["weight"], **dict(gauss, epsilon=np.inf)),
            "refused"),
        "epsilon 1e300": (
            lambda: h.attrpriv.mean(["weight"], **dict(gauss, epsilon=1e300)),
            None),
        "delta 1": (
            lambda: h.attrpriv.mean(["weight"], **dict(gauss, delta=1.0)),
            "refused"),
        "pairs outside [0, 1]": (
            lambda: h.attrpriv.mean(["weight"], **dict(
                gauss, secret=skattr.Secret.proportion("gender", "female",
                                                       pairs=[(0.4, 1.2)]))),
            "refused"),
        "quantile level outside [0, 1]": (
            lambda: h.attrpriv.quantile(["weight"], 1.5, **kw), "refused"),
        "std with ddof >= n": (
            lambda: h.iloc[:2].attrpriv.std(["weight"], ddof=2, **kw), "refused"),
        "ledger over budget": (
            lambda: (lambda led: (led.mean(["weight"], epsilon=1.0),
                                  led.mean(["weight"], epsilon=5.0)))(
                h.attrpriv.ledger(secret=SECRET, reference=REF, law="gaussian",
                                  budget=(1.0, 1e-3), random_state=0))[1],
            "refused"),
        "ledger with a NaN budget": (
            lambda: h.attrpriv.ledger(secret=SECRET, reference=REF,
                                      budget=(np.nan, 1e-3)).mean(["weight"]),
            "refused"),
        "reference of another type": (
            lambda: h.attrpriv.mean(["weight"], **dict(kw, reference=[1, 2, 3])),
            "refused"),
    }


NASTY = _nasty()


@pytest.mark.parametrize("name", sorted(NASTY))
def test_nasty_case(name):
    call, expected = NASTY[name]
    outcome = attempt("nasty table", call)
    if expected is not None:
        assert outcome == expected, name


@pytest.mark.floors({}, refused_by=("NotFittedError",))
def test_estimator_before_fit_refuses():
    est = skattr.mechanisms.AttributePrivateGaussian(secret=SECRET)
    assert attempt("estimator unfitted", lambda: est.release(_hospital())) \
        == "refused"


# ---------------------------------------------------------------------------
# skattr release with bad arguments.

@pytest.fixture(scope="module")
def csv_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    files = {}
    h = make_hospital(60, random_state=1)
    files["private"] = h
    files["reference"] = make_hospital(200, random_state=0)
    files["nan"] = _with(h, weight=np.r_[np.nan, h.weight[1:]])
    files["huge"] = _with(h, weight=np.r_[1e300, h.weight[1:]])
    files["text"] = _with(h, weight=["heavy", "light"] * 30)
    files["one-row"] = h.iloc[:1]
    files["header-only"] = h.iloc[:0]
    paths = {}
    for name, frame in files.items():
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    paths["empty-file"] = folder / "empty.csv"
    paths["empty-file"].write_text("")
    paths["binary"] = folder / "binary.csv"
    paths["binary"].write_bytes(b"\xff\xfe\x00\x81weight\n\x00\x00")
    paths["missing"] = folder / "missing.csv"
    paths["folder"] = folder
    return paths


_CLI_OPTIONS = {
    "--columns": [["weight"], ["weight", "blood_pressure"], ["nope"],
                  ["gender"], ["weight", "weight"]],
    "--secret-column": ["gender", "weight", "nope"],
    "--secret-value": [None, "female", "nobody", "1.5"],
    "--pairs": [["0.4,0.6"], ["0.4,0.6"], ["0.6,0.4"], ["0.4"], ["a,b"],
                ["nan,0.5"], ["2,3"], ["0.4,0.6", "0.3,0.7"]],
    "--epsilon": [None, "1", "0", "-1", "nan", "inf", "1e300", "abc"],
    "--delta": [None, "1e-3", "0", "1", "-1", "nan"],
    "--mechanism": [None, "apgm", "dp-laplace", "wasserstein", "bogus"],
    "--statistic": [None, "mean", "sum", "count", "proportion", "median",
                    "quantile", "std", "variance"],
    "--q": [None, ["0.25", "0.75"], ["1.5"], ["x"]],
    "--bounds": [None, ["0,400"], ["weight=0,400"], ["400,0"], ["a"],
                 ["0,400", "weight=0,1"]],
    "--law": [None, "gaussian", "exact", "wrong"],
    "--theta": [None, "moments", "resample"],
    "--value": [None, "female", "1"],
    "--group-size": [None, "0", "-3", "5"],
    "--seed": [None, "0", "-1", "x"],
}


# Options of a release that should go through: half the cases take only these.
_FAIR_CLI_OPTIONS = {
    "--columns": [["weight"], ["weight", "blood_pressure"]],
    "--secret-column": ["gender"],
    "--secret-value": ["female"],
    "--pairs": [["0.4,0.6"], ["0.3,0.7"]],
    "--epsilon": [None, "1", "4", "1e6"],
    "--delta": [None, "1e-3", "1e-2"],
    "--statistic": [None, "mean", "median", "std"],
    "--seed": [None, "0", "7"],
}


@st.composite
def cli_args(draw, paths):
    fair = draw(st.booleans())
    data = draw(st.sampled_from(
        ["private", "huge"] if fair else
        ["private", "nan", "huge", "text", "one-row", "header-only",
         "empty-file", "binary", "missing", "folder"]))
    reference = draw(st.sampled_from(
        ["reference"] if fair else
        ["reference", "self", "missing", "header-only", "nan"]))
    argv = ["release", str(paths[data]), "--reference",
            "self" if reference == "self" else str(paths[reference])]
    for option, choices in (_FAIR_CLI_OPTIONS if fair else _CLI_OPTIONS).items():
        value = draw(st.sampled_from(choices))
        if option in ("--columns", "--secret-column", "--pairs") and value is None:
            continue
        if value is None:
            continue
        argv += [option, *(value if isinstance(value, list) else [value])]
    if draw(st.booleans()):
        argv.append("--plan")
    output = draw(st.sampled_from([None, "out.json", "out.csv", "folder"]))
    return argv, output


def _check_cli_output(path):
    if path.suffix == ".json":
        record = json.loads(path.read_text())
        assert math.isfinite(record["epsilon"]) and record["epsilon"] > 0
        assert 0 <= record["delta"] < 1
        values = record["values"]
        values = values.values() if isinstance(values, dict) else values
        assert all(math.isfinite(float(v)) for v in values), record
    else:
        written = pd.read_csv(path)
        assert np.isfinite(written["value"].to_numpy(dtype=float)).all()
        assert (written["epsilon"] > 0).all() and (written["delta"] < 1).all()


def _run_cli(argv, output, paths, tmp_dir, capsys):
    CASES["cli"] += 1
    if output == "folder":
        argv = [*argv, "--output", str(paths["folder"])]
        target = None
    elif output is not None:
        target = tmp_dir / output
        if target.exists():
            target.unlink()
        argv = [*argv, "--output", str(target)]
    else:
        target = None
    try:
        with deadline("cli"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = main(argv)
    except SystemExit as exc:
        # argparse refuses a malformed option before anything runs.
        assert exc.code == 2, (argv, exc.code)
        capsys.readouterr()
        return record("cli", "refused", "argparse")
    captured = capsys.readouterr()
    assert code in (0, 2), (argv, code)
    if code == 2:
        assert captured.err.startswith("skattr: error: "), captured.err
        return record("cli", "refused", "skattr: error")
    if "--plan" not in argv:
        assert "lower (95%)" in captured.out or "value" in captured.out
        if target is not None:
            _check_cli_output(target)
    return record("cli", "released")


# Released 9 of 30.
@pytest.mark.slow
@pytest.mark.floors({"cli": 4}, refused_by=("argparse", "skattr: error"))
@settings(FUZZ_SETTINGS, max_examples=30)   # a release through a CSV: ~0.4 s
@given(data=st.data())
def test_cli_release_certifies_or_refuses(csv_files, tmp_path_factory, capsys,
                                          data):
    argv, output = data.draw(cli_args(csv_files))
    _run_cli(argv, output, csv_files, tmp_path_factory.getbasetemp(), capsys)


# ---------------------------------------------------------------------------
# The campaign (slow; still run in CI): the same fuzzers, many more cases.

# Released 21 of 262 calls of the accessor's verbs, 4 of 38 of a ledger's
# (the ledger's floor is test_accessor_certifies_or_refuses's). The floor was
# set at 22 of 131 when the examples still drew on the constants of whichever
# of skattr's modules earlier tests had imported (_fuzzing.no_local_constants);
# at 150 examples the seeded stream released 13 (9 to 15 on others), too near
# it, so the campaign tries 300 (about 9 s).
@pytest.mark.slow
@pytest.mark.floors({"accessor": 11})
@settings(CAMPAIGN_SETTINGS, max_examples=300)   # most calls refuse in ms
@given(case=cases(), verb=st.sampled_from(_ACCESSOR_VERBS))
def test_campaign_accessor(case, verb):
    test_accessor_certifies_or_refuses.hypothesis.inner_test(case, verb)


# Released 35 of 150.
@pytest.mark.slow
@pytest.mark.floors({"estimator": 17})
@CAMPAIGN_SETTINGS
@given(case=cases(), name=st.sampled_from(sorted(MECHANISMS)))
def test_campaign_estimators(case, name):
    test_estimators_certify_or_refuse.hypothesis.inner_test(case, name)


# Released 39 of 80.
@pytest.mark.slow
@pytest.mark.floors({"cli": 19}, refused_by=("argparse", "skattr: error"))
@settings(CAMPAIGN_SETTINGS, max_examples=80)
@given(data=st.data())
def test_campaign_cli(csv_files, tmp_path_factory, capsys, data):
    argv, output = data.draw(cli_args(csv_files))
    _run_cli(argv, output, csv_files, tmp_path_factory.getbasetemp(), capsys)


# ---------------------------------------------------------------------------
# Faults the fuzzers found, each reproduced on the fuzzers' own frames (the
# secret drawn independently of the values, so the secret's groups have the
# same law). They fail (strict xfail) until skattr refuses these inputs with
# its own error or releases them with a certificate.

def _fuzz_frames(kinds, seed=0):
    rng = np.random.default_rng(seed)
    labels = ("g", "x", "z")
    return (_frame(40, "object-str", kinds, labels, rng),
            _frame(150, "object-str", kinds, labels, rng))


_FUZZ_SECRET = skattr.Secret.proportion("g", "a", pairs=[(0.4, 0.6)])


# A fault the fuzzer found: eigm's least-error search inverted a singular
# matrix when a released column is constant or nearly 0 (1e-298), raising
# numpy's LinAlgError instead of releasing or refusing.
@pytest.mark.parametrize("kinds", [["float", "constant"], ["float", "tiny"]])
def test_eigm_with_a_degenerate_column_certifies_or_refuses(kinds):
    private, reference = _fuzz_frames(kinds)

    def run():
        return MECHANISMS["eigm"](
            query=skattr.Query.mean(["x", "z"]), secret=_FUZZ_SECRET,
            law="gaussian", theta="moments", random_state=0).fit(
            reference).release(private)

    attempt("estimator.eigm", run)


# A fault the fuzzer found: a quantile of a column with values of 1e300 was
# released with Laplace noise of scale 1e300, whose covariance 2 b^2
# overflowed when the release was read; such noise is now refused.
@pytest.mark.slow
def test_a_quantile_with_noise_of_scale_1e300_certifies_or_refuses():
    private, reference = _fuzz_frames(["huge"])
    assert attempt("accessor.quantile", lambda: private.attrpriv.quantile(
        ["x"], [0.1, 0.9], secret=_FUZZ_SECRET, reference=reference,
        epsilon=1.0, monotone=True, random_state=0)) == "refused"
    # With the column clipped to a plausible range it is released.
    assert attempt("accessor.quantile", lambda: private.attrpriv.quantile(
        ["x"], [0.1, 0.9], secret=_FUZZ_SECRET, reference=reference,
        epsilon=1.0, delta=0.01, bounds={"x": (-1e3, 1e3)},
        random_state=0)) == "released"

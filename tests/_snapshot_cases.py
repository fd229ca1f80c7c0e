"""The behaviour snapshot's cases: what a user sees, recorded once and compared.

Each case is a call a user could make (a verb of ``df.attrpriv``, a plan, a
ledger, ``describe``, a bare estimator, a refusal) and its outcome in plain
data: a release's ``to_dict()`` and ``summary()`` text, a plan's figures, or
an error's class and message, with every warning raised on the way. The
snapshot (``tests/data/behaviour_snapshot.json``) was written by this module
before issue 45's refactoring (statistic kinds and Theta as types, which must
change nothing a user sees); ``tests/test_behaviour_snapshot.py`` replays it.

To rewrite it after a change of behaviour made on purpose (say which in the
commit)::

    SKATTR_DATA=... python tests/_snapshot_cases.py --write [NAME ...]

Only the named cases are rewritten when names are given.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

SNAPSHOT = Path(__file__).parent / "data" / "behaviour_snapshot.json"


def _frames():
    from skattr.datasets import make_hospital

    reference = make_hospital(2000, random_state=0)
    private = make_hospital(50, random_state=1)
    larger = make_hospital(200, random_state=2)
    return reference, private, larger


def _plain(value):
    """A JSON-able copy of ``value`` (floats kept exactly)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    if isinstance(value, pd.DataFrame):
        return {"columns": [str(c) for c in value.columns],
                "values": _plain(value.to_numpy().tolist())}
    if isinstance(value, pd.Series):
        return {"index": [str(i) for i in value.index],
                "values": _plain(value.tolist())}
    return repr(value)


def _outcome(thing):
    """What a user reads of a release, plan, ledger or other result."""
    from skattr import Plan, Release

    if isinstance(thing, Release):
        return {"release": _plain(thing.to_dict()),
                "summary": str(thing.summary())}
    if isinstance(thing, Plan):
        return {"plan": {
            "mechanism": thing.mechanism, "epsilon": _plain(thing.epsilon),
            "delta": _plain(thing.delta),
            "expected_error": _plain(thing.expected_error),
            "noise": str(thing.noise_description)
            if hasattr(thing, "noise_description") else None,
            "summary": str(thing.summary())}}
    return {"value": _plain(thing)}


def _run(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = _outcome(call())
        except Exception as exc:  # noqa: BLE001 - the refusal is the outcome
            result = {"error": type(exc).__name__, "message": str(exc)}
    result["warnings"] = sorted({f"{w.category.__name__}: {w.message}"
                                 for w in caught
                                 if not issubclass(w.category,
                                                   (DeprecationWarning,))})
    return result


def cases():
    """``{name: call}``: every call the snapshot records (about 150)."""
    import skattr
    from skattr import Query, Secret, Statistic
    from skattr.mechanisms import (
        ApproximateWassersteinMechanism,
        AttributePrivateGaussian,
        WassersteinMechanism,
    )
    from skattr.theta import ConfidenceBand, ConfidenceBox, Resample

    reference, private, larger = _frames()
    pairs = Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    wide = Secret.proportion("gender", "female", pairs=[(0.3, 0.7)])
    dist = Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    out: dict = {}
    common = dict(secret=pairs, reference=reference, random_state=0)

    # Every verb under the default mechanism, at two epsilons and two sizes.
    verbs = {
        "mean": lambda df, **kw: df.attrpriv.mean(["weight"], **kw),
        "mean2": lambda df, **kw: df.attrpriv.mean(
            ["weight", "blood_pressure"], **kw),
        "sum": lambda df, **kw: df.attrpriv.sum(["height"], **kw),
        "count": lambda df, **kw: df.attrpriv.count(
            ["blood_pressure"], skattr.predicates.Above(100), **kw),
        "proportion": lambda df, **kw: df.attrpriv.proportion(
            ["blood_pressure"], skattr.predicates.Above(100), **kw),
        "median": lambda df, **kw: df.attrpriv.median(["weight"], **kw),
        "quantile": lambda df, **kw: df.attrpriv.quantile(
            ["temperature"], [0.25, 0.75], **kw),
        "quantile_monotone": lambda df, **kw: df.attrpriv.quantile(
            ["temperature"], [0.25, 0.5, 0.75], monotone=True, **kw),
        "std": lambda df, **kw: df.attrpriv.std(["weight"], **kw),
        "agg_mean": lambda df, **kw: df.attrpriv.agg("mean", ["height"], **kw),
    }
    for verb, call in verbs.items():
        for eps in (0.5, 2.0):
            for label, df in (("n50", private), ("n200", larger)):
                out[f"verb.{verb}.eps{eps}.{label}"] = (
                    lambda call=call, df=df, eps=eps:
                    call(df, epsilon=eps, delta=1e-3, **common))

    # Named mechanisms on a mean of two columns (and a median for W).
    pure = ("expm-laplace", "dirm-laplace", "wasserstein", "dp-laplace",
            "group-dp-laplace")
    declared = {"bounds": {"weight": (50.0, 300.0),
                           "blood_pressure": (60.0, 160.0)}}
    for mech in ("apgm", "expm-laplace", "expm-gaussian", "dirm-laplace",
                 "dirm-gaussian", "eigm", "daum", "optimal",
                 "approx-wasserstein", "wasserstein", "dp-laplace",
                 "dp-gaussian", "group-dp-laplace", "group-dp-gaussian"):
        for law in (None, "gaussian"):
            extra = {} if law is None else {"law": law}
            if mech not in pure:
                extra["delta"] = 1e-3
            if mech.startswith(("dp-", "group-dp-")):
                if law is not None:
                    continue
                extra.update(declared)
            elif mech in ("approx-wasserstein", "wasserstein") and law:
                continue
            out[f"mechanism.{mech}.law-{law}"] = (
                lambda mech=mech, extra=extra: larger.attrpriv.mean(
                    ["weight", "blood_pressure"], epsilon=1.0,
                    mechanism=mech, **extra, **common))
    out["mechanism.wasserstein.median"] = lambda: larger.attrpriv.median(
        ["weight"], epsilon=1.0, mechanism="wasserstein", **common)
    out["mechanism.apgm.count-exact"] = lambda: larger.attrpriv.count(
        ["blood_pressure"], skattr.predicates.Above(100), epsilon=1.0,
        delta=1e-3, mechanism="apgm", **common)
    out["mechanism.optimal.proportion"] = lambda: larger.attrpriv.proportion(
        ["blood_pressure"], skattr.predicates.Above(100), epsilon=1.0,
        delta=1e-3, mechanism="optimal", law="gaussian", **common)

    # Theta choices.
    thetas = {
        "auto": "auto", "moments": "moments", "gaussian": "gaussian",
        "band": ConfidenceBand(),
        "resample": Resample(n_draws=2000, random_state=0),
    }
    for name, theta in thetas.items():
        for verb in ("mean", "median", "std"):
            out[f"theta.{name}.{verb}"] = (
                lambda theta=theta, verb=verb: getattr(larger.attrpriv, verb)(
                    ["weight"], epsilon=1.0, delta=1e-3, theta=theta,
                    **common))
    out["theta.box.count"] = lambda: larger.attrpriv.count(
        ["blood_pressure"], skattr.predicates.Above(100), epsilon=1.0,
        delta=1e-3, theta=ConfidenceBox(), **common)
    out["theta.resample.trimmed"] = lambda: larger.attrpriv.agg(
        Statistic.trimmed_mean(["weight"], 0.1), epsilon=1.0, delta=1e-3,
        theta=Resample(n_draws=2000, random_state=0), **common)
    out["theta.default.trimmed"] = lambda: larger.attrpriv.agg(
        Statistic.trimmed_mean(["weight"], 0.1), epsilon=1.0, delta=1e-3,
        **common)

    # Secrets: wider pairs, distributional privacy, mean secrets, windows.
    out["secret.wide.mean"] = lambda: larger.attrpriv.mean(
        ["weight"], secret=wide, reference=reference, epsilon=1.0,
        delta=1e-3, random_state=0)
    out["secret.distributional.mean"] = lambda: larger.attrpriv.mean(
        ["weight"], secret=dist, reference=reference, epsilon=1.0,
        delta=1e-3, random_state=0, privacy="distributional")
    out["secret.distributional.median"] = lambda: larger.attrpriv.median(
        ["weight"], secret=dist, reference=reference, epsilon=1.0,
        delta=1e-3, random_state=0, privacy="distributional")
    out["secret.offgrid.mean"] = lambda: private.attrpriv.mean(
        ["weight"], secret=Secret.proportion("gender", "female",
                                             pairs=[(0.41, 0.59)]),
        reference=reference, epsilon=1.0, delta=1e-3, random_state=0)
    out["secret.documented-pairs-n-odd"] = lambda: make_n(47).attrpriv.mean(
        ["weight"], **common, epsilon=1.0, delta=1e-3)

    def make_n(n):
        from skattr.datasets import make_hospital
        return make_hospital(n, random_state=3)

    # Plans and leakage: nothing released.
    for stat in ("mean", "sum", "median", "std"):
        out[f"plan.{stat}"] = lambda stat=stat: larger.attrpriv.plan(
            ["weight"], statistic=stat, secret=pairs, reference=reference,
            epsilon=1.0, delta=1e-3)
        out[f"leakage.{stat}"] = lambda stat=stat: larger.attrpriv.leakage(
            ["weight"], statistic=stat, secret=pairs, reference=reference,
            delta=1e-3)

    # A ledger, describe, group means.
    def ledger_run():
        ledger = larger.attrpriv.ledger(secret=pairs, reference=reference,
                                        budget=(5.0, 1e-3), random_state=0)
        first = ledger.mean(["weight"], epsilon=1.0)
        second = ledger.median(["blood_pressure"], epsilon=1.0)
        return {"first": _outcome(first), "second": _outcome(second),
                "spent": _plain(ledger.spent)}
    out["ledger.mean-median"] = ledger_run

    def ledger_over():
        ledger = larger.attrpriv.ledger(secret=pairs, reference=reference,
                                        budget=(1.5, 1e-3), random_state=0)
        ledger.mean(["weight"], epsilon=1.0)
        return ledger.mean(["height"], epsilon=1.0)
    out["ledger.over-budget"] = ledger_over
    out["describe"] = lambda: larger.attrpriv.describe(
        ["weight", "blood_pressure"], secret=pairs, reference=reference,
        epsilon=4.0, random_state=0)
    out["group_means"] = lambda: larger.attrpriv.group_means(
        ["weight"], secret=pairs, epsilon=1.0, random_state=0,
        bounds={"weight": (50.0, 300.0)})
    out["group_means.no-bounds"] = lambda: larger.attrpriv.group_means(
        ["weight"], secret=pairs, epsilon=1.0, random_state=0)

    def ledger_mixed():
        ledger = larger.attrpriv.ledger(secret=pairs, reference=reference,
                                        budget=(10.0, 1e-3), random_state=0)
        outs = [ledger.mean(["weight", "height"], epsilon=1.0),
                ledger.count(["blood_pressure"],
                             skattr.predicates.Above(100), epsilon=1.0),
                ledger.quantile(["temperature"], [0.25, 0.75], epsilon=1.0),
                ledger.std(["weight"], epsilon=1.0)]
        return {"releases": [_outcome(r) for r in outs],
                "spent": _plain(ledger.spent),
                "summary": str(ledger.summary())
                if hasattr(ledger, "summary") else None}
    out["ledger.mixed"] = ledger_mixed
    out["ledger.distributional"] = lambda: larger.attrpriv.ledger(
        secret=dist, reference=reference, budget=(3.0, 1e-3), random_state=0,
        privacy="distributional").mean(["weight"], epsilon=1.0)

    # The command line (its words on stdout and stderr, and its exit code).
    for name, argv in _cli_cases().items():
        out[f"cli.{name}"] = lambda argv=argv: _cli(argv, reference, larger)

    # Bare estimators.
    def bare(cls, query, **kw):
        def call():
            est = cls(query=query, secret=pairs, epsilon=1.0, **kw)
            est.fit(reference)
            return est.release(larger, random_state=0)
        return call
    out["estimator.apgm.gaussian"] = bare(
        AttributePrivateGaussian, Query.mean(["weight"]), delta=1e-3,
        law="gaussian")
    out["estimator.approx-w.mean"] = bare(
        ApproximateWassersteinMechanism, Query.mean(["weight"]), delta=1e-3)
    out["estimator.approx-w.median"] = bare(
        ApproximateWassersteinMechanism, Statistic.median(["weight"]),
        delta=1e-3)
    out["estimator.w.count"] = bare(
        WassersteinMechanism, Query.count(["blood_pressure"],
                                          skattr.predicates.Above(100)))

    # Refusals and warnings.
    bad = {
        "unknown-column": lambda: larger.attrpriv.mean(["wieght"], **common),
        "text-column": lambda: larger.attrpriv.mean(["gender"], **common),
        "typo-mechanism": lambda: larger.attrpriv.mean(
            ["weight"], mechanism="apgn", **common),
        "unknown-param": lambda: larger.attrpriv.mean(
            ["weight"], sigma=2, **common),
        "negative-epsilon": lambda: larger.attrpriv.mean(
            ["weight"], epsilon=-1, **common),
        "nan-epsilon": lambda: larger.attrpriv.mean(
            ["weight"], epsilon=float("nan"), **common),
        "large-delta": lambda: larger.attrpriv.mean(
            ["weight"], delta=0.5, **common),
        "delta-over-1-over-n": lambda: private.attrpriv.mean(
            ["weight"], delta=0.05, **common),
        "large-epsilon": lambda: larger.attrpriv.mean(
            ["weight"], epsilon=12.0, **common),
        "no-secret": lambda: larger.attrpriv.mean(
            ["weight"], reference=reference, random_state=0),
        "no-reference": lambda: larger.attrpriv.mean(
            ["weight"], secret=pairs, random_state=0),
        "secret-value-absent": lambda: larger.attrpriv.mean(
            ["weight"], secret=Secret.proportion("gender", "femme",
                                                 pairs=[(0.4, 0.6)]),
            reference=reference, random_state=0),
        "secret-column-absent": lambda: larger.attrpriv.mean(
            ["weight"], secret=Secret.proportion("sex", "female",
                                                 pairs=[(0.4, 0.6)]),
            reference=reference, random_state=0),
        "quantile-q-out": lambda: larger.attrpriv.quantile(
            ["weight"], 1.5, **common),
        "law-typo": lambda: larger.attrpriv.mean(
            ["weight"], law="gausian", **common),
        "theta-typo": lambda: larger.attrpriv.mean(
            ["weight"], theta="moment", **common),
        "bounds-bad": lambda: larger.attrpriv.mean(
            ["weight"], bounds=(3, 1), **common),
        "nan-in-column": lambda: larger.assign(
            weight=larger["weight"].where(larger.index != 3)
        ).attrpriv.mean(["weight"], **common),
        "empty-columns": lambda: larger.attrpriv.mean([], **common),
        "ddof-bad": lambda: larger.attrpriv.std(["weight"], ddof=-1, **common),
        "count-value-absent": lambda: larger.attrpriv.count(
            ["gender"], "femme", **common),
        "agg-unknown": lambda: larger.attrpriv.agg("mode", ["weight"],
                                                   **common),
        "trimmed-default-refused": lambda: larger.attrpriv.agg(
            Statistic.trimmed_mean(["weight"], 0.1), **common),
        "wasserstein-delta": lambda: larger.attrpriv.mean(
            ["weight"], mechanism="wasserstein", delta=1e-3, **common),
        "apgm-no-law": lambda: larger.attrpriv.mean(
            ["weight"], mechanism="apgm", **common),
        "reference-self": lambda: larger.attrpriv.mean(
            ["weight"], secret=pairs, reference="self", random_state=0),
        "budget-bad": lambda: larger.attrpriv.ledger(
            secret=pairs, reference=reference, budget=(-1, 0)),
        "tiny-n": lambda: larger.head(3).attrpriv.mean(["weight"], **common),
        "privacy-typo": lambda: larger.attrpriv.mean(
            ["weight"], privacy="distribution", **common),
        "estimator-unfitted": lambda: AttributePrivateGaussian(
            query=Query.mean(["weight"]), secret=pairs).release(larger),
        "estimator-delta-large": bare(
            AttributePrivateGaussian, Query.mean(["weight"]), delta=0.5,
            law="gaussian"),
    }
    for name, call in bad.items():
        out[f"refusal.{name}"] = call
    return out


def _cli_cases() -> dict:
    common = ["--secret-column", "gender", "--secret-value", "female",
              "--pairs", "0.4,0.6", "--reference", "REF", "--seed", "0"]
    return {
        "mean": ["release", "PRIV", "--columns", "weight", "blood_pressure",
                 *common, "--epsilon", "1", "--delta", "1e-3"],
        "median-plan": ["release", "PRIV", "--columns", "weight",
                        "--statistic", "median", *common, "--plan"],
        "typo-statistic": ["release", "PRIV", "--columns", "weight",
                           "--statistic", "meen", *common],
        "bad-epsilon": ["release", "PRIV", "--columns", "weight", *common,
                        "--epsilon", "0"],
        "large-delta": ["release", "PRIV", "--columns", "weight", *common,
                        "--delta", "0.5"],
        "missing-column": ["release", "PRIV", "--columns", "wieght", *common],
    }


def _cli(argv, reference, private):
    import contextlib
    import io
    import tempfile

    from skattr.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        paths = {"REF": str(Path(tmp) / "reference.csv"),
                 "PRIV": str(Path(tmp) / "private.csv")}
        reference.to_csv(paths["REF"], index=False)
        private.to_csv(paths["PRIV"], index=False)
        argv = [paths.get(a, a) for a in argv]
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), \
                contextlib.redirect_stderr(stderr):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code
        text = (stdout.getvalue() + "\n--stderr--\n" + stderr.getvalue())
        return {"code": code, "text": text.replace(tmp, "TMP")}


def record(names=None) -> dict:
    """Run the cases (``names``: only those) and return their outcomes."""
    calls = cases()
    return {name: _run(call) for name, call in calls.items()
            if names is None or name in names}


def main(argv) -> None:
    if not argv or argv[0] != "--write":
        raise SystemExit(__doc__)
    names = set(argv[1:]) or None
    known = json.loads(SNAPSHOT.read_text()) if (SNAPSHOT.exists()
                                                and names) else {}
    known.update(record(names))
    SNAPSHOT.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
    print(f"{len(known)} cases written to {SNAPSHOT}")


if __name__ == "__main__":
    main(sys.argv[1:])

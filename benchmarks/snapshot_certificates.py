"""A snapshot of skattr's certificates, to show a refactoring changes none.

Plans, seeded releases, ledgers and refusals over every registered
mechanism and every kind of Theta, written as JSON with every float by its
``repr``: two runs of the same code give the same text, and a refactoring
that keeps behaviour must too. Usage::

    python benchmarks/snapshot_certificates.py > before.json
    # ... change the code ...
    python benchmarks/snapshot_certificates.py > after.json
    diff before.json after.json       # nothing, or the change is a change

It takes a minute or two; it reads no data files (the synthetic hospital and
schools only).
"""

import json
import sys
import warnings

import numpy as np
import pandas as pd
from scipy import stats

import skattr
from skattr.bayes import NetworkTheta
from skattr.datasets import (
    hospital_theta,
    make_hospital,
    make_schools,
    schools_network,
)
from skattr.mechanisms import MECHANISMS
from skattr.predicates import Above
from skattr.theta import (
    Bootstrap,
    ExpertTheta,
    GroupMoments,
    MonteCarlo,
    ProbabilityBox,
    Resample,
)

REFERENCE = make_hospital(2000, random_state=0)
PRIVATE = make_hospital(120, random_state=1)
SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
WINDOW = skattr.Secret.proportion("gender", "female", window=0.2,
                                  support=(0.3, 0.7))
SETS = skattr.Secret.proportion("gender", "female",
                                sets=[(0.25, 0.5), (0.5, 0.75)],
                                set_reading="paper")


def _plain(value):
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (np.floating, np.integer)):
        return repr(value.item())
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, pd.Series):
        return {str(k): _plain(v) for k, v in value.items()}
    return value if value is None or isinstance(value, (bool, int, str)) else repr(
        value)


def plan_record(plan) -> dict:
    """Every field a certificate states, floats exact."""
    record = {
        "mechanism": plan.mechanism, "statistics": list(plan.statistics),
        "n": plan.n, "epsilon": plan.epsilon, "delta": plan.delta,
        "calibration": plan.calibration, "secrets": list(plan.secrets),
        "theta": plan.theta, "sensitivity": plan.sensitivity,
        "inherent_variance": list(plan.inherent_variance),
        "noise": plan.noise_law.describe(plan.statistics),
        "noise_covariance": plan.noise_covariance,
        "expected_error": plan.expected_error, "method": plan.method,
        "assumptions": list(plan.assumptions), "guarantee": plan.guarantee,
        "error_ratio": plan.error_ratio,
        "clipping": None if plan.clipping is None else plan.clipping.describe(),
    }
    values = getattr(plan, "values", None)
    if values is not None:
        record["values"] = values
    return _plain(record)


CASES = {}


def case(name):
    def register(func):
        CASES[name] = func
        return func
    return register


def _mech(name, query, secret=SECRET, reference=REFERENCE, n=(50, 120),
          release=True, **params):
    est = MECHANISMS[name](query=query, secret=secret, **params).fit(reference)
    out = {f"plan n={k}": plan_record(est.plan(n=k)) for k in n}
    if release:
        out["release"] = plan_record(est.release(PRIVATE))
    return out


# ----------------------------------------------------- the Gaussian families
GAUSSIAN = ("apgm", "expm-gaussian", "dirm-gaussian", "eigm", "daum", "optimal")
for _name in GAUSSIAN + ("expm-laplace", "dirm-laplace"):
    for _columns in (["weight"], ["weight", "blood_pressure"]):
        for _law in ("gaussian",):
            case(f"{_name} {_columns} law={_law}")(
                lambda name=_name, columns=_columns, law=_law: _mech(
                    name, skattr.Query.mean(columns), law=law, random_state=0,
                    **({} if name.endswith("laplace") else {"delta": 1e-3})))
    case(f"{_name} count exact")(
        lambda name=_name: _mech(name, skattr.Query.count(["gender"], "other"),
                                 random_state=0))
    case(f"{_name} assume-equal")(
        lambda name=_name: _mech(name, skattr.Query.mean(["weight"]),
                                 law="gaussian", covariances="assume-equal",
                                 random_state=0))
    case(f"{_name} window gaussian assume-equal")(
        lambda name=_name: _mech(name, skattr.Query.mean(["height", "weight"]),
                                 secret=WINDOW, law="gaussian",
                                 covariances="assume-equal", random_state=0))
    case(f"{_name} classic")(
        lambda name=_name: _mech(name, skattr.Query.mean(["weight"]),
                                 law="gaussian", calibration="classic",
                                 covariances="assume-equal", epsilon=0.5,
                                 random_state=0))
    case(f"{_name} expert sets")(
        lambda name=_name: _mech(name, skattr.Query.mean(["weight"]),
                                 secret=SETS, theta=hospital_theta("weight"),
                                 law="gaussian", random_state=0, n=(1, 50)))

for _theta_name, _theta in {
        "moments": lambda: "moments", "gaussian": lambda: "gaussian",
        "montecarlo": lambda: MonteCarlo(random_state=0),
        "bootstrap": lambda: Bootstrap(random_state=0)}.items():
    case(f"apgm theta={_theta_name}")(
        lambda theta=_theta: _mech("apgm", skattr.Query.mean(["weight", "height"]),
                                   theta=theta(), law="gaussian", random_state=0))

case("apgm relaxation lambda_eta")(lambda: _mech(
    "apgm", skattr.Query.mean(["weight"]), law="gaussian", lambda_eta=0.1,
    eta=1e-5, random_state=0))
case("expm-gaussian relaxation")(lambda: _mech(
    "expm-gaussian", skattr.Query.mean(["weight"]), law="gaussian",
    lambda_eta=0.05, eta=1e-5, random_state=0))
case("expm-gaussian wasserstein relaxation")(lambda: _mech(
    "expm-gaussian", skattr.Query.mean(["weight"]), law="gaussian",
    wasserstein_w=0.3, wasserstein_lambda=0.1, random_state=0))
case("apgm sum exact integer")(lambda: _mech(
    "apgm", skattr.Query.sum(["kids"]),
    secret=skattr.Secret.proportion("g", 1, pairs=[(0.3, 0.5)]),
    reference=_kids(600, 8), n=(20, 50), release=False))
case("optimal expert")(lambda: _mech(
    "optimal", skattr.Query.mean(["x", "y"]),
    secret=skattr.Secret.proportion("s", 1, pairs=[(0.3, 0.7)]),
    reference=pd.DataFrame({"s": [0, 1] * 5, "x": np.arange(10.0),
                            "y": np.arange(10.0) ** 0.5}),
    theta=ExpertTheta([GroupMoments(mean_in=[1.0, 2.0], mean_out=[0.0, 0.5],
                                    cov_in=[[1.0, 0.2], [0.2, 2.0]],
                                    cov_out=[[1.5, 0.0], [0.0, 1.0]],
                                    columns=("x", "y"))]),
    law="gaussian", n=(10, 100), release=False))


def _kids(rows, seed):
    rng = np.random.default_rng(seed)
    inside = rng.random(rows) < 0.4
    return pd.DataFrame({"g": inside.astype(int),
                         "kids": rng.integers(0, 4, rows) + inside})


# --------------------------------------------------- the Wasserstein family
for _name in ("wasserstein", "approx-wasserstein"):
    extra = {} if _name == "wasserstein" else {"delta": 0.01}
    case(f"{_name} count auto")(lambda name=_name, extra=extra: _mech(
        name, skattr.Query.count(["gender"], "other"), random_state=0, **extra))
    case(f"{_name} count moments distributional")(
        lambda name=_name, extra=extra: _mech(
            name, skattr.Query.count("height", Above(66)), theta="moments",
            privacy="distributional", random_state=0, **extra))
    case(f"{_name} p pairs")(lambda name=_name, extra=extra: _mech(
        name, skattr.Query.count("height", Above(66)),
        theta=[[0.3, 0.5], [0.35, 0.55]], random_state=0, **extra))
    case(f"{_name} box")(lambda name=_name, extra=extra: _mech(
        name, skattr.Query.count("height", Above(66)),
        secret=skattr.Secret.proportion("gender", "female", window=1.0,
                                        support=(0.0, 1.0)),
        theta=ProbabilityBox(low=(0.3, 0.3), high=(0.5, 0.6)), random_state=0,
        n=(30,), **extra))
    case(f"{_name} sum laws")(lambda name=_name, extra=extra: _mech(
        name, skattr.Query.sum("kids"),
        secret=skattr.Secret.proportion("g", 1, pairs=[(0.3, 0.5)]),
        reference=_kids(600, 8), theta="moments", n=(20,), release=False,
        **extra))
    case(f"{_name} median resample")(lambda name=_name, extra=extra: _mech(
        name, skattr.Statistic.median(["weight"]), reference=REFERENCE[:600],
        theta=Resample(random_state=0), random_state=0, **extra))
    case(f"{_name} median resample replace")(lambda name=_name, extra=extra: _mech(
        name, skattr.Statistic.median(["weight"]), reference=REFERENCE[:300],
        theta=Resample(random_state=0, replace=True), random_state=0,
        n=(50, 400), **extra))
    case(f"{_name} enumerated")(lambda name=_name, extra=extra: _mech(
        name, skattr.Statistic.median(["weight"]), reference=REFERENCE[:20],
        theta=Resample(random_state=0), random_state=0, n=(5, 10), release=False,
        **extra))

case("approx-wasserstein quantiles")(lambda: _mech(
    "approx-wasserstein", skattr.Statistic.quantile(["weight", "height"],
                                                    q=[0.25, 0.75]),
    reference=REFERENCE[:500], theta=Resample(random_state=0), delta=0.01,
    random_state=0))
case("approx-wasserstein quantiles drawn")(lambda: _mech(
    "approx-wasserstein", skattr.Statistic.quantile(["weight"], q=[0.25, 0.75]),
    reference=REFERENCE[:500],
    theta=Resample(random_state=0, exact_quantiles=False, n_draws=20_000),
    delta=0.5, random_state=0, n=(50,)))
case("approx-wasserstein std")(lambda: _mech(
    "approx-wasserstein", skattr.Statistic.std(["weight"]),
    reference=REFERENCE[:400], delta=0.05, random_state=0, n=(40,)))
case("approx-wasserstein mean moment bounds")(lambda: _mech(
    "approx-wasserstein", skattr.Query.mean(["weight", "blood_pressure"]),
    random_state=0))
case("approx-wasserstein function")(lambda: _mech(
    "approx-wasserstein", skattr.Statistic.function(
        lambda d: d["weight"].max() - d["weight"].min(), columns=["weight"]),
    reference=REFERENCE[:300], delta=0.05, theta=Resample(random_state=0),
    random_state=0, n=(30,)))
case("approx-wasserstein trimmed mean")(lambda: _mech(
    "approx-wasserstein", skattr.Statistic.trimmed_mean(["weight"], 0.1),
    reference=REFERENCE[:300], delta=0.05, theta=Resample(random_state=0),
    random_state=0, n=(30,)))
case("wasserstein secure")(lambda: _mech(
    "wasserstein", skattr.Query.count(["gender"], "other"), secure=True,
    random_state=0))


def _network_theta():
    net = schools_network()
    counted = 1 - stats.norm.cdf((66 - net.grids["height"]) / 3.0)
    return NetworkTheta(net, reads="height", counted=counted)


SCHOOLS = make_schools(1, 60, random_state=1)
SCHOOL_SECRET = skattr.Secret.mean("income", pairs=[(40_000, 60_000)])


@case("wasserstein network theta")
def _():
    est = MECHANISMS["wasserstein"](
        query=skattr.Query.count("height", Above(66)), secret=SCHOOL_SECRET,
        theta=_network_theta(), privacy="distributional",
        random_state=0).fit(SCHOOLS)
    return {"plan": plan_record(est.plan(SCHOOLS)),
            "release": plan_record(est.release(SCHOOLS))}


# ----------------------------------------------------- quilts and baselines
BOUNDS = {"height": (50.0, 85.0), "sat": (400.0, 1600.0),
          "weight": (80.0, 300.0)}


@case("markov-quilt")
def _():
    schools = make_schools(1, 100, random_state=0)
    out = {}
    for columns in (["height"], ["height", "sat"]):
        est = MECHANISMS["markov-quilt"](
            query=skattr.Query.mean(columns), secret=SCHOOL_SECRET,
            network=schools_network(), epsilon=1.0, bounds=BOUNDS,
            random_state=0).fit(schools)
        out[str(columns)] = plan_record(est.release(schools))
    return out


@case("markov-quilt-swc")
def _():
    rng = np.random.default_rng(0)
    chain = np.array([[0.9, 0.1], [0.1, 0.9]])
    states = [0]
    for _ in range(199):
        states.append(int(rng.random() < chain[states[-1], 1]))
    frame = pd.DataFrame({"x": np.asarray(states, dtype=float)})
    est = MECHANISMS["markov-quilt-swc"](
        query=skattr.Query.mean(["x"]), transition=chain, epsilon=1.0,
        bounds={"x": (0.0, 1.0)}, random_state=0).fit(frame)
    return plan_record(est.release(frame))


for _name in ("dp-laplace", "dp-gaussian", "group-dp-laplace",
              "group-dp-gaussian"):
    case(_name)(lambda name=_name: _mech(
        name, skattr.Query.mean(["weight"]), bounds={"weight": (50.0, 350.0)},
        random_state=0))


# ------------------------------------------------------------ the accessor
VERBS = {
    "mean": lambda **kw: PRIVATE.attrpriv.mean(["weight"], **kw),
    "mean2": lambda **kw: PRIVATE.attrpriv.mean(["weight", "blood_pressure"], **kw),
    "sum": lambda **kw: PRIVATE.attrpriv.sum(["weight"], **kw),
    "count": lambda **kw: PRIVATE.attrpriv.count(["gender"], "other", **kw),
    "proportion": lambda **kw: PRIVATE.attrpriv.proportion(["gender"], "other",
                                                           **kw),
    "median": lambda **kw: PRIVATE.attrpriv.median(["weight"], **kw),
    "quantile": lambda **kw: PRIVATE.attrpriv.quantile(["weight"],
                                                       q=[0.25, 0.75],
                                                       monotone=True, **kw),
    "std": lambda **kw: PRIVATE.attrpriv.std(["weight"], **kw),
    "agg": lambda **kw: PRIVATE.attrpriv.agg("median", ["height"], **kw),
}
for _verb, _call in VERBS.items():
    case(f"accessor {_verb} default")(lambda call=_call: plan_record(call(
        secret=SECRET, reference=REFERENCE[:800], random_state=0)))
for _verb in ("mean", "mean2", "sum"):
    case(f"accessor {_verb} gaussian")(lambda call=VERBS[_verb]: plan_record(call(
        secret=SECRET, reference=REFERENCE, law="gaussian", random_state=0)))
case("accessor plan")(lambda: plan_record(PRIVATE.attrpriv.plan(
    ["weight"], secret=SECRET, reference=REFERENCE, law="gaussian",
    random_state=0)))
case("accessor plan median")(lambda: plan_record(PRIVATE.attrpriv.plan(
    ["weight"], statistic="median", secret=SECRET, reference=REFERENCE[:500])))
case("accessor leakage")(lambda: _plain(PRIVATE.attrpriv.leakage(
    ["weight"], secret=SECRET, reference=REFERENCE, law="gaussian",
    random_state=0)))
case("accessor leakage exact")(lambda: _plain(PRIVATE.attrpriv.leakage(
    ["gender"], statistic="count", value="other", secret=SECRET,
    reference=REFERENCE)))
case("accessor baseline no reference")(lambda: plan_record(
    PRIVATE.attrpriv.mean(["weight"], secret=SECRET, mechanism="dp-laplace",
                          bounds={"weight": (50.0, 350.0)}, random_state=0)))


# --------------------------------------------------------------- ledgers
def _ledger_record(ledger, extra=None):
    out = {"spent": _plain(list(ledger.spent)),
           "entries": [plan_record(e.release) for e in ledger.releases]}
    if extra:
        out.update(extra)
    return out


@case("ledger gaussian")
def _():
    ledger = PRIVATE.attrpriv.ledger(secret=SECRET, reference=REFERENCE,
                                     budget=(2.0, 1e-3), law="gaussian",
                                     random_state=0)
    ledger.mean(["weight"], epsilon=1.0)
    ledger.mean(["blood_pressure"], epsilon=0.5)
    ledger.sum(["weight"], epsilon=0.2)
    ledger.mean(["height"], epsilon="remaining")
    text = json.loads(ledger.to_json())
    return _ledger_record(ledger, {"json": text})


@case("ledger exact")
def _():
    ledger = PRIVATE.attrpriv.ledger(secret=SECRET, reference=REFERENCE,
                                     budget=(2.0, 1e-3), random_state=0)
    ledger.count(["gender"], "other", epsilon=0.5)
    ledger.proportion(["gender"], "other", epsilon=0.5)
    return _ledger_record(ledger)


@case("ledger laplace")
def _():
    ledger = PRIVATE.attrpriv.ledger(secret=SECRET, reference=REFERENCE[:600],
                                     budget=(6.0, 1e-2),
                                     theta=Resample(random_state=0),
                                     random_state=0)
    ledger.median(["weight"], epsilon=1.0, delta=2e-3)
    ledger.median(["weight"], epsilon=0.5, delta=2e-3)
    ledger.mean(["height"], epsilon=0.5, delta=2e-3,
                mechanism="approx-wasserstein")
    ledger.std(["height"], epsilon=0.5, delta=2e-3)
    return _ledger_record(ledger, {"json": json.loads(ledger.to_json())})


@case("ledger refused")
def _():
    ledger = PRIVATE.attrpriv.ledger(secret=SECRET, reference=REFERENCE,
                                     budget=(0.5, 1e-3), law="gaussian",
                                     random_state=0)
    ledger.mean(["weight"], epsilon=0.4)
    ledger.mean(["weight"], epsilon=0.4)
    return _ledger_record(ledger)


# ------------------------------------------------------------------ Dask
@case("dask mean and median")
def _():
    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover
        return "no dask"
    big = dd.from_pandas(PRIVATE, npartitions=3)
    ref = dd.from_pandas(REFERENCE, npartitions=4)
    return {
        "mean": plan_record(big.attrpriv.mean(["weight"], secret=SECRET,
                                              reference=ref, law="gaussian",
                                              mechanism="apgm",
                                              random_state=0)),
        "median": plan_record(big.attrpriv.median(
            ["weight"], secret=SECRET, reference=REFERENCE[:600],
            random_state=0)),
        "count": plan_record(big.attrpriv.count(["gender"], "other",
                                                secret=SECRET, reference=ref,
                                                random_state=0)),
    }


def run(names=None) -> dict:
    out = {}
    for name, func in CASES.items():
        if names and not any(part in name for part in names):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out[name] = func()
            except Exception as exc:  # a refusal is part of the behaviour
                out[name] = {"error": type(exc).__name__, "message": str(exc)}
        print(name, file=sys.stderr)
    return out


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1:]), indent=1, sort_keys=True))

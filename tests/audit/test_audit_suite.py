"""The audit suite: every mechanism's certificate against an empirical lower bound.

For every registered mechanism and several (epsilon, delta), releases on
datasets drawn on each side of a pair must not show a larger epsilon than
certified (at 95% confidence). Positive controls (half the noise; the
sensitivity of a narrow pair audited on a wider one) must be flagged, and
the true epsilon of each control is computed first, so that a control that
is not flagged means an audit without power, never a lucky draw.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

import skattr
from skattr.audit import audit
from skattr.bayes import ParameterNetwork
from skattr.datasets import make_schools, schools_network
from skattr.laws import AssumeGaussian
from skattr.mechanisms import MECHANISMS

pytestmark = pytest.mark.audit

RELEASES = 20_000
GAUSSIAN_FAMILY = ("apgm", "expm-gaussian", "dirm-gaussian", "eigm", "optimal",
                   "daum")
LAPLACE_FAMILY = ("expm-laplace", "dirm-laplace")
BASELINES = {"dp-laplace": (0.5, 0.51), "dp-gaussian": (0.5, 0.51),
             "group-dp-laplace": (0.5, 0.55), "group-dp-gaussian": (0.5, 0.55)}
QUILTS = ("markov-quilt", "markov-quilt-swc")
WASSERSTEIN = ("wasserstein", "approx-wasserstein")


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Epsilon of a Gaussian shift of mu standard deviations at delta.

    The exact profile delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)
    (Balle and Wang 2018, Thm 8), inverted by bisection: an independent
    computation that shares no code with skattr's calibration.
    """
    def excess(eps):
        return (stats.norm.cdf(mu / 2 - eps / mu)
                - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu) - delta)

    if excess(0.0) <= 0:
        return 0.0
    return float(optimize.brentq(excess, 0.0, 50.0 + mu * mu))


# ------------------------------------------------------- models of the quilts
def schools_given_income(n: int):
    """Draw the share of students with SAT > 1300 of schools with a mean income.

    The model of make_schools (Zhang et al.'s Figure 1): the school's other
    parameters by ancestral sampling given its income node, then n students
    i.i.d. given them, so the count is Binomial(n, P(N(sat, 150) > 1300)).
    """
    net = schools_network()
    cpts = net.members[0]
    incomes = list(net.grids["income"])

    def draw(value, size, rng):
        index = {"income": np.full(size, incomes.index(value))}
        for node in net.nodes:
            if node == "income":
                continue
            rows = cpts[node][tuple(index[p] for p in net.parents[node])]
            rows = np.broadcast_to(rows, (size, net.sizes[node]))
            u = rng.random(size)[:, None]
            index[node] = np.minimum((np.cumsum(rows, axis=1) < u).sum(axis=1),
                                     net.sizes[node] - 1)
        mean_sat = np.asarray(net.grids["sat"])[index["sat"]]
        return rng.binomial(n, stats.norm.sf(1300, mean_sat, 150))[:, None] / n

    return draw


CHAIN = np.array([[0.9, 0.1], [0.1, 0.9]])
CHAIN_LENGTH = 50


def chain_given_entry(i: int):
    """Draw the share of active states of chains whose entry i is fixed.

    The chain is symmetric with a uniform start, so it is stationary and
    reversible: the states before i are drawn backwards with the same
    transition matrix.
    """
    def draw(value, size, rng):
        y = np.empty((size, CHAIN_LENGTH), dtype=int)
        y[:, i] = int(value)
        for t in range(i + 1, CHAIN_LENGTH):
            y[:, t] = rng.random(size) < CHAIN[y[:, t - 1], 1]
        for t in range(i - 1, -1, -1):
            y[:, t] = rng.random(size) < CHAIN[y[:, t + 1], 1]
        return y.mean(axis=1)[:, None]

    return draw


# --------------------------------------------------------------- mechanisms
def build(name, epsilon, delta, hospital, secret):
    """Return (fitted mechanism, audit keywords) for one setting of the suite."""
    cls = MECHANISMS[name]
    privacy = {"epsilon": epsilon, "random_state": 0}
    if delta:
        privacy["delta"] = delta
    if name in GAUSSIAN_FAMILY or name in LAPLACE_FAMILY:
        # DauM needs parallel mean differences: one statistic.
        columns = (["blood_pressure"] if name == "daum" or name in LAPLACE_FAMILY
                   else ["weight", "blood_pressure"])
        law = AssumeGaussian(covariances="assume-equal" if name in LAPLACE_FAMILY
                             else "certify")
        mech = cls(query=skattr.Query.mean(columns), secret=secret,
                   law=law, **privacy).fit(hospital)
        return mech, {"data": hospital, "n": 100}
    if name in WASSERSTEIN:
        # The share of the secret's group itself: its laws are two points,
        # so W = |b - a| is attained and the certificate is tight.
        mech = cls(query=skattr.Query.proportion("gender", "female"),
                   secret=secret, progress=False, **privacy).fit(hospital)
        return mech, {"data": hospital, "n": 100}
    if name in BASELINES:
        # The worst case of record-level DP: a proportion of the secret's
        # column, on datasets one record (or a group) apart.
        extra = {"group_size": 5} if name.startswith("group") else {}
        mech = cls(query=skattr.Query.proportion("gender", "female"), **extra,
                   **privacy).fit(hospital)
        return mech, {"data": hospital, "n": 100, "secret": secret,
                      "pair": BASELINES[name]}
    if name == "markov-quilt":
        schools = make_schools(1, 200, random_state=0)
        mech = cls(query=skattr.Query.proportion("sat", lambda s: s > 1300),
                   secret=skattr.Secret.mean("income", pairs=[(40_000, 80_000)]),
                   network=schools_network(), **privacy).fit(schools)
        return mech, {"data": schools_given_income(200), "n": 200}
    if name == "markov-quilt-swc":
        chain = ParameterNetwork.markov_chain([0.5, 0.5], CHAIN.tolist(),
                                              CHAIN_LENGTH)
        states = pd.DataFrame({"active": np.tile([0, 1], CHAIN_LENGTH // 2)})
        mech = cls(query=skattr.Query.proportion("active"), network=chain,
                   **privacy).fit(states)
        return mech, {"data": chain_given_entry(CHAIN_LENGTH // 2),
                      "n": CHAIN_LENGTH, "pair": (0, 1)}
    raise AssertionError(f"no audit setting for {name!r}: add one")


# Laplace noise certifies delta = 0; Gaussian noise needs delta > 0.
DELTAS = {**dict.fromkeys(LAPLACE_FAMILY + QUILTS + ("wasserstein", "dp-laplace",
                                                    "group-dp-laplace"), (0.0,)),
          "apgm": (1e-3, 1e-5), "dp-gaussian": (1e-3, 1e-5)}


def _deltas(name):
    return DELTAS.get(name, (1e-3,))


SETTINGS = [(name, epsilon, delta) for name in MECHANISMS
            for epsilon in (0.5, 1.0, 2.0) for delta in _deltas(name)]


def test_the_suite_covers_every_registered_mechanism():
    assert {name for name, _, _ in SETTINGS} == set(MECHANISMS)
    assert {cls.mechanism_name for _, cls in skattr.utils.all_estimators()} == set(
        MECHANISMS)


@pytest.mark.parametrize("name, epsilon, delta", SETTINGS)
def test_lower_bound_stays_below_the_certified_epsilon(name, epsilon, delta,
                                                       hospital, gender,
                                                       narrow_gender):
    secret = narrow_gender if name in WASSERSTEIN else gender
    mech, kwargs = build(name, epsilon, delta, hospital, secret)
    result = audit(mech, releases=RELEASES, random_state=1, **kwargs)
    assert result.epsilon == pytest.approx(epsilon)
    assert result.delta >= delta
    assert result.confidence == 0.95 and result.releases == RELEASES
    assert result.passed, result.summary()

"""The joint certificate's integral over its grid, against exact values.

A red team found the union and dual bounds' integral charging each grid
step's mass at its lower end, and the first step from 0 (Gaussian) or from
epsilon (Laplace) long: a point mass of distance d certified 0.92 of the
exact Gaussian delta, a far atom of chance 1e-12 hid a whole coordinate's
mass, and 128 of 300 random marginals were under their exact value. These
tests hold the certificate to exact values computed here (the Gaussian
mechanism's profile in closed form; the one-coordinate Laplace profile in
closed form), under the couplings any bound from marginals must cover
(comonotone, countermonotone, independent).
"""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

import skattr
from skattr.calibration._joint_coupled import (
    joint_gaussian_delta,
    joint_laplace_delta,
)
from skattr.laws._distances import CoupledDistances


def _g(mu, eps):
    """Balle and Wang's exact profile of the Gaussian mechanism."""
    mu = np.atleast_1d(np.asarray(mu, dtype=float))
    out = np.zeros_like(mu)
    m = mu > 0
    out[m] = (norm.cdf(-eps / mu[m] + mu[m] / 2)
              - np.exp(eps) * norm.cdf(-eps / mu[m] - mu[m] / 2))
    return np.maximum(out, 0.0)


def _laws(*pairs):
    return tuple(CoupledDistances(np.asarray(v, float), np.asarray(p, float))
                 for v, p in pairs)


@pytest.mark.parametrize("d", [0.3, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("eps", [0.2, 1.0, 5.0])
def test_a_point_mass_is_certified_at_least_its_exact_delta(d, eps):
    exact = float(_g(d, eps)[0])
    got = joint_gaussian_delta([_laws(([d], [1.0]))], [1.0], eps)
    assert got >= exact
    assert got <= exact * 1.01 + 1e-12          # the breaks make it exact


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_a_value_without_noise_is_charged_its_chance_of_moving(noise):
    # Value 1 moves with chance 0.01 under a scale so small that its ratio
    # overflows (as a search's scale can, on a quantile whose union split
    # gave it next to no noise); value 2 is a point mass at 1, scale 2. The
    # moving mass is charged whole, on top of value 2's exact delta, with no
    # NaN or floating-point warning on the way (a red team saw 0/0 and
    # inf - inf).
    import warnings

    delta_of = joint_gaussian_delta if noise == "gaussian" else joint_laplace_delta
    alone = delta_of([_laws(([1.0], [1.0]))], [2.0], 1.0)
    for tiny in (1e-300, 5e-324):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = delta_of([_laws(([0.0, 5.0], [0.99, 0.01]), ([1.0], [1.0]))],
                           [tiny, 2.0], 1.0)
        assert alone + 0.01 * 0.99 <= got <= alone + 0.01 + 1e-9
    # Not moving at all: nothing charged, however little its noise.
    got = delta_of([_laws(([0.0], [1.0]), ([1.0], [1.0]))], [5e-324, 2.0], 1.0)
    assert got == pytest.approx(alone, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("far", [10.0, 1e3, 1e5])
def test_a_far_rare_atom_does_not_hide_a_coordinate(far):
    # Coordinate 1 sits at d; coordinate 2 is 0 but for chance 1e-12 at far.
    for d in (0.5, 1.0):
        exact = float(_g(d, 1.0)[0])
        got = joint_gaussian_delta(
            [_laws(([d], [1.0]), ([0.0, far], [1 - 1e-12, 1e-12]))],
            [1.0, 1.0], 1.0)
        assert got >= exact


def _comonotone(laws, anti=False):
    cuts = sorted({float(c) for v, p in laws
                   for c in np.concatenate([[0.0], np.cumsum(p)])}
                  | {1.0 - float(c) for v, p in laws
                     for c in np.concatenate([[0.0], np.cumsum(p)])})
    atoms = []
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=False):
        if hi <= lo:
            continue
        u = 0.5 * (lo + hi)
        point = []
        for j, (v, p) in enumerate(laws):
            uu = 1 - u if (anti and j % 2) else u
            point.append(v[min(np.searchsorted(np.cumsum(p), uu), len(v) - 1)])
        atoms.append((np.array(point), hi - lo))
    return atoms


def _independent(laws):
    return [(np.array([a for a, _ in combo]), np.prod([q for _, q in combo]))
            for combo in itertools.product(*[list(zip(v, p, strict=True))
                                             for v, p in laws])]


def test_random_marginals_are_certified_above_every_coupling():
    rng = np.random.default_rng(46)
    checked = 0
    for _ in range(80):
        k = int(rng.integers(2, 4))
        eps = float(rng.choice([0.2, 1.0, 5.0]))
        laws = []
        for _ in range(k):
            m = int(rng.integers(1, 5))
            v = np.sort(rng.choice(
                [0.0, *np.round(rng.exponential(1.0, 6)
                                * rng.choice([0.3, 1, 3, 30]), 4)],
                m, replace=False))
            p = rng.dirichlet(np.ones(m) * 0.5)
            if rng.random() < 0.3:          # a rare far atom
                v = np.append(v, v.max() * rng.choice([10, 100, 1e4]) + 1)
                p = np.append(p * (1 - 1e-9), 1e-9)
            laws.append((v, p))
        s = np.exp(rng.normal(0, 0.5, k))
        got = joint_gaussian_delta([_laws(*laws)], s, eps)
        exact = max(sum(q * float(_g(np.sqrt(np.sum((x / s) ** 2)), eps)[0])
                        for x, q in atoms)
                    for atoms in (_comonotone(laws), _comonotone(laws, True),
                                  _independent(laws)))
        assert got >= exact, (laws, s, eps, got, exact)
        checked += exact > 1e-6
    assert checked >= 40            # most trials have a delta worth checking


@pytest.mark.parametrize("loss", [1.15, 1.3, 2.5])
@pytest.mark.parametrize("far", [10.0, 1e5])
def test_laplace_with_a_far_rare_atom_is_above_its_exact_delta(loss, far):
    # One coordinate at d = loss (b = 1), the other 0 but for 1e-12 at far:
    # the exact one-coordinate hockey-stick is 1 - e^((eps - L) / 2).
    eps = 1.0
    exact = 1 - np.exp((eps - loss) / 2)
    got = joint_laplace_delta(
        [_laws(([loss], [1.0]), ([0.0, far], [1 - 1e-12, 1e-12]))],
        [1.0, 1.0], eps)
    assert got >= exact


@pytest.mark.slow
@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-3), (0.2, 1e-5),
                                            (5.0, 1e-3)])
def test_apgm_on_certain_groups_holds_against_the_closed_form(epsilon, delta):
    # Every record in the group is (10, 0), every other (0, 10): the two
    # means move by exactly (2, -2) between 0.4 and 0.6 of 30 records, so
    # the true delta is the Gaussian mechanism's profile at ||(2, -2) / s||.
    n, size = 30, 200
    reference = pd.DataFrame({"g": np.repeat([1, 0], size),
                              "x": np.repeat([10, 0], size),
                              "y": np.repeat([0, 10], size)})
    private = reference.sample(n, random_state=0)
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    plan = private.attrpriv.plan(["x", "y"], statistic="mean", secret=secret,
                                 reference=reference, mechanism="apgm",
                                 epsilon=epsilon, delta=delta,
                                 bounds={"x": (0, 10), "y": (0, 10)})
    sd = np.sqrt(np.diag(np.asarray(plan.noise_covariance)))
    true = float(_g(np.linalg.norm(np.array([2.0, -2.0]) / sd), epsilon)[0])
    assert true <= plan.delta
    assert true >= 0.9 * plan.delta             # and the bound is near tight

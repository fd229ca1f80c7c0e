"""The joint certificate of several statistics against exact enumerated populations.

The oracle (``tests/_joint_oracle.py``, nothing from skattr) gives, for a
tiny population with adversarial joint record laws, the exact law of the
statistics under each secret, the exact joint law of their coupled move,
and the exact hockey-stick divergence of the noisy releases by quadrature.
The certificate is fed only the exact marginals of each |D_j|, so these
tests check its dependence-free bounds: it must cover E_pi g(||D / s||)
under the true joint law of the move (what joint convexity certifies) and
the true divergence; a bound assuming independence, or less noise, fails.
"""

import math

import numpy as np
import pytest
from _joint_oracle import (
    absolute_marginals,
    coupled_gaussian_expectation,
    gaussian_hockey_stick,
    independent_gaussian_expectation,
    laplace_hockey_stick,
    moved_difference_law,
    record_law,
    sum_law,
)

from skattr.calibration._jensen import jensen_bound
from skattr.calibration._joint_coupled import (
    dual_tail,
    joint_gaussian_certificate,
    joint_gaussian_delta,
    joint_gaussian_epsilon,
    joint_laplace_certificate,
    joint_laplace_delta,
    union_tail,
)
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._distances import CoupledDistances

KINDS = ("comonotone", "countermonotone", "shifted", "independent")


def _column(c):
    return lambda row: row[c]


def _is_two(c):
    return lambda row: row[c] == 2


def _population(kind, outside, n, shares, features, weights, columns=2):
    inside, out = record_law(kind, columns), record_law(outside, columns)
    k_a, k_b = shares
    law_a = sum_law(inside, out, n, k_a, features)
    law_b = sum_law(inside, out, n, k_b, features)
    joint = moved_difference_law(inside, out, k_b - k_a, features)
    marginals = absolute_marginals(joint, weights)
    laws = tuple(CoupledDistances(v, p) for v, p in marginals)
    return law_a, law_b, joint, marginals, laws


#: (statistics, weights as a function of n): two means; a mean and a count
#: of the other column's 2s; two sums.
STATISTICS = {
    "means": ((_column(0), _column(1)), lambda n: [1 / n, 1 / n]),
    "mean+count": ((_column(0), _is_two(1)), lambda n: [1 / n, 1.0]),
    "sums": ((_column(0), _column(1)), lambda n: [1.0, 1.0]),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("outside", ["zero", "independent"])
@pytest.mark.parametrize(("stats", "n", "shares"), [
    ("means", 6, (0, 3)), ("mean+count", 7, (2, 4)), ("sums", 8, (3, 6))])
def test_gaussian_delta_covers_the_exact_two_statistics(kind, outside, stats,
                                                        n, shares):
    features, weights = STATISTICS[stats]
    w = weights(n)
    law_a, law_b, joint, _, laws = _population(kind, outside, n, shares,
                                               features, w)
    unit = max(w) * (shares[1] - shares[0])
    for epsilon in (0.5, 2.0):
        for size in (0.4, 1.5):
            scales = [size * unit, 0.7 * size * unit / w[0] * w[1]]
            certified = joint_gaussian_delta([laws], scales, epsilon)
            coupled = coupled_gaussian_expectation(joint, w, scales, epsilon)
            exact = gaussian_hockey_stick(law_a, law_b, w, scales, epsilon)
            assert certified >= coupled - 1e-12
            assert certified >= exact - 1e-9


def test_a_bound_assuming_independence_is_caught():
    # Countermonotone columns, every out-of-group record (0, 0): the moved
    # records' two means move together, and the true divergence exceeds
    # what independent moves would give: the oracle refutes such a bound.
    features, weights = STATISTICS["means"]
    w = weights(6)
    law_a, law_b, joint, marginals, laws = _population(
        "countermonotone", "zero", 6, (0, 3), features, w)
    scales, epsilon = [0.3, 0.21], 1.0
    exact = gaussian_hockey_stick(law_a, law_b, w, scales, epsilon)
    independent = independent_gaussian_expectation(marginals, scales, epsilon)
    assert independent < exact - 0.02
    assert joint_gaussian_delta([laws], scales, epsilon) >= exact


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["comonotone", "countermonotone", "shifted"])
def test_gaussian_scales_certify_three_statistics(kind):
    # Three statistics (two means and a count), n = 7, 3 of 7 moved.
    features = (_column(0), _column(1), _is_two(2))
    w = [1 / 7, 1 / 7, 1.0]
    law_a, law_b, joint, _, laws = _population(kind, "zero", 7, (1, 4),
                                               features, w, columns=3)
    epsilon, delta = 1.0, 1e-2
    found = joint_gaussian_certificate([laws], epsilon, delta)
    assert found.delta <= delta
    assert found.bound in ("union", "dual", "jensen")
    scales = found.scales
    assert coupled_gaussian_expectation(joint, w, scales, epsilon) <= delta
    assert gaussian_hockey_stick(law_a, law_b, w, scales, epsilon) <= delta
    # Half the noise is refuted by the exact divergence: the test can fail.
    assert gaussian_hockey_stick(law_a, law_b, w, scales / 2, epsilon) > delta
    assert joint_gaussian_epsilon([laws], scales, delta) <= epsilon * (1 + 1e-6)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("stats", ["means", "mean+count"])
def test_laplace_delta_covers_the_exact_two_statistics(kind, stats):
    features, weights = STATISTICS[stats]
    w = weights(6)
    law_a, law_b, _, _, laws = _population(kind, "zero", 6, (0, 3), features,
                                           w)
    for epsilon in (0.5, 2.0):
        for size in (0.3, 1.0):
            b = [size * 3 * w[0], size * 2 * w[1]]
            certified = joint_laplace_delta([laws], b, epsilon)
            exact = laplace_hockey_stick(law_a, law_b, w, b, epsilon)
            assert certified >= exact - 1e-9


@pytest.mark.slow
def test_laplace_scales_certify_and_less_noise_is_refuted():
    features, weights = STATISTICS["means"]
    w = weights(6)
    law_a, law_b, _, _, laws = _population("shifted", "zero", 6, (0, 3),
                                           features, w)
    epsilon, delta = 1.0, 1e-2
    found = joint_laplace_certificate([laws], epsilon, delta)
    assert found.delta <= delta
    assert laplace_hockey_stick(law_a, law_b, w, found.scales, epsilon) <= delta
    assert laplace_hockey_stick(law_a, law_b, w, found.scales / 2,
                                epsilon) > delta


# --------------------------------------------- the three bounds by hand

def _bernoulli_extremes(p1, p2, z):
    """max over couplings of P(Z_1 + Z_2 > z), Z_j Bernoulli(p_j) of value 1."""
    if z < 1:
        return min(1.0, p1 + p2)
    if z < 2:
        return min(p1, p2)
    return 0.0


@pytest.mark.parametrize("z", [0.0, 0.5, 0.99, 1.0, 1.5, 2.0, 3.0])
def test_union_and_dual_bound_every_coupling_of_two_bernoullis(z):
    values, probs = [[1.0], [1.0]], [[0.1], [0.25]]
    worst = _bernoulli_extremes(0.1, 0.25, z)
    assert union_tail(values, probs, z) >= worst
    assert dual_tail(values, probs, z) >= worst


def test_jensen_bound_covers_every_coupling_of_two_bernoullis():
    # E g_eps(sqrt(Z_1 + Z_2)) under the comonotone, countermonotone and
    # independent couplings of two Bernoulli distances.
    from scipy import stats

    def g(mu, eps):
        return 0.0 if mu == 0 else (
            stats.norm.cdf(mu / 2 - eps / mu)
            - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu))

    p1, p2, v1, v2, eps = 0.2, 0.3, 0.5, 1.2, 1.0
    couplings = {
        "comonotone": {(1, 1): 0.2, (0, 1): 0.1, (0, 0): 0.7},
        "countermonotone": {(1, 0): 0.2, (0, 1): 0.3, (0, 0): 0.5},
        "independent": {(a, b): (p1 if a else 1 - p1) * (p2 if b else 1 - p2)
                        for a in (0, 1) for b in (0, 1)},
    }
    bound = jensen_bound([[v1], [v2]], [[p1], [p2]], eps)
    for joint in couplings.values():
        exact = sum(p * g(math.sqrt(a * v1 + b * v2), eps)
                    for (a, b), p in joint.items())
        assert bound >= exact


@pytest.mark.slow
def test_jensen_gives_sqrt_k_over_one_statistic_alone():
    # K identical statistics: at sqrt(K) times a scale certifying one alone
    # against psi (Jensen with one weight), all K are certified together.
    law = CoupledDistances(np.array([0.0, 1.0, 2.0]), np.array([0.9, 0.08, 0.02]))
    eps, delta, k = 1.0, 1e-3, 4
    lo, hi = 0.1, 100.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        alone = jensen_bound([(law.distances / mid) ** 2], [law.probs], eps,
                             [1.0])
        # A hair under delta: the joint delta carries its outward rounding.
        lo, hi = (lo, mid) if alone <= delta * (1 - 1e-6) else (mid, hi)
    scales = np.full(k, math.sqrt(k) * hi)
    assert joint_gaussian_delta([(law,) * k], scales, eps) <= delta
    assert np.all(joint_gaussian_certificate([(law,) * k], eps, delta).scales
                  <= scales * (1 + 1e-3))


# ---------------------------------------------------------- fail closed

def test_missing_mass_is_charged_and_bad_scales_refused():
    law = CoupledDistances(np.array([0.0, 1.0]), np.array([0.9, 0.09]))
    assert joint_gaussian_delta([(law, law)], [1e6, 1e6], 1.0) >= 0.02
    with pytest.raises(NotCertifiableError):
        joint_gaussian_delta([(law, law)], [1.0, math.nan], 1.0)
    with pytest.raises(NotCertifiableError):
        joint_gaussian_delta([(law, law)], [1.0], 1.0)
    with pytest.raises(NotCertifiableError):
        joint_gaussian_delta([(law, law), (law,)], [1.0, 1.0], 1.0)
    with pytest.raises(NotCertifiableError, match="unbounded"):
        joint_gaussian_certificate([(law, law)], 1.0, 1e-2)
    with pytest.raises(InvalidParameterError, match="targets"):
        joint_gaussian_certificate([(law, law)], 1.0, 0.5, allocate="relative")


def test_relative_allocation_keeps_the_targets_ratio():
    law = CoupledDistances(np.array([0.0, 1.0]), np.array([0.95, 0.05]))
    scales = joint_gaussian_certificate([(law, law)], 1.0, 1e-2,
                                        allocate="relative",
                                        targets=[10.0, -40.0]).scales
    assert scales[1] / scales[0] == pytest.approx(4.0)
    assert joint_gaussian_delta([(law, law)], scales, 1.0) <= 1e-2


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
def test_every_convex_majorant_lies_above_the_profile(epsilon):
    # psi >= phi (phi from the oracle's own profile) on a fine grid, and psi
    # convex: its slopes never decrease.
    from _joint_oracle import _profile

    from skattr.calibration._jensen import majorants, psi

    z = np.concatenate([np.linspace(0, 5 * epsilon + 5, 20001),
                        np.geomspace(5 * epsilon + 5, 1e4, 2000)])
    phi = _profile(np.sqrt(z), epsilon)
    for majorant in majorants(epsilon):
        above, slope = psi(z, epsilon, majorant)
        assert np.all(above >= phi - 1e-13)
        assert np.all(np.diff(slope) >= -1e-12)


@pytest.mark.parametrize("entry", ["gaussian", "laplace"])
def test_the_cut_short_check_answers_as_the_full_one(entry):
    # A scale's check skips Jensen's bound where the union or dual bound
    # certifies, and stops at the first pair not certified
    # (_joint_coupled._certifies): at a delta equal to the full check's own
    # value (a tie, where rounding decides) and a hair either side, it gives
    # the full check's answer.
    from skattr.calibration import _joint_coupled as jc

    rng = np.random.default_rng(11)
    entry = {"gaussian": jc._gaussian_entry, "laplace": jc._laplace_entry}[entry]
    for _ in range(12):
        per_pair = [tuple(CoupledDistances(np.sort(rng.random(5) * 3),
                                           rng.dirichlet(np.ones(6))[:5])
                          for _ in range(3)) for _ in range(2)]
        prepared = jc._prepared(per_pair)
        scales = rng.random(3) + 0.5
        full, _ = jc._worst(prepared, entry, scales, 1.0)
        for delta in (full, np.nextafter(full, 0.0), np.nextafter(full, 1.0)):
            assert jc._certifies(prepared, entry, scales, 1.0, delta) == (
                full <= delta)


def test_values_that_cannot_move_need_no_noise():
    # Constant columns: every law a point mass at 0. No scale is too small,
    # so the search returns no noise at once (it did not stop before).
    still = CoupledDistances(np.zeros(1), np.ones(1), largest=0.0)
    for certify in (joint_gaussian_certificate, joint_laplace_certificate):
        found = certify([(still, still)], 1.0, 1e-3)
        assert found.scales.tolist() == [0.0, 0.0] and found.delta == 0.0

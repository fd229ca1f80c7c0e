"""The Attribute-Private Gaussian Mechanism (Zhang, Ohrimenko and Cummings)."""

from __future__ import annotations

import numpy as np

from skattr._release import Certificate
from skattr.calibration._exact_noise import exact_required_noise_variance
from skattr.calibration._pair_noise import required_noise_variance
from skattr.mechanisms._pair_laws import GaussianPairLawMechanism
from skattr.mechanisms._registry import register
from skattr.mechanisms._relaxations import max_divergence_relaxation
from skattr.noise import GaussianNoise
from skattr.theta._pairs import PairLaws
from skattr.utils._param_validation import Interval

__all__ = ["AttributePrivateGaussian"]


@register
class AttributePrivateGaussian(GaussianPairLawMechanism):
    """Attribute-Private Gaussian Mechanism: Gaussian noise that hides a property.

    Releases a linear statistic F(X) (mean, sum, count or proportion of columns)
    plus N(0, sigma^2 I) noise, with sigma^2 the least variance such that, for
    every discriminative pair of the secret and every theta in Theta, the laws of
    the release given the two secrets are (epsilon, delta)-indistinguishable
    (dataset attribute privacy, Zhang et al. Def. 4). The data's own randomness
    counts: the noise is reduced by the conditional variance of F, and when that
    variance already covers the sensitivity no noise is added.

    Parameters
    ----------
    query : Query or None, default=None
        The statistic; None is the mean of every column but the secrets'.
    secret : Secret or list of Secret
        What to hide; with several, the worst case over them.
    epsilon : float, default=1.0
        Privacy loss bound, > 0.
    delta : float, default=1e-3
        Failure probability, in [0, 1) (Gaussian noise needs delta > 0).
    calibration : {"analytic", "classic"}, default="analytic"
        ``"analytic"``: the exact Gaussian calibration of Balle and Wang (valid
        for every epsilon). ``"classic"``: c = sqrt(2 ln(1.25/delta)) as in the
        paper (proven for epsilon < 1 only; a warning says so otherwise).
    theta : {"auto", "moments", "gaussian"}, ExpertTheta, MonteCarlo or \
Bootstrap, default="auto"
        ``"auto"``: per-group moments (exact mixture formulas for linear
        queries) or value frequencies (exact laws) of the reference data, worst
        case over them and 50 stratified bootstrap replicates, so the guarantee
        allows for the estimation error of a finite reference (measured in
        ``docs/small_reference.md``). ``"moments"``: the plug-in fit alone, as
        in the papers (recorded as an assumption). ``"gaussian"``: the joint
        Gaussian model of Sec. 4.2, checked against the reference. An
        :class:`~skattr.theta.ExpertTheta`: a set stated by an expert, worst
        case over it. Fitting needs at least 10 reference records in each
        secret group.
    sampling : {"without-replacement", "with-replacement"}
        How a private dataset is modelled as drawn from the reference records
        (for ``theta="auto"`` and ``"moments"``).
    covariances : {"certify", "assume-equal"}, default="certify"
        Theorem 1 assumes F given a secret has the same variance for every
        secret. ``"certify"``: when the modelled covariances differ, the exact
        profile of the two Gaussians (one statistic) or a Renyi bound certifies
        the pair. ``"assume-equal"``: take the theorem's assumption, using each
        side's covariance for both; the release records it.
    law : {"auto", "exact", "gaussian"}, default="auto"
        The law of F given each secret that the noise is certified against.
        ``"exact"``: the exact pmf of a count, proportion, or sum or mean of one
        integer-valued column (records independent draws from their group's
        value frequencies in the reference data); the privacy profile of the
        pmfs plus the noise is computed numerically. ``"gaussian"``: F given a
        secret is Gaussian with the modelled moments (Theorem 1's assumption),
        recorded on the release; it never certifies a noiseless release of
        fewer than 30 records. ``"auto"``: the exact law where it exists;
        otherwise fit refuses, naming the two alternatives (``law="gaussian"``
        or ``mechanism="approx-wasserstein"``).
    lambda_eta : float or None, default=None
        For non-Gaussian data (Algorithm 2): a bound on the approximate
        max-divergence between the true law of F given a secret and its
        Gaussian approximation, both ways, up to ``eta``. The certificate
        becomes (epsilon + 2 lambda_eta, (1 + e^(epsilon + lambda_eta)) eta +
        e^lambda_eta delta), Chen and Ohrimenko's Thm 4.6; the paper's Thm 3
        states e^lambda_eta delta + eta, which does not hold (see
        :func:`~skattr.mechanisms._relaxations.relaxed_certificate`).
    eta : float, default=0.0
        See ``lambda_eta``.
    random_state : None, int, Generator or RandomState, default=None
        None draws the noise from the operating system's entropy. A seed makes
        the noise reproducible, for experiments only: anyone who knows it can
        remove the noise.

    Attributes
    ----------
    columns_ : tuple
        The released columns.
    query_ : Query
        The query with its columns resolved.
    secrets_ : tuple of Secret
        The secrets.
    theta_ : tuple of list
        For each secret, the models of Theta (GroupMoments or JointGaussian).
    law_ : {"exact", "gaussian"}
        The law of F the noise is certified against.
    exact_laws_ : tuple or None
        With the exact law, each secret's model of it (count probabilities in
        and out of the group, or a :class:`~skattr.theta.SumLaws`).
    n_features_in_ : int
        Number of columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Column names seen in ``fit`` (DataFrames with string columns only).

    See Also
    --------
    skattr.theta.ExpertTheta : Theta stated by an expert.

    Notes
    -----
    Algorithm 1 of Zhang et al. [1]_: with the sensitivity
    Delta = max_theta max_(a,b) ||E[F | s_a, theta] - E[F | s_b, theta]||_2,
    the noise variance is sigma^2 = (c Delta / epsilon)^2 - min Var(F | s, theta),
    clipped at 0, with c = sqrt(2 ln(1.25/delta)). skattr computes the same
    condition pair by pair and theta by theta: the release's law given s_a is
    N(mu_a, Sigma_a + sigma^2 I), and sigma^2 is the least value for which the
    Mahalanobis distance of every pair is at most epsilon / c (classic) or the
    analytic bound of Balle and Wang [2]_, which never needs more noise than the
    paper's formula and equals it for one statistic and one theta. When the two
    sides of a pair have different covariances (the mixture formulas of
    per-group moments give such), the exact privacy profile of the two Gaussians
    (one statistic) or a Renyi-divergence bound (several) certifies the pair.

    Theorem 1 assumes F given a secret is Gaussian. skattr never assumes it
    silently: the exact law is used where it exists (counts, integer columns),
    and the Gaussian law only with ``law="gaussian"``, which the release
    records. For means over many records it holds approximately (central limit
    theorem); state ``lambda_eta`` and ``eta`` to account for the
    approximation (Algorithm 2 of the long version).

    References
    ----------
    .. [1] W. Zhang, O. Ohrimenko and R. Cummings. "Attribute Privacy:
       Framework and Mechanisms." ACM FAccT 2022. Algorithms 1-2, Theorems 1-3.
    .. [2] B. Balle and Y.-X. Wang. "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising."
       ICML 2018.

    Examples
    --------
    >>> import skattr
    >>> from skattr.datasets import make_hospital
    >>> reference = make_hospital(2000, random_state=0)
    >>> private = make_hospital(50, random_state=1)
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> mech = skattr.mechanisms.AttributePrivateGaussian(
    ...     query=skattr.Query.mean(["weight"]), secret=secret,
    ...     epsilon=1.0, delta=1e-3, law="gaussian", random_state=0
    ... ).fit(reference)
    >>> rel = mech.release(private)
    >>> round(rel.sensitivity, 2)   # 0.2 x the groups' weight gap, worst case
    4.18
    >>> round(float(rel.noise_std[0]), 2)
    10.46
    >>> round(mech.leakage(private), 2)  # epsilon of the raw mean, delta = 1e-3
    5.88

    The papers' plug-in Theta (``theta="moments"``) takes the reference's gap as
    the truth, which needs less noise and leaves estimation error uncovered:

    >>> plugin = skattr.mechanisms.AttributePrivateGaussian(
    ...     query=skattr.Query.mean(["weight"]), secret=secret,
    ...     law="gaussian", theta="moments").fit(reference)
    >>> round(plugin.plan(private).sensitivity, 2)
    3.79
    """

    _parameter_constraints = {
        **GaussianPairLawMechanism._parameter_constraints,
        # Gaussian noise certifies no (epsilon, 0) guarantee.
        "delta": [Interval("real", 0, 1, closed="neither")],
        "lambda_eta": [Interval("real", 0, None, closed="left"), None],
        "eta": [Interval("real", 0, 1, closed="left")],
    }

    mechanism_name = "apgm"

    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=1e-3,
                 calibration="analytic", theta="auto",
                 sampling="without-replacement", covariances="certify",
                 law="auto", lambda_eta=None, eta=0.0, random_state=None):
        self.query = query
        self.secret = secret
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.theta = theta
        self.sampling = sampling
        self.covariances = covariances
        self.law = law
        self.lambda_eta = lambda_eta
        self.eta = eta
        self.random_state = random_state

    def _plan(self, n: int) -> tuple[GaussianNoise, Certificate]:
        per_secret, notes = [], []
        for laws in self._laws(n):
            laws, note = self._prepare(laws)
            per_secret.append(laws)
            notes += note
        variance = 0.0
        methods = []
        if self.law_ == "exact":
            variance = exact_required_noise_variance(
                self._exact_pairs(n), self.epsilon, self.delta)
            methods.append("exact laws of the statistic plus Gaussian noise: "
                           "privacy profile computed numerically, rounded up")
        else:
            for laws in per_secret:
                required, method = required_noise_variance(
                    laws, self.epsilon, self.delta, self.calibration)
                methods.append(method)
                per_theta = self._per_theta(laws, required)
                variance = max(variance, float(per_theta.max(initial=0.0)))
        laws = PairLaws.concatenate(per_secret)
        k = len(self.columns_)
        cov = variance * np.eye(k)
        epsilon = self.epsilon
        delta, note = self._stated_delta(laws, cov, self.delta)
        assumptions = list(laws.assumptions) + list(dict.fromkeys(notes))
        assumptions += self._law_assumptions(n, variance == 0.0)
        if self.lambda_eta is not None:
            epsilon, delta, assumed = max_divergence_relaxation(
                epsilon, delta, self.lambda_eta, self.eta)
            assumptions.append(assumed)
        return GaussianNoise(cov), Certificate(
            epsilon=epsilon, delta=delta, sensitivity=laws.sensitivity,
            inherent_variance=laws.min_variance,
            method="; ".join(dict.fromkeys(methods)) + note,
            assumptions=tuple(assumptions),
        )

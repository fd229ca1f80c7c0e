"""What ``theta=`` means: one spec object per name, the same for every mechanism.

A mechanism maps its ``theta`` parameter to a spec once, at ``fit``
(:func:`resolve_theta`), and asks the spec for Theta through one small
protocol instead of switching on strings:

- ``moment_models(reference, secret, sampling)`` (``reference`` a
  :class:`skattr._data.Reference`): the models of the moments of
  the records' contributions given the secret (objects with ``sum_moments``
  and ``moments_given_set``), which the Gaussian pair-law mechanisms turn into
  the laws of F on both sides of every pair;
- ``fixes_law`` and ``exact_law(reference, secret, statistic)``: whether the
  spec fixes the records' law, and then the exact law model of a count or an
  integer sum (count probabilities, or a :class:`SumLaws`); None otherwise;
- ``assumptions``: what the spec takes for granted, recorded on the release;
- ``states_law``: True when an expert states the records' law itself.

The names: ``"auto"`` is :class:`FitAndBootstrap` (the reference's fit and its
stratified bootstrap replicates, worst case over them), ``"moments"`` is
:class:`PlugIn` (the reference's fit alone, a recorded assumption), and
``"gaussian"`` is :class:`JointGaussianFit` (Zhang et al. Sec. 4.2). The
objects users pass (``ExpertTheta``, ``MonteCarlo``, ``Bootstrap``) implement
the same protocol.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._sums import bootstrap_exact_law, fit_exact_law
from skattr.theta._fit import fit_joint_gaussian, group_moments
from skattr.theta._sampled import Bootstrap, refuse_mean_secret

__all__ = [
    "BOOTSTRAP_REPLICATES",
    "MIN_GROUP_RECORDS",
    "FitAndBootstrap",
    "JointGaussianFit",
    "PlugIn",
    "check_group_sizes",
    "resolve_theta",
]

#: The default Theta ("auto"): the worst case over the reference's fit and this
#: many stratified bootstrap replicates. docs/small_reference.md measures it: with
#: 50, at most 3% of reference draws gave a release whose true epsilon exceeds
#: 1.1x the certified one (the plug-in: up to 47%, and 35% at 2,000 records per
#: group when the groups' gap is small).
BOOTSTRAP_REPLICATES = 50

#: Fewest reference records in each secret group for the default Theta: below
#: it the bootstrap's noise is 3x that of the true moments and little is known
#: (docs/small_reference.md). The plug-in (theta="moments", an explicit and
#: recorded assumption) needs two, to have a variance.
MIN_GROUP_RECORDS = 10


def check_group_sizes(inside: np.ndarray, label: str) -> None:
    """Refuse a reference with fewer than MIN_GROUP_RECORDS on a side."""
    counts = int(inside.sum()), int((~inside).sum())
    if min(counts) < MIN_GROUP_RECORDS:
        which = "matching" if counts[0] < counts[1] else "not matching"
        raise NotCertifiableError(
            f"The reference data has {min(counts)} record(s) {which} the secret "
            f"{label}; Theta needs at least {MIN_GROUP_RECORDS} in each group to "
            "estimate its law (docs/small_reference.md measures why). Use more "
            "reference data, state Theta with skattr.theta.ExpertTheta, or take "
            "the plug-in fit as the truth with theta='moments' (recorded).")


@dataclass(frozen=True)
class PlugIn:
    """``theta="moments"``: the reference's fit taken as the population's.

    The per-group moments (from the data seam's sufficient statistics) or the
    value frequencies of an exact law, with no allowance for their estimation
    error; the release records the assumption.
    """

    name = "moments"
    states_law = False
    fixes_law = True
    assumptions = (
        "ASSUMED (theta='moments'): the reference's group moments or "
        "frequencies are the population's (plug-in), with no allowance for "
        "their estimation error; theta='auto' takes the worst case over "
        "bootstrap replicates",)

    def moment_models(self, reference, secret, sampling: str) -> list:
        """Return one model: the reference's per-group moments."""
        refuse_mean_secret(secret)
        (stats,) = reference.group_statistics([secret])
        return [group_moments(stats, sampling=sampling,
                              columns=reference.columns,
                              secret_label=secret.label)]

    def exact_law(self, reference, secret, statistic: str):
        """Return the reference's value frequencies in and out of the group."""
        inside = reference.groups(secret) == 1
        return fit_exact_law(reference.records()[:, 0], inside, statistic)


@dataclass(frozen=True)
class FitAndBootstrap:
    """``theta="auto"``: the reference's fit and its stratified bootstrap.

    The worst case over the plug-in fit and ``replicates`` replicates that
    resample each secret group's records with replacement (for exact laws,
    multinomial draws of the groups' frequencies), from at least
    ``MIN_GROUP_RECORDS`` records on each side. The replicates are seeded: the
    reference is public, so a seed costs no privacy and makes Theta a function
    of the reference alone.
    """

    replicates: int = BOOTSTRAP_REPLICATES

    name = "auto"
    states_law = False
    fixes_law = True
    assumptions = ()

    def moment_models(self, reference, secret, sampling: str) -> list:
        """Return the plug-in model and one per bootstrap replicate."""
        refuse_mean_secret(secret)
        z = reference.groups(secret)
        check_group_sizes(z == 1, secret.label)
        return Bootstrap(self.replicates, random_state=0).fit(
            z, reference.records(), sampling=sampling,
            columns=reference.columns, secret_label=secret.label)

    def exact_law(self, reference, secret, statistic: str):
        """Return the plug-in frequencies and their bootstrap replicates."""
        inside = reference.groups(secret) == 1
        check_group_sizes(inside, secret.label)
        h = reference.records()[:, 0]
        return bootstrap_exact_law(fit_exact_law(h, inside, statistic), h,
                                   inside, self.replicates, 0)


@dataclass(frozen=True)
class JointGaussianFit:
    """``theta="gaussian"``: the joint Gaussian model (Zhang et al. Sec. 4.2).

    Checked against the reference: the conditional covariance must not depend
    on the secret's attribute (see :func:`~skattr.theta._fit.fit_joint_gaussian`).
    It states moments, not a law of the records, so it has no exact law.
    """

    name = "gaussian"
    states_law = False
    fixes_law = False
    assumptions = ()

    def moment_models(self, reference, secret, sampling: str) -> list:
        """Return one model: the joint Gaussian fit of the contributions and z."""
        return [fit_joint_gaussian(reference.groups(secret),
                                   reference.records(),
                                   columns=reference.columns,
                                   secret_label=secret.label)]

    def exact_law(self, reference, secret, statistic: str):
        """Return None: the joint Gaussian model fixes no law of the records."""
        return None


_NAMES = {"auto": FitAndBootstrap, "moments": PlugIn, "gaussian": JointGaussianFit}


def resolve_theta(theta, names=tuple(_NAMES)):
    """Return the spec object ``theta=`` names; objects pass through.

    Parameters
    ----------
    theta : str or object
        One of ``names``, or a Theta object (``ExpertTheta``, ``MonteCarlo``,
        ``Bootstrap``, ``Resample``, ...).
    names : tuple of str
        The names the calling mechanism accepts.

    Examples
    --------
    >>> resolve_theta("auto")
    FitAndBootstrap(replicates=50)
    >>> resolve_theta("moments").assumptions[0][:28]
    "ASSUMED (theta='moments'): t"
    """
    if isinstance(theta, str):
        if theta not in names:
            raise InvalidParameterError(
                f"theta={theta!r} is not a Theta this mechanism fits; use one "
                f"of {list(names)} or a Theta object.")
        return _NAMES[theta]()
    return theta

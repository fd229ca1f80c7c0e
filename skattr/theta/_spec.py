"""What ``theta=`` means: one spec object per name, the same for every mechanism.

A mechanism maps its ``theta`` parameter to a spec once, at ``fit``
(:func:`resolve_theta`), and asks it for the law of its statistic through
one method, ``fit_law(request)``: the :class:`LawRequest` names the
reference data, the query, the secrets and the kinds of law the mechanism
calibrates (``"gaussian"``, ``"exact"``, ``"box"``, ``"bands"``,
``"network"``, ``"resampling"``), and the spec returns a
:class:`~skattr.laws.StatisticLaw` of one of them, or raises
:class:`LawUnavailable` saying why it has none. Every spec answers the
:class:`~skattr.theta.ThetaSpec` protocol: the kinds of law it gives
(``law_kinds``), whether it reads the reference's rows
(``reads_reference``, before any fit: ``bounds="robust"`` and
``"reference"`` read ranges only then, and only then is ``reference=``
needed), whether an expert states the records' law (``states_law``), and
what it assumes (``assumptions``: :class:`~skattr.Assumption` records).

The names: ``"auto"`` is :class:`FitAndBootstrap` (the reference's fit and its
stratified bootstrap replicates, worst case over them; for the Wasserstein
mechanisms and a statistic with no exact law, the resampling model),
``"moments"`` is :class:`PlugIn` (the reference's fit alone, a recorded
assumption), and ``"gaussian"`` is :class:`JointGaussianFit` (Zhang et al.
Sec. 4.2). The objects users pass (``ExpertTheta``, ``MonteCarlo``,
``Bootstrap``, ``Resample``, ``ProbabilityBox``, ``SumLaws``, arrays of count
probabilities, ``NetworkTheta``) answer the same method.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skattr._certificate import Assumption
from skattr._kinds import kinds, law_builder
from skattr._persistence import persistable
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws import ExactLaw
from skattr.laws._sums import SumLaws, bootstrap_exact_law, fit_exact_law
from skattr.theta._fit import fit_joint_gaussian, group_moments
from skattr.theta._protocol import ThetaSpec
from skattr.theta._request import (
    LawRequest,
    LawUnavailable,
    check_exact_request,
    exact_law_of,
    gaussian_law_of,
)
from skattr.theta._sampled import Bootstrap, refuse_mean_secret

__all__ = [
    "BOOTSTRAP_REPLICATES",
    "DEFAULT_CONFIDENCE",
    "MIN_GROUP_RECORDS",
    "FitAndBootstrap",
    "CountProbabilities",
    "JointGaussianFit",
    "PlugIn",
    "StatedSumLaws",
    "check_group_sizes",
    "reads_reference_rows",
    "resolve_theta",
    "theta_reads_reference",
]

#: The default Theta ("auto"): the worst case over the reference's fit and this
#: many stratified bootstrap replicates. docs/small_reference.md measures it: with
#: 50, at most 3% of reference draws gave a release whose true epsilon exceeds
#: 1.1x the certified one (the plug-in: up to 47%, and 35% at 2,000 records per
#: group when the groups' gap is small).
BOOTSTRAP_REPLICATES = 50

#: The default Theta's confidence over the reference sample: a count's
#: default laws hold for the population with at least this probability.
DEFAULT_CONFIDENCE = 0.999

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


@persistable
@dataclass(frozen=True)
class PlugIn(ThetaSpec):
    """``theta="moments"``: the reference's fit taken as the population's.

    The per-group moments (from the data seam's sufficient statistics) or the
    value frequencies of an exact law, with no allowance for their estimation
    error; the release records the assumption.
    """

    name = "moments"
    law_kinds = ("exact", "gaussian")
    states_law = False
    reads_reference = True
    assumptions = (Assumption.of("theta.plug-in"),)

    def fit_law(self, request: LawRequest):
        """Return the exact law (if asked for and defined) or the Gaussian one."""
        reference = request.reference()
        if "exact" in request.kinds:
            return exact_law_of(self, request, reference,
                                description="p estimated from the reference "
                                            "data")
        if "gaussian" in request.kinds:
            return gaussian_law_of(self, request, reference)
        request.refuse("'moments'", "the plug-in fit's laws")

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


def refuse_unbounded(request: LawRequest) -> None:
    """Refuse a default the reference's confidence sets do not bound.

    The resampling model takes the reference's records as the population,
    which a default certificate must not: it is an explicit opt-in
    (``theta=Resample()``), recorded on the release.
    """
    statistic = getattr(request.query, "statistic", "statistic")
    # The statistics bounded over the reference's confidence sets: counts
    # (the box) and every kind that registered a band law.
    bounded = [f"{k.name.replace('-', ' ')}s" for k in kinds()
               if k.counts or law_builder("band", k) is not None]
    mean = [secret.label for secret in request.secrets
            if secret.property != "proportion"]
    if mean:
        raise InvalidParameterError(
            f"The secret {mean[0]} protects a mean; the Wasserstein "
            "mechanisms' Theta bounds datasets with a group's share, so it "
            "needs Secret.proportion. A mean secret is certified under the "
            "joint Gaussian model: mechanism='apgm', theta='gaussian', "
            "law='gaussian' (an opt-in, recorded).")
    raise NotCertifiableError(
        f"No bound on the {statistic} holds for the population the reference "
        f"was sampled from yet (skattr bounds {', '.join(bounded[:-1])} and "
        f"{bounded[-1]} over the reference's confidence sets). To take "
        "the reference's records as the population, pass theta=skattr.theta."
        "Resample() (the certificate then holds for datasets drawn from "
        "them, and the release records it); or release a statistic skattr "
        "bounds.")


@persistable
@dataclass(frozen=True)
class FitAndBootstrap(ThetaSpec):
    """``theta="auto"``: the default Theta, by statistic.

    - a count or proportion: the reference's simultaneous Clopper-Pearson box
      (:class:`~skattr.theta.ConfidenceBox`, at ``DEFAULT_CONFIDENCE``),
      valid for the population the reference was sampled from;
    - the sum or mean, or one median or quantile, of one column, hiding a
      proportion, and (for the Wasserstein mechanisms) one column's std or
      trimmed mean, and (for them and apgm) several sums, means and counts
      at once, or medians, quantiles or stds: the reference's simultaneous
      confidence bands and the clipping range
      (:class:`~skattr.theta.ConfidenceBand`), valid for the population; a
      column with no clipping range is refused. The statistic's kind
      decides: one value of a kind that registered a band law
      (:func:`skattr._kinds.register_law`, family ``"band"``) is taken for
      the mechanisms its kind names
      (:attr:`~skattr._kinds.StatisticKind.default_band_for`), so a new
      statistic with a band law is certified by default with no edit here;
    - under ``law="gaussian"`` (an opt-in model), and for the statistics
      that have no bound valid for the population yet: the worst case over
      the plug-in fit and ``replicates`` replicates that resample each secret
      group's records with replacement (for exact laws, multinomial draws of
      the groups' frequencies); recorded as a measured safeguard, not a
      proof. The Wasserstein mechanisms refuse the others (regressions,
      functions) by default: ``theta=Resample()`` takes the reference's
      records as the population, an explicit choice.

    Each needs ``MIN_GROUP_RECORDS`` reference records on each side. The
    replicates are seeded: the reference is public, so a seed costs no
    privacy and makes Theta a function of the reference alone.
    """

    replicates: int = BOOTSTRAP_REPLICATES

    name = "auto"
    law_kinds = ("box", "bands", "exact", "gaussian")
    states_law = False
    reads_reference = True
    #: A count's, sum's, mean's, quantile's and std's laws lie in the
    #: reference's bands at this confidence (a ledger's joint law too).
    band_confidence = DEFAULT_CONFIDENCE

    @property
    def assumptions(self) -> tuple:
        """The bootstrap's heuristic, recorded on the laws it gives."""
        return (Assumption.of("theta.bootstrap", replicates=self.replicates),)

    def fit_law(self, request: LawRequest):
        """Return the default law of the statistic asked for.

        A count's is its confidence box; one column's sum, mean, median or
        quantile, hiding a proportion, its confidence bands (and, for the
        Wasserstein mechanisms, a std's or trimmed mean's, any value whose
        kind registered a band law; for them and apgm, several sums', means'
        and counts', and medians', quantiles' or stds'). Another statistic asked
        of the Wasserstein mechanisms is refused (``theta=Resample()`` is
        the explicit choice of the resampling model); under
        ``law="gaussian"``, the bootstrap's moments.
        """
        from skattr.theta._band import banded_by_default

        # What the confidence bands cover, as the statistic's kind says: one
        # value whose kind registered a band law (for the mechanisms the
        # kind names), and several sums, means and counts, or medians,
        # quantiles and stds, for the Wasserstein mechanisms and apgm.
        if banded_by_default(request):
            return self._band_law(request)
        if "resampling" in request.kinds and not request.counting():
            refuse_unbounded(request)
        if request.counting():
            return self._count_law(request)
        reference = request.reference()
        if "exact" in request.kinds:
            return exact_law_of(
                self, request, reference,
                description=(f"p estimated from the reference data and "
                             f"{BOOTSTRAP_REPLICATES} stratified bootstrap "
                             "replicates (worst case)"))
        if "gaussian" in request.kinds:
            return gaussian_law_of(self, request, reference)
        request.refuse("'auto'", "the fit's and its replicates' laws")

    def _count_law(self, request: LawRequest):
        """Return a count's law: the reference's confidence box, else its moments.

        The counting probabilities of the population lie in the reference's
        simultaneous Clopper-Pearson box with probability at least
        ``DEFAULT_CONFIDENCE`` (:class:`~skattr.theta.ConfidenceBox`); the
        mechanisms that calibrate a box certify the worst case over it. The
        reference's frequencies themselves (and their bootstrap replicates)
        are a point estimate, and no default certificate rests on one:
        theta="moments" takes them, recorded.
        """
        from skattr.theta._box import ConfidenceBox

        return self._confidence_law(
            request, ConfidenceBox(DEFAULT_CONFIDENCE),
            "a count is the reference's confidence box (skattr.theta."
            "ConfidenceBox)", ", or pass theta='moments' to take the "
            "reference's frequencies as the population's (recorded)")

    def _band_law(self, request: LawRequest):
        """Return a law over the confidence bands (sums, means, quantiles, std).

        Each group's distribution function lies in the reference's
        simultaneous band with probability at least ``DEFAULT_CONFIDENCE``
        (:class:`~skattr.theta.ConfidenceBand`), and every value in the
        clipping range; a column with no clipping range is refused (no bound
        on its sum holds for the population).
        """
        from skattr.theta._band import ConfidenceBand

        return self._confidence_law(
            request, ConfidenceBand(DEFAULT_CONFIDENCE),
            "a sum, mean, median or quantile is the reference's confidence "
            "bands (skattr.theta.ConfidenceBand)", "")

    def _confidence_law(self, request: LawRequest, spec, what: str,
                        otherwise: str):
        """Return ``spec``'s law (a "box" or "bands" kind), or the bootstrap's moments.

        A mechanism that calibrates no box gets the bootstrap's Gaussian law
        under ``law="gaussian"`` (an opt-in, recorded as not proven) and is
        refused otherwise.
        """
        if "box" in request.kinds or "bands" in request.kinds:
            reference = request.reference()
            for s in request.secrets:
                check_group_sizes(reference.groups(s) == 1, s.label)
            return spec.fit_law(request)
        if "gaussian" in request.kinds and "exact" not in request.kinds:
            return gaussian_law_of(self, request, request.reference())
        raise LawUnavailable(
            f"the default Theta of {what}, which this mechanism does not "
            f"calibrate; mechanism='apgm' and the Wasserstein mechanisms do"
            + otherwise)

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


@persistable
@dataclass(frozen=True)
class JointGaussianFit(ThetaSpec):
    """``theta="gaussian"``: the joint Gaussian model (Zhang et al. Sec. 4.2).

    Checked against the reference: the conditional covariance must not depend
    on the secret's attribute (see :func:`~skattr.theta._fit.fit_joint_gaussian`).
    It states moments, not a law of the records, so it has no exact law.
    """

    name = "gaussian"
    law_kinds = ("gaussian",)
    states_law = False
    reads_reference = True
    assumptions = ()

    def fit_law(self, request: LawRequest):
        """Return the Gaussian law of the joint model (no exact law)."""
        if "gaussian" not in request.kinds:
            raise LawUnavailable(
                "theta states moments (an expert's, a joint Gaussian's or "
                "sampled ones), which fix no law of the statistic")
        return gaussian_law_of(self, request, request.reference())

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

    An array of count probabilities becomes a :class:`CountProbabilities`,
    a :class:`~skattr.theta.SumLaws` a :class:`StatedSumLaws`.

    Parameters
    ----------
    theta : str, array-like or object
        One of ``names``, rows of count probabilities, or a Theta object
        (``ExpertTheta``, ``MonteCarlo``, ``Bootstrap``, ``Resample``, ...).
    names : tuple of str
        The names the calling mechanism accepts.

    Examples
    --------
    >>> resolve_theta("auto")
    FitAndBootstrap(replicates=50)
    >>> resolve_theta("moments").assumptions[0].kind
    'theta.plug-in'
    >>> str(resolve_theta("moments").assumptions[0])[:28]
    "ASSUMED (theta='moments'): t"
    """
    if isinstance(theta, str):
        if theta not in names:
            raise InvalidParameterError(
                f"theta={theta!r} is not a Theta this mechanism fits; use one "
                f"of {list(names)} or a Theta object.")
        return _NAMES[theta]()
    if isinstance(theta, SumLaws):
        return StatedSumLaws(theta)
    if isinstance(theta, (list, tuple, np.ndarray)):
        return CountProbabilities(theta)
    return theta


def theta_reads_reference(theta) -> bool:
    """Whether ``theta=`` (a name, stated values or a spec) reads reference rows.

    What the accessor and the ledger need ``reference=`` for: a name is
    fitted on the reference; stated values, an expert's Theta or a network
    read none (a spec that does not say is taken to read them).

    Examples
    --------
    >>> theta_reads_reference("auto"), theta_reads_reference([[0.3, 0.6]])
    (True, False)
    """
    if isinstance(theta, str):
        return True
    return bool(getattr(resolve_theta(theta), "reads_reference", True))


def reads_reference_rows(mechanism) -> bool:
    """Whether ``mechanism``'s Theta is computed from the reference's records.

    Only then is the frame ``fit`` sees public reference data whose ranges
    may be read (``bounds="robust"`` and ``"reference"``). An expert's Theta
    (``states_law``), a network or stated laws read no rows, and ``fit`` may
    then have seen the private data. The answer is
    :func:`theta_reads_reference`'s, the one the registry and the ledger
    ask before requiring ``reference=`` (a spec that does not say is taken
    to read them): a Theta that needs the reference is clipped with its
    ranges.
    """
    return bool(type(mechanism).needs_reference
                and theta_reads_reference(getattr(mechanism, "theta", "auto")))


@persistable
@dataclass(frozen=True, eq=False)
class CountProbabilities(ThetaSpec):
    """Theta stated as rows ``[P(counted | out), P(counted | in)]`` (a finite set).

    What an array passed as ``theta=`` to the Wasserstein mechanisms means:
    the exact count laws under each row.
    """

    rows: object

    law_kinds = ("exact",)
    states_law = False
    reads_reference = False
    assumptions = ()

    def fit_law(self, request: LawRequest):
        """Return the exact count laws under the stated rows."""
        if "exact" not in request.kinds:
            request.refuse("an array of count probabilities", "exact count laws")
        check_exact_request(request, sums=False)
        thetas = np.asarray(self.rows, dtype=float)
        if thetas.ndim != 2 or thetas.shape[1] != 2 or not np.all(
                (thetas >= 0) & (thetas <= 1)):
            raise InvalidParameterError(
                "theta must be 'moments', a finite set of pairs "
                "[[P(counted | out), P(counted | in)], ...] in [0, 1], a "
                f"ProbabilityBox or a Resample; got {self.rows!r}.")
        secrets = tuple(request.secrets)
        return ExactLaw(thetas=tuple(thetas for _ in secrets), secrets=secrets,
                        query=request.query, reads_reference=False,
                        description=f"{len(thetas)} stated p pairs")


@persistable
@dataclass(frozen=True, eq=False)
class StatedSumLaws(ThetaSpec):
    """Theta stated as a :class:`~skattr.theta.SumLaws`: an integer sum's laws."""

    laws: SumLaws

    law_kinds = ("exact",)
    states_law = False
    reads_reference = False
    assumptions = ()

    def fit_law(self, request: LawRequest):
        """Return the exact laws of the sum under the stated frequencies."""
        if "exact" not in request.kinds:
            request.refuse("SumLaws", "exact sum laws")
        check_exact_request(request, sums=True)
        secrets = tuple(request.secrets)
        laws = self.laws
        return ExactLaw(
            thetas=tuple(laws for _ in secrets), secrets=secrets,
            query=request.query, reads_reference=False,
            description=(f"the law of the column's {len(laws.values)} values "
                         f"in and out of the group ({len(laws.probs)} theta)"))

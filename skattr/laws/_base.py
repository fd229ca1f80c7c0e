"""The type every Theta produces: the law of F given each value of the secrets.

A Theta spec (``theta=``) fitted for a query and its secrets returns a
:class:`StatisticLaw`; a mechanism declares the kinds of law it calibrates
(``BaseMechanism.calibrates``) and asks the law only what its kind answers:

- :class:`~skattr.laws.GaussianLaw`: the Gaussian laws of F (mean and
  covariance) on both sides of every pair, under every model of Theta;
- :class:`~skattr.laws.ExactLaw`: the exact pmfs of a count or an integer sum
  under a finite Theta (with its moments, for the Gaussian calibrations);
- :class:`~skattr.laws.BoxLaw`: count laws over a continuous box of
  probabilities, bounded by branch and bound;
- :class:`~skattr.laws.NetworkLaw`: count laws under a parameter network;
- :class:`~skattr.laws.ResamplingLaw`: the laws of any statistic over
  datasets of reference records, bounded by couplings (enumerated, order
  statistics, moment bounds or draws).

The Wasserstein mechanisms read every kind but the Gaussian one through two
questions, :meth:`StatisticLaw.w_infinity` and :meth:`StatisticLaw.closeness`;
the Gaussian calibrations read :meth:`GaussianLaw.pair_laws` (and
:meth:`ExactLaw.exact_pairs`). Every law says what it assumes, whether it
was computed from the reference's rows, what the reference it came from
holds (its group sizes, for a confidence statement about the population),
and where it came from (``source``: the spec and its request), from which
:func:`skattr.theta.joint_law` gives the joint law of several statistics of
the same data (a ledger's).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, NamedTuple

import numpy as np

from skattr._certificate import Assumption, MethodStep
from skattr.exceptions import NotCertifiableError

__all__ = ["Bound", "StatisticLaw", "WidestPairs", "grid_assumptions",
           "secret_pairs", "widest_pairs"]

#: Fewest records a law learnt from reference data certifies with no noise:
#: below it a noiseless release publishes a function of a handful of records
#: exactly, and rests wholly on the group frequencies estimated from the
#: reference data.
MIN_EXACT_NOISELESS_RECORDS = 6


class Bound(NamedTuple):
    """A bound on a distance between the laws of F under the pairs.

    Attributes
    ----------
    value : float
        The bound (W in the statistic's units).
    how : MethodStep
        How it was found: its text completes "Laplace(W / epsilon), W ...".
    assumptions : tuple of Assumption
        What the bound takes for granted.
    """

    value: float
    how: MethodStep
    assumptions: tuple = ()


def secret_pairs(secret, n: int, privacy: str, *,
                 alternative: str | None = None) -> list[tuple[float, float]]:
    """Return the pairs of property values to tell apart, on n records.

    Dataset privacy conditions on a whole number of group records, so the
    pairs are read on the grid k / n, a stated pair off it as every grid
    pair around it (:meth:`~skattr.Secret.grid_pairs`; ``alternative`` is
    named when none is left); distributional privacy takes the stated
    values.
    """
    return secret.certified_pairs(n, privacy, alternative=alternative)


def grid_assumptions(secrets, n: int) -> tuple:
    """Return the records of the stated pairs read on the grid of n records.

    One ``"secret.grid"`` :class:`~skattr.Assumption` per secret with a
    stated pair off the grid k / n: its label, n, those pairs, the counts
    of records around each side, and every pair certified, as counts of
    records (k_a, k_b) out of n. Empty when every pair is on the grid.
    """
    found = []
    for secret in secrets:
        reading = secret.grid_reading(n)
        if not reading:
            continue
        certified = tuple((round(a * n), round(b * n))
                          for a, b in secret.grid_pairs(n))
        found.append(Assumption.of(
            "secret.grid", secret=secret.label, n=int(n),
            stated=tuple(pair for pair, _, _ in reading),
            sides=tuple((ka, kb) for _, ka, kb in reading),
            certified=certified))
    return tuple(found)


class WidestPairs(NamedTuple):
    """The pairs of shares whose intervals hold every other pair.

    Attributes
    ----------
    low, high : ndarray
        Each widest pair's shares, low < high.
    inner : ndarray of bool
        Whether another pair lies inside the widest pair's interval.
    """

    low: np.ndarray
    high: np.ndarray
    inner: np.ndarray


def widest_pairs(pairs) -> WidestPairs:
    """Return the pairs whose intervals [low, high] hold every pair of ``pairs``.

    A pair (a, b) lies inside (x, y) when min(a, b) >= x and max(a, b) <= y;
    the widest pairs are the pairs inside no other (each stated pair read in
    either order, repeated pairs once). A window of pairs within w of each
    other has one widest pair per distinct top share: (s, the largest grid
    share at most s + w), about as many as the grid has shares between
    low + w and high, where it has (w n)^2 / 2 pairs in all. A law that is
    monotone in the share between a pair's ends (each law it bounds lies
    between its values at the two ends) bounds every pair inside a widest
    one by the widest pair's ends alone; ``inner`` says where that is needed
    (where nothing lies inside, the pair itself is all there is).

    Examples
    --------
    >>> from skattr.laws._base import widest_pairs
    >>> widest_pairs([(0.4, 0.5), (0.6, 0.4), (0.45, 0.5), (0.5, 0.7)])
    ... # doctest: +NORMALIZE_WHITESPACE
    WidestPairs(low=array([0.4, 0.5]), high=array([0.6, 0.7]),
                inner=array([ True, False]))
    """
    pairs = np.asarray(list(pairs), dtype=float).reshape(-1, 2)
    if pairs.size == 0:
        empty = np.zeros(0)
        return WidestPairs(empty, empty, np.zeros(0, dtype=bool))
    ends = np.unique(np.sort(pairs, axis=1), axis=0)
    # By low share ascending, high share descending: a pair lies inside an
    # earlier one exactly when its high share does not pass the running
    # maximum, and then inside the last one that raised it.
    order = np.lexsort((-ends[:, 1], ends[:, 0]))
    low, high = ends[order, 0], ends[order, 1]
    before = np.concatenate([[-np.inf], np.maximum.accumulate(high)[:-1]])
    widest = high > before
    owner = np.maximum.accumulate(np.where(widest, np.arange(low.size), -1))
    inner = np.zeros(low.size, dtype=bool)
    inner[owner[~widest]] = True
    return WidestPairs(low[widest], high[widest], inner[widest])


class StatisticLaw(ABC):
    """The law of a released statistic F(X) given each value of the secrets.

    What a Theta spec fitted for a query and its secrets returns
    (``mechanism.law_``). Subclasses are frozen dataclasses holding one
    component per secret and answer the questions their kind supports.

    Attributes
    ----------
    kind : str
        The kind of law, as the registry matches it to the mechanisms that
        calibrate it (``"gaussian"``, ``"exact"``, ``"box"``, ``"network"``,
        ``"resampling"``).
    description : str
        Where Theta came from (a release's "Theta" line).
    assumptions : tuple of Assumption
        What Theta takes for granted (recorded on every release).
    reads_reference : bool
        The law was computed from the reference data's rows (False when an
        expert or a network states it).
    states_law : bool
        An expert states the records' law itself (no minimum on the records
        a noiseless release needs).
    reference_sizes : tuple or None
        Per secret, the reference records (out of, in) its group the law was
        learnt from; None when it was stated. What a confidence statement
        about the population needs.
    source : tuple or None
        (Theta's spec, the request it answered, without the data): what
        :func:`skattr.theta.joint_law` refits for several statistics. None
        for a law not fitted through a request.
    """

    kind: ClassVar[str] = ""

    @property
    @abstractmethod
    def description(self) -> str:
        """Where Theta came from (a release's "Theta" line)."""

    @property
    @abstractmethod
    def assumptions(self) -> tuple:
        """What Theta takes for granted."""

    #: ``records_iid``: the law models the records as i.i.d. draws (with
    #: replacement) from their groups, as an audit then resamples them.
    records_iid: ClassVar[bool] = False

    #: ``coupled``: the law is certified through couplings valid over a set
    #: of laws (:meth:`coupled_distances`), not through the pmfs of each.
    coupled: ClassVar[bool] = False

    def check_noiseless(self, n: int) -> None:
        """Refuse to certify a release of n records with no noise, when too few.

        A law an expert states (``states_law``) is the records' law itself
        and is exempt (Chen and Ohrimenko's Theta is often one record).
        """
        if not self.states_law and n < MIN_EXACT_NOISELESS_RECORDS:
            raise NotCertifiableError(
                f"The exact law certifies releasing the raw statistic of {n} "
                f"records, but a release of fewer than "
                f"{MIN_EXACT_NOISELESS_RECORDS} records with no noise publishes "
                "a function of a handful of records exactly, and its "
                "certificate would rest wholly on the group frequencies "
                "estimated from the reference data. Release more records, or "
                "a smaller epsilon.")

    def w_infinity(self, n: int, privacy: str) -> Bound:
        """Return the largest infinity-Wasserstein distance between the pairs' laws.

        The bound the Wasserstein Mechanism calibrates (Chen and Ohrimenko
        Thm 3.1), in the statistic's units, worst case over pairs, Theta and
        secrets; refused when it cannot be certified.
        """
        raise NotCertifiableError(
            f"A {type(self).__name__} gives no infinity-Wasserstein distance; "
            "use a mechanism that calibrates it.")

    def coupled_distances(self, n: int, privacy: str):
        """Return the law of the distance of F's values under a coupling.

        A :class:`~skattr.laws._distances.CoupledDistances`, worst case over
        pairs, Theta and secrets: a law stochastically larger than the
        distance between the values of F on both sides of every pair under
        one coupling of their laws, from which Gaussian noise is certified
        by joint convexity (:mod:`skattr.calibration._coupled`).
        """
        raise NotCertifiableError(
            f"A {type(self).__name__} gives no coupled distance law; use a "
            "mechanism that calibrates it.")

    def closeness(self, n: int, privacy: str, delta: float, *,
                  progress=False, label: str = "") -> Bound:
        """Return the least W such that the pairs' laws are (W, delta)-close.

        Chen and Ohrimenko's Def 3.2: some coupling moves all but delta of
        the mass by at most W (L1); the Approximate Wasserstein Mechanism
        calibrates to it. ``progress`` (a setting of
        :func:`skattr.utils._progress.progress_bar`) shows the draws, if any,
        under the name ``label``.
        """
        raise NotCertifiableError(
            f"A {type(self).__name__} gives no (W, delta)-closeness; use a "
            "mechanism that calibrates it.")

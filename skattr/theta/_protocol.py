"""The Theta protocol: what every ``theta=`` object answers, and its check.

A mechanism maps ``theta=`` to a spec (:func:`~skattr.theta._spec.resolve_theta`)
and asks it one question, ``fit_law(request)``; the registry, the clipping and
the ledger ask it a few more (does it read the reference, what does it
assume, over which bands do its laws lie). :class:`ThetaSpec` states them;
:class:`GivesLaw` is the parameter check a mechanism declares for ``theta``
(scikit-learn's ``HasMethods`` pattern, narrowed to the kinds of law the
mechanism calibrates) instead of a list of classes.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from skattr.utils._param_validation import HasMethods

__all__ = ["GivesLaw", "ThetaSpec"]


@runtime_checkable
class ThetaSpec(Protocol):
    """What a Theta spec answers: the law of a statistic, and how it got it.

    A spec is what ``theta=`` means once resolved: the names (``"auto"``,
    ``"moments"``, ``"gaussian"``), stated values (an array of count
    probabilities, a :class:`~skattr.theta.SumLaws`) and the objects users
    pass (:class:`~skattr.theta.ExpertTheta`, :class:`~skattr.theta.Resample`,
    :class:`~skattr.bayes.NetworkTheta`, ...) all become one. Derive from
    this class to write one (``docs/design.md``, "Extending skattr: a
    Theta"): ``fit_law``, ``law_kinds`` and ``reads_reference`` must be
    given; the other members have defaults here.

    A ``typing.Protocol`` rather than an ABC: :mod:`skattr.bayes`'s
    ``NetworkTheta`` sits beside :mod:`skattr.theta` (neither imports the
    other) and answers it without deriving from it.

    Attributes
    ----------
    law_kinds : tuple of str
        The kinds of law ``fit_law`` may return (a
        :class:`~skattr.laws.StatisticLaw`'s ``kind``: ``"gaussian"``,
        ``"exact"``, ``"box"``, ``"bands"``, ``"network"``,
        ``"resampling"``). A mechanism takes the spec only when one of them
        is among those it calibrates, and refuses it, before reading any
        data, otherwise.
    reads_reference : bool
        Whether ``fit_law`` reads the reference's records. Only then is the
        frame ``fit`` sees public reference data: ``bounds="robust"`` and
        ``"reference"`` read ranges off it, and the accessor and the ledger
        ask for ``reference=``. A spec that reads none (an expert's moments,
        stated probabilities, a network) is fitted on the data's columns
        alone.
    states_law : bool, default=False
        Whether an expert states the records' law itself (the release says
        so).
    assumptions : tuple of Assumption, default=()
        What the laws take for granted (:class:`~skattr.Assumption`
        records, on every release).
    band_confidence : float or None, default=None
        The confidence of the reference's simultaneous bands its laws lie
        in, when a ledger may bound several statistics' joint law over the
        same bands (Laplace noise); None: the spec models each statistic
        alone, and such a ledger is refused.
    resampling : Resample or None, default=None
        The resampling Theta whose options a ledger draws the joint law of
        different statistics with; None: the default ``Resample()``.
    """

    law_kinds: tuple
    reads_reference: bool
    states_law: bool = False
    assumptions: tuple = ()
    band_confidence: float | None = None
    resampling: object = None

    @abstractmethod
    def fit_law(self, request):
        """Return the law of ``request``'s statistic, of a kind it asks for.

        Parameters
        ----------
        request : LawRequest
            The reference data (``request.reference()``), the query, the
            secrets and the kinds of law the mechanism calibrates
            (``request.kinds``).

        Returns
        -------
        StatisticLaw
            A law whose ``kind`` is in ``request.kinds``.

        Raises
        ------
        LawUnavailable
            The spec gives none of the kinds asked for
            (``request.refuse(...)`` says so in the library's words).
        """


#: A Theta spec is recognised by its one question.
_ANSWERS_FIT_LAW = HasMethods(("fit_law",))


@dataclass(frozen=True)
class GivesLaw:
    """A Theta spec (an object with ``fit_law``) giving one of ``kinds``.

    What a mechanism's ``_parameter_constraints`` declare for ``theta``
    beside its names: scikit-learn's ``HasMethods`` pattern, so a spec
    written outside skattr is taken as ``ExpertTheta`` is. A spec that
    states its ``law_kinds`` and gives none of ``kinds`` is refused at once
    (a spec that does not state them is asked at ``fit``).

    Examples
    --------
    >>> from skattr.theta import ExpertTheta, Resample
    >>> constraint = GivesLaw(("gaussian", "exact"))
    >>> constraint.is_satisfied_by(Resample())
    False
    >>> constraint.is_satisfied_by(ExpertTheta([]))
    True
    >>> print(constraint)
    a Theta spec (skattr.theta.ThetaSpec) giving a law this mechanism \
calibrates ('gaussian' or 'exact')
    """

    kinds: tuple

    def is_satisfied_by(self, value) -> bool:
        """Whether ``value`` answers ``fit_law`` and may give one of ``kinds``."""
        if not _ANSWERS_FIT_LAW.is_satisfied_by(value):
            return False
        kinds = getattr(value, "law_kinds", None)
        return kinds is None or any(k in self.kinds for k in kinds)

    def __str__(self) -> str:
        kinds = [repr(k) for k in self.kinds]
        listed = kinds[0] if len(kinds) == 1 else (
            ", ".join(kinds[:-1]) + " or " + kinds[-1])
        return ("a Theta spec (skattr.theta.ThetaSpec) giving a law this "
                f"mechanism calibrates ({listed})")

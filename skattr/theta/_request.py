"""What a mechanism asks of Theta, and the laws every spec builds alike.

:class:`LawRequest` is the one question a mechanism asks a Theta spec
(``spec.fit_law(request)``): the law of its statistic under its secrets, of
one of the kinds it calibrates. The helpers here build the laws that several
specs share: the Gaussian law of moment models and the exact law of a count
or an integer sum.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from skattr._persistence import persistable
from skattr._query import Query
from skattr.backends import Reference
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws import ExactLaw, GaussianLaw
from skattr.laws._exact import MAX_EXACT_ATOMS, lattice_width
from skattr.laws._sums import SumLaws

__all__ = ["MAX_EXACT_MAGNITUDE", "MAX_EXACT_VALUES", "LawRequest",
           "LawUnavailable", "check_exact_request", "exact_law_of",
           "gaussian_law_of", "joint_law"]

#: Most distinct values of an integer column whose sum's exact law the
#: Gaussian calibrations compute.
MAX_EXACT_VALUES = 256

#: Largest magnitude of such a value (sums live on an int64 lattice).
MAX_EXACT_MAGNITUDE = 2**20


class LawUnavailable(NotCertifiableError):
    """A Theta gives none of the kinds of law asked for; the message says why."""


@persistable
@dataclass(frozen=True, eq=False)
class LawRequest:
    """What a mechanism asks Theta for: the law of its statistic, of given kinds.

    Attributes
    ----------
    frame : DataFrame
        The reference data (clipped as releases clip), pandas or Dask.
    query : Query, StackedQuery or Statistic
        The released statistic, its columns resolved.
    columns : tuple
        The released columns.
    secrets : tuple of Secret
    kinds : tuple of str
        The kinds of law the mechanism asks for (one of them is returned):
        what it calibrates, narrowed by its ``law=`` choice.
    sampling : str
        How a dataset's records are drawn from their groups (moment models).
    moments : bool
        An exact law must carry its Theta's moments too (the Gaussian
        calibrations start from them).
    privacy : {"dataset", "distributional"}
        Which attribute privacy the laws are for.
    ranges : tuple of (label, float, float)
        The clipping ranges of the released columns (``bounds=``): what a
        Theta valid for the population bounds unseen values by.
    """

    frame: object
    query: object
    columns: tuple
    secrets: tuple
    kinds: tuple
    sampling: str = "without-replacement"
    moments: bool = False
    privacy: str = "dataset"
    ranges: tuple = ()

    def about(self, frame, query, columns=None) -> LawRequest:
        """Return the same request for another statistic, on ``frame``."""
        return replace(self, frame=frame, query=query,
                       columns=tuple(query.columns if columns is None
                                     else columns))

    def fit(self, spec):
        """Return ``spec``'s law for this request, which remembers its source.

        The law keeps (spec, this request without the data), so that it can
        be refitted for other statistics (:func:`joint_law`).
        """
        law = spec.fit_law(self)
        return replace(law, source=(spec, replace(self, frame=None)))

    def reference(self) -> Reference:
        """Return the reference data as Theta reads it (the data seam)."""
        return Reference(self.frame, self.query, self.columns, self.secrets)

    def counting(self) -> bool:
        """Whether the statistic is one count or proportion."""
        query = self.query
        return (isinstance(query, Query) and query.kind.counts
                and query.columns is not None and len(query.columns) == 1)

    def summing(self) -> bool:
        """Whether the statistic is the sum or mean of one column."""
        query = self.query
        return (isinstance(query, Query) and not query.kind.counts
                and query.columns is not None and len(query.columns) == 1)

    def refuse(self, spec_name: str, gives: str):
        """Raise :class:`LawUnavailable`: the spec gives no kind asked for."""
        raise LawUnavailable(
            f"theta={spec_name} gives {gives}, and this mechanism calibrates "
            + (f"{' or '.join(self.kinds)} laws." if self.kinds else
               "no law of F but the Gaussian model law='gaussian' states."))


def gaussian_law_of(spec, request: LawRequest, reference: Reference, *,
                    description: str | None = None, grid=None) -> GaussianLaw:
    """Return the Gaussian law of ``spec``'s moment models for every secret."""
    models = tuple(tuple(spec.moment_models(reference, s, request.sampling))
                   for s in request.secrets)
    if description is None:
        description = "; ".join(dict.fromkeys(m.description for ms in models
                                              for m in ms))
    return GaussianLaw(models=models, secrets=tuple(request.secrets),
                       query=request.query, columns=tuple(request.columns),
                       description=description,
                       assumptions=tuple(spec.assumptions),
                       reads_reference=spec.reads_reference,
                       states_law=spec.states_law, grid=grid,
                       sampling=request.sampling)


def _no_exact_law(request: LawRequest, reference: Reference) -> str:
    """Why the Gaussian calibrations have no exact law here ("" if they have).

    Exact laws cover one count or proportion, or the sum or mean of one
    integer-valued column with at most ``MAX_EXACT_VALUES`` values, under a
    proportion secret compared pointwise.
    """
    query, columns = request.query, request.columns
    if not isinstance(query, Query) or len(columns) != 1:
        return (f"exact laws cover one count, proportion, sum or mean; "
                f"this query releases {len(columns)} statistics")
    for secret in request.secrets:
        if secret.property != "proportion" or secret.sets is not None:
            return (f"exact laws need a proportion secret with pairs or "
                    f"a window; {secret.label} is not one")
    if not query.kind.counts:
        values = np.unique(reference.records()[:, 0])
        if not np.all(values == np.round(values)):
            return (f"the column {columns[0]!r} takes non-integer "
                    "values, so the law of its mean is continuous")
        if values.size > MAX_EXACT_VALUES:
            return (f"the column {columns[0]!r} takes "
                    f"{values.size} distinct values (the exact law is "
                    f"computed for at most {MAX_EXACT_VALUES})")
        # Sums are computed on an int64 lattice: values must stay far from
        # overflow, and the lattice narrow enough to hold a dataset's sum.
        if np.abs(values).max() > MAX_EXACT_MAGNITUDE:
            return (f"the column {columns[0]!r} takes values "
                    f"beyond {MAX_EXACT_MAGNITUDE:g} in magnitude")
        if lattice_width(values) > MAX_EXACT_ATOMS:
            return (f"the column {columns[0]!r} spans "
                    f"{lattice_width(values):g} steps of its values' "
                    "lattice, too wide for its exact law")
    return ""


def check_exact_request(request: LawRequest, *, sums: bool) -> None:
    """Refuse a query or secret the exact count (``sums``: or sum) laws miss."""
    for secret in request.secrets:
        if secret.property != "proportion":
            raise InvalidParameterError(
                f"The secret {secret.label} protects a mean; the exact laws need a "
                "proportion secret (or theta=skattr.theta.Resample()).")
    if not (request.counting() or (sums and request.summing())):
        raise InvalidParameterError(
            "Exact laws cover one count or proportion (theta='moments', p "
            "pairs or a ProbabilityBox) or the sum or mean of one "
            "integer-valued column (theta='moments' or SumLaws); for any "
            "other statistic use theta=skattr.theta.Resample().")


def exact_law_of(spec, request: LawRequest, reference: Reference, *,
                 description: str) -> ExactLaw:
    """Return the exact law of a count or integer sum that ``spec`` fixes.

    For the Gaussian calibrations (``request.moments``) it carries the same
    Theta's moments, with records drawn with replacement as the exact law
    models them; otherwise it is the laws alone, ``description`` its Theta
    line.
    """
    secrets = tuple(request.secrets)
    if request.moments:
        why = _no_exact_law(request, reference)
        if why:
            raise LawUnavailable(why)
        thetas = tuple(spec.exact_law(reference, s, request.query.statistic)
                       for s in secrets)
        # Exact laws model records as independent draws from their group
        # (with replacement); the moments must agree with them.
        moments = gaussian_law_of(spec, replace(
            request, sampling="with-replacement"), reference)
        return ExactLaw(thetas=thetas, secrets=secrets, query=request.query,
                        moments=moments, description=moments.description,
                        assumptions=tuple(spec.assumptions))
    check_exact_request(request, sums=True)
    statistic = "count" if request.counting() else "sum"
    for s in secrets:
        inside = reference.groups(s) == 1
        if min(inside.sum(), (~inside).sum()) < 2:
            raise NotCertifiableError(
                f"The reference data has too few records on one side of the "
                f"secret {s.label} to estimate the {statistic}'s law.")
    thetas = tuple(spec.exact_law(reference, s, statistic) for s in secrets)
    if isinstance(thetas[0], SumLaws):
        description = (f"the law of the column's {len(thetas[0].values)} values "
                       f"in and out of the group ({len(thetas[0].probs)} theta)")
    return ExactLaw(thetas=thetas, secrets=secrets, query=request.query,
                    description=description, assumptions=tuple(spec.assumptions))


def joint_law(law, query, *, frame, columns=None):
    """Return the joint law of ``query``: ``law``'s statistic stacked with others.

    A ledger certifies several releases of one dataset from the law of their
    statistics together (cross-covariances included): the Theta that gave
    ``law``, with the same options (``law.source``), fitted for the stacked
    ``query`` on ``frame`` (the reference data, clipped as the releases clip
    it). ``columns`` are the query's resolved columns (its own by default).

    Raises
    ------
    NotCertifiableError
        The law keeps no Theta to refit (it was not fitted through a
        request), or Theta gives no law of ``query``.
    """
    source = getattr(law, "source", None)
    if source is None:
        raise NotCertifiableError(
            f"This {type(law).__name__} keeps no Theta to refit for other "
            "statistics (it was stated whole); fit the mechanism through a "
            "Theta to certify its releases jointly.")
    spec, request = source
    return request.about(frame, query, columns).fit(spec)

"""Groups subsampled to public sizes: a share hidden exactly (issue 43).

Under the attribute-privacy model (records independent given their group;
a group's law the same under every secret of the pairs), a uniformly random
subset of s records of a group holding at least s records is distributed as
s independent records of that group's law, whatever the group's size. So
if each group of the secret is subsampled, independently of the values, to
a size fixed by public information alone, the subsampled groups have the
same joint law under every secret of the pairs: anything computed from them
(a synthetic table, a trained model, statistics) reveals nothing of the
share. Proof: given the group holds k >= s records, the k records are
i.i.d. from the group's law and independent of the complement's; a subset
chosen uniformly and independently of the values is then s i.i.d. records
of that law (exchangeability), and the two groups' subsets are independent;
k enters nowhere. ``docs/synthetic.md`` states it with the conditions.

The public sizes (:func:`public_sizes`):

- dataset privacy: the smallest size each group can have under any secret
  the certificate covers (pairs read on the grid k / n, windows and sets
  included): min k inside and n - max k outside. Nothing can fail: epsilon
  0 and delta 0 for the share.
- distributional privacy: the group's size is Binomial(n, p) under a share
  p; each group's size is the lower ``delta / 2`` quantile at the least
  share it can have, so that under every share of the secret the data holds
  both sizes but with chance at most ``delta``; a failure refuses (nothing
  released), and its chance is the share's delta.

:func:`subsample_groups` draws the subsets. One home: the synthesisers and
the models subsample through these two functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from skattr._certificate import Assumption, Method, MethodStep
from skattr._data import secret_indicator
from skattr._random import check_random_state
from skattr._release import Certificate
from skattr._secret import Secret
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.laws._base import grid_assumptions

__all__ = ["PublicSizes", "public_sizes", "share_certificate", "stated_shares",
           "subsample_groups", "subsample_positions", "neighbours_assumption"]


@dataclass(frozen=True)
class PublicSizes:
    """How many records of each group of a secret are kept: public numbers.

    Attributes
    ----------
    inside, outside : int
        Records kept from the secret's group and from the rest.
    n : int
        The records of the private data (public).
    privacy : {"dataset", "distributional"}
        Which attribute privacy the sizes serve.
    failure : float
        The chance, under any share the secret covers, that the data holds
        fewer records of a group than kept (0 under dataset privacy): the
        share's delta.
    least, most : float
        The least and largest share of the group the secret covers.
    """

    inside: int
    outside: int
    n: int
    privacy: str
    failure: float
    least: float
    most: float

    @property
    def left_out(self) -> int:
        """Records of the private data no computation reads."""
        return self.n - self.inside - self.outside


def _shares(secret: Secret, n: int, privacy: str) -> tuple[float, float]:
    """Return the least and largest share of the group the secret covers.

    The values its pairs are certified at: pairs as :meth:`Secret.
    certified_pairs` reads them, a window's support or the sets on the grid
    k / n as :meth:`Secret.pair_values` enumerates them (without forming
    every pair).
    """
    if secret.pairs is not None:
        values = np.array(secret.certified_pairs(n, privacy), dtype=float)
        return float(values.min()), float(values.max())
    ranges = ([secret.support] if secret.window is not None
              else list(secret.sets))
    if privacy == "distributional":
        # A population's share is any number in the ranges, not only k / n.
        return (float(min(lo for lo, _ in ranges)),
                float(max(hi for _, hi in ranges)))
    grids = [secret._grid(lo, hi, n) for lo, hi in ranges]
    values = np.concatenate(grids) if grids else np.empty(0)
    if values.size == 0:
        secret.pair_values(n)               # its own refusal, in its words
    return float(values.min()), float(values.max())


def public_sizes(secret: Secret, n: int, privacy: str = "dataset", *,
                 delta: float = 0.0, least: int = 1) -> PublicSizes:
    """Return the sizes each group of ``secret`` is subsampled to, on n records.

    Parameters
    ----------
    secret : Secret
        A proportion secret (a group: the records whose column holds the
        value).
    n : int
        The records of the private data (public).
    privacy : {"dataset", "distributional"}, default="dataset"
        Dataset privacy keeps the smallest size each group can have under
        the secret (no failure); distributional privacy a binomial lower
        quantile, failing with chance at most ``delta``.
    delta : float, default=0.0
        Distributional privacy: the chance the data holds fewer records of
        a group than kept (then nothing is released). Must be in (0, 1).
    least : int, default=1
        The fewest records of a group worth keeping.

    Returns
    -------
    PublicSizes

    Raises
    ------
    InvalidParameterError
        A secret that is not a proportion, a bad n or delta, or a group that
        could hold fewer than ``least`` records, naming the smallest n that
        would do.

    Examples
    --------
    >>> from skattr import Secret
    >>> women = Secret.proportion("sex", "Female", pairs=[(0.4, 0.6)])
    >>> sizes = public_sizes(women, 747)
    >>> sizes.inside, sizes.outside, sizes.left_out     # 298 women, 298 men
    (298, 298, 151)
    """
    if not isinstance(secret, Secret) or secret.property != "proportion":
        raise InvalidParameterError(
            "Subsampling to public sizes hides the share of a group: pass a "
            "Secret.proportion(column, value, ...).")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise InvalidParameterError(f"n must be a whole number of at least 2 "
                                    f"records; got {n!r}.")
    if privacy not in ("dataset", "distributional"):
        raise InvalidParameterError(
            f"privacy must be 'dataset' or 'distributional'; got {privacy!r}.")
    n = int(n)
    low, high = _shares(secret, n, privacy)
    if privacy == "dataset":
        # The grid's counts: k / n read back as whole records.
        inside = round(low * n)
        outside = n - round(high * n)
        failure = 0.0
    else:
        if not (isinstance(delta, (int, float)) and 0.0 < delta < 1.0):
            raise InvalidParameterError(
                "Distributional privacy subsamples to a size the data holds "
                "except with chance delta: pass 0 < delta < 1 (e.g. 1e-6); "
                f"got {delta!r}.")
        from scipy.stats import binom

        # Sizes under the least share inside and the largest outside are
        # stochastically the smallest (a binomial grows with its p); each
        # falls short with chance below delta / 2.
        inside = _lower_quantile(binom, n, low, delta / 2)
        outside = _lower_quantile(binom, n, 1.0 - high, delta / 2)
        failure = float(delta)
    if inside < least or outside < least:
        raise InvalidParameterError(
            f"On {n} records the secret {secret.label!r} allows a group of "
            f"{min(inside, outside)} records ({privacy} privacy), fewer than "
            f"the {least} a subsample needs. "
            + ("A share of 0 or 1 leaves a group empty on any n: state "
               "shares strictly between 0 and 1." if _stated_edge(secret)
               else _smallest_n(secret, privacy, delta, least, n)))
    return PublicSizes(int(inside), int(outside), n, privacy, failure, low,
                       high)


def stated_shares(secret: Secret) -> tuple[float, float]:
    """Return the least and largest share the secret states (not read on a grid).

    Examples
    --------
    >>> from skattr import Secret
    >>> stated_shares(Secret.proportion("g", 1, window=0.1, support=(0.3, 0.6)))
    (0.3, 0.6)
    """
    if secret.pairs is not None:
        values = [v for pair in secret.pairs for v in pair]
    elif secret.window is not None:
        values = list(secret.support)
    else:
        values = [v for bounds in secret.sets for v in bounds]
    return float(min(values)), float(max(values))


def _stated_edge(secret: Secret) -> bool:
    """Whether the secret states a share of 0 or 1 (a group empty on any n)."""
    low, high = stated_shares(secret)
    return low <= 0.0 or high >= 1.0


def _lower_quantile(binom, n: int, p: float, q: float) -> int:
    """Return the largest s with P(Binomial(n, p) < s) <= q."""
    if p <= 0.0:
        return 0
    s = int(binom.ppf(q, n, p))
    # ppf gives the least s with P(K <= s) >= q; P(K < s) = cdf(s - 1) < q.
    while s > 0 and binom.cdf(s - 1, n, p) > q:
        s -= 1
    return s


def _smallest_n(secret: Secret, privacy: str, delta: float, least: int,
                n: int) -> str:
    """Say an n whose groups are large enough: the least, by bisection."""
    def works(m: int) -> bool:
        try:
            public_sizes(secret, m, privacy, delta=delta, least=least)
        except InvalidParameterError:
            return False
        return True

    low, high = n, 2 * n
    while not works(high):
        low, high = high, 2 * high
        if high > 2**22:
            return "No n up to 4 million records would do."
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if works(middle) else (middle, high)
    return f"n = {high} records would do."


def subsample_groups(frame: pd.DataFrame, secret: Secret, sizes: PublicSizes,
                     random_state=None, *, what: str = "the private data"
                     ) -> pd.DataFrame:
    """Return ``sizes.inside`` records of the group and ``sizes.outside`` others.

    Each subset is drawn uniformly at random, independently of the values;
    the rows are returned in a random order with a fresh index (neither
    says which records were kept).

    Parameters
    ----------
    frame : DataFrame
        The private data, of ``sizes.n`` records.
    secret : Secret
        The secret the sizes were computed for.
    sizes : PublicSizes
        From :func:`public_sizes`.
    random_state : None, int or Generator, default=None
        The draw (None: from the operating system).
    what : str
        The data, for messages.

    Returns
    -------
    DataFrame
        ``sizes.inside + sizes.outside`` rows of ``frame``.

    Raises
    ------
    DataValidationError
        The frame has another number of records than planned, or a group
        holds fewer records than kept: under dataset privacy its share lies
        outside the secret; under distributional privacy the size bound
        failed (a chance counted in delta). Nothing is drawn.

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr import Secret
    >>> frame = pd.DataFrame({"sex": ["F"] * 4 + ["M"] * 6, "x": range(10)})
    >>> secret = Secret.proportion("sex", "F", pairs=[(0.3, 0.5)])
    >>> sizes = public_sizes(secret, 10)
    >>> kept = subsample_groups(frame, secret, sizes, random_state=0)
    >>> sorted(kept["sex"].value_counts().items())
    [('F', 3), ('M', 5)]
    """
    rows = subsample_positions(frame, secret, sizes, random_state, what=what)
    return frame.iloc[rows].reset_index(drop=True)


def subsample_positions(frame: pd.DataFrame, secret: Secret,
                        sizes: PublicSizes, random_state=None, *,
                        what: str = "the private data") -> np.ndarray:
    """Return the positions of the rows :func:`subsample_groups` keeps, shuffled.

    ``frame`` needs only the secret's column: a caller that keeps its own
    rows (a model's X, y and weights; one-hot codes) subsamples by position.
    Raises as :func:`subsample_groups`.
    """
    if len(frame) != sizes.n:
        raise DataValidationError(
            f"{what[0].upper()}{what[1:]} has {len(frame)} records; its public "
            f"sizes were planned for n = {sizes.n}. Plan them for this n.")
    member = np.asarray(secret_indicator(frame, secret, what=what)) == 1.0
    have_in, have_out = int(member.sum()), int((~member).sum())
    if have_in < sizes.inside or have_out < sizes.outside:
        why = ("its share lies outside the secret's pairs: the certificate "
               "would not cover it" if sizes.privacy == "dataset" else
               "the size bound failed (a chance counted in delta)")
        raise DataValidationError(
            f"{what[0].upper()}{what[1:]} holds {have_in} records of the group "
            f"and {have_out} others, fewer than the {sizes.inside} and "
            f"{sizes.outside} kept: {why}. Nothing was released.")
    rng = check_random_state(random_state, owner="subsample_groups")
    # A uniform permutation's first s: a uniform s-subset.
    inside = rng.permuted(np.flatnonzero(member))[:sizes.inside]
    outside = rng.permuted(np.flatnonzero(~member))[:sizes.outside]
    return rng.permuted(np.concatenate([inside, outside]))


def share_certificate(secret: Secret, sizes: PublicSizes, *,
                      what: str = "released") -> Certificate:
    """Return the certificate of the share for a release from subsampled groups.

    Epsilon 0; delta the sizes' failure chance (0 under dataset privacy);
    the attribute-privacy model as its assumption (and the grid's reading
    of the pairs under dataset privacy). ``what`` says what is not done when
    a size bound fails ("released", "fitted").
    """
    failure = ("" if sizes.privacy == "dataset" else
               f"; the data holds fewer records of a group than kept with "
               f"chance at most {sizes.failure:g} under every share of the "
               f"secret (then nothing is {what}): the share's delta")
    return Certificate(
        epsilon=0.0, delta=float(sizes.failure), sensitivity=0.0,
        certified_by=Method((MethodStep.of(
            "subsample.public-sizes", inside=sizes.inside,
            outside=sizes.outside, n=sizes.n, left_out=sizes.left_out,
            failure=failure),)),
        assumed=(Assumption.of("records.independent", reads="any law",
                               privacy=sizes.privacy),
                 *(grid_assumptions((secret,), sizes.n)
                   if sizes.privacy == "dataset" else ())),
        guarantee=f"{sizes.privacy} attribute privacy",
        calibration="subsample")


def neighbours_assumption(sizes: PublicSizes, neighbours: str) -> Assumption:
    """Return differential privacy's neighbouring datasets, as a record.

    "any": a record replaced by any other, its group included; "same-group":
    its group kept (opt-in); both datasets holding the public sizes.
    """
    sized = {"inside": sizes.inside, "outside": sizes.outside}
    if neighbours == "same-group":
        return Assumption.of("records.same-group", **sized)
    return Assumption.of("records.neighbours", **sized)

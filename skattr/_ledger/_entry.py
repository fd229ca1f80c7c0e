"""One release made through a ledger, as the ledger keeps it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skattr._persistence import persistable
from skattr._release import Release

__all__ = ["LedgerEntry"]


@persistable
@dataclass(frozen=True)
class LedgerEntry:
    """One release made through a ledger.

    Attributes
    ----------
    release : Release or None
        The release, with its own certificate (of it alone); None in a
        ledger loaded from a file of schema 1 or 2, which keeps ``record``
        instead.
    statistics : tuple of (Query, float)
        Per released value, its base statistic (the sum of a column or the
        count of a value) and the weight w(n) it is released with.
    noise_cov : ndarray of shape (k, k)
        The covariance of the noise added to the values.
    joint_epsilon : float
        The joint epsilon (at the budget's delta) of every release up to and
        including this one.
    record : dict or None
        ``Release.to_dict()`` of the release, for a loaded ledger.
    laplace : dict or None
        For a Laplace-noise release (the Wasserstein mechanisms): which
        statistic it is (``key``, and ``statistic``: its query and columns,
        None for a function), its own ``epsilon`` and ``delta``, ``beta``,
        the part of delta a drawn law may misjudge, the noise's ``scale``,
        whether it was fitted on the resampling Theta (``resample``) and its
        ``privacy``.
    joint_delta : float or None
        The joint delta when it is below the budget's (Laplace releases);
        None means the budget's delta.
    nonce : int or None
        For a seeded release of a ledger kept in a store or loaded from a
        file: the random number mixed into the seed's stream of this release
        (with the seed, it gives the release's noise again). None otherwise.
    joint_bound : str or None
        Which bound gave ``joint_epsilon``
        (:data:`skattr._plain.JOINT_BOUNDS`); None for a release loaded
        from a file (not kept there).
    """

    release: Release | None
    statistics: tuple
    noise_cov: np.ndarray
    joint_epsilon: float
    record: dict | None = None
    laplace: dict | None = None
    joint_delta: float | None = None
    nonce: int | None = None
    joint_bound: str | None = None

    def as_record(self) -> dict:
        """Return the release as plain data (``Release.to_dict()``)."""
        return self.record if self.release is None else self.release.to_dict()

"""Learn theta models from reference data (fast, vectorised moments)."""

from __future__ import annotations

import numpy as np

from skattr.exceptions import DataValidationError
from skattr.theta._models import GroupMoments, JointGaussian

__all__ = ["fit_group_moments", "fit_joint_gaussian"]


def _moments(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and population covariance (ddof = 0) of the rows of h."""
    mean = h.mean(axis=0)
    centred = h - mean
    return mean, centred.T @ centred / h.shape[0]


def _rows(h: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Return the rows of h where mask holds, as a column-major copy.

    A frame's columns reach here contiguous (h is column-major), and selecting
    along the record axis of h.T keeps them so: the means and the centring then
    stream through each column, where ``h[mask]`` would gather into row-major
    order and make both several times slower.
    """
    return h.T.compress(mask, axis=1).T


def fit_group_moments(z: np.ndarray, h: np.ndarray, *, sampling: str, columns,
                      secret_label: str) -> GroupMoments:
    """Per-group moments of h, splitting the reference records by z in {0, 1}.

    The moments are those of the reference data itself (ddof = 0), so the
    model's mean and covariance of a statistic are exact for datasets drawn from
    the reference records (with or without replacement).
    """
    inside = z == 1
    n_in = int(inside.sum())
    n_out = z.size - n_in
    if min(n_in, n_out) < 2:
        which = "matching" if n_in < 2 else "not matching"
        raise DataValidationError(
            f"The reference data has {min(n_in, n_out)} record(s) {which} the secret "
            f"{secret_label}; each secret group needs at least two to estimate its "
            "moments. Use more (or more varied) reference data."
        )
    m_in, c_in = _moments(_rows(h, inside))
    m_out, c_out = _moments(_rows(h, ~inside))
    without = sampling == "without-replacement"
    return GroupMoments(
        mean_in=m_in, mean_out=m_out, cov_in=c_in, cov_out=c_out,
        p=n_in / z.size,
        size_in=n_in if without else None, size_out=n_out if without else None,
        columns=tuple(columns),
        description=f"group moments of {z.size} reference records "
                    f"({n_in} in the secret's group), sampling {sampling}",
    )


def fit_joint_gaussian(z: np.ndarray, h: np.ndarray, *, columns,
                       secret_label: str) -> JointGaussian:
    """Mean and covariance (ddof = 1) of (z, h) for the Sec. 4.2 Gaussian model."""
    if z.size < 2:
        raise DataValidationError(
            "The joint Gaussian model needs at least two reference records."
        )
    data = np.column_stack([z, h])
    mean = data.mean(axis=0)
    centred = data - mean
    cov = centred.T @ centred / (z.size - 1)
    if cov[0, 0] <= 0:
        raise DataValidationError(
            f"The secret {secret_label} is constant in the reference data, so the "
            "joint Gaussian model cannot condition on it. Use reference data in "
            "which it varies."
        )
    return JointGaussian(
        mean=mean, cov=cov, columns=tuple(columns),
        description=f"joint Gaussian fit on {z.size} reference records",
    )

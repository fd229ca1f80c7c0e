"""A release drawn: each value with its interval over the noise, the guarantee."""

from __future__ import annotations

import numpy as np

from skattr._release import Release, fmt
from skattr.plotting._common import axes_or_new, check_axes, pyplot
from skattr.utils._param_validation import Interval, validate_parameter_constraints

__all__ = ["plot_release"]


def plot_release(release, alpha=0.05, ax=None):
    """Plot the released values, each with its interval, and the guarantee.

    Each statistic is a row: the released value as a point and the interval
    of :meth:`skattr.Release.conf_int` as a bar, with both in the row's
    label. The title states the guarantee, the mechanism and n. Drawing a
    release spends no privacy (it is post-processing).

    Needs matplotlib (``pip install "skattr[plot]"``).

    Parameters
    ----------
    release : Release
        What a mechanism or ``df.attrpriv`` released.
    alpha : float in (0, 1), default=0.05
        Each interval holds its true statistic with probability 1 - alpha
        over the noise (for all k statistics at once, pass alpha / k). It does
        not cover the sampling variation of the data.
    ax : matplotlib Axes, optional
        Where to draw; by default on a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The statistics share one value axis; release statistics of different
        units separately to compare their intervals by eye.

    Raises
    ------
    MissingDependencyError
        matplotlib is not installed.
    InvalidParameterError
        ``release`` is not a Release, or alpha is not in (0, 1).

    See Also
    --------
    skattr.Release.plot : The same, as a method.

    Examples
    --------
    >>> import skattr
    >>> from skattr.datasets import make_hospital
    >>> from skattr.plotting import plot_release
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> rel = make_hospital(200, random_state=1).attrpriv.mean(
    ...     ["weight", "height"], secret=secret,
    ...     reference=make_hospital(2000, random_state=0), mechanism="apgm",
    ...     law="gaussian", random_state=0)
    >>> ax = plot_release(rel, alpha=0.1)
    >>> print(ax.get_title())
    (1, 0.001)-attribute privacy
    apgm, n = 200
    """
    pyplot()
    caller = "plot_release"
    validate_parameter_constraints(
        {"release": [Release], "alpha": [Interval("real", 0, 1, closed="neither")]},
        {"release": release, "alpha": alpha}, caller)
    check_axes(ax, caller)
    intervals = release.conf_int(alpha)
    values = release.values.to_numpy(dtype=float)
    lower = intervals["lower"].to_numpy(dtype=float)
    upper = intervals["upper"].to_numpy(dtype=float)
    # The first statistic on top, as in the release's summary.
    rows = np.arange(values.size)[::-1]
    ax = axes_or_new(ax, figsize=(6.4, 1.6 + 0.7 * values.size))
    level = f"{100 * (1 - alpha):.6g}%"
    ax.errorbar(values, rows, xerr=np.vstack([values - lower, upper - values]),
                fmt="o", capsize=4, label=f"released value, {level} interval")
    ax.set_yticks(rows, [
        f"{name}\n{v:.4g} [{lo:.4g}, {hi:.4g}]"
        for name, v, lo, hi in zip(release.values.index, values, lower, upper,
                                   strict=True)])
    ax.set_ylim(-0.5, values.size - 0.5)
    ax.set_xlabel(f"released value with its {level} interval over the noise")
    ax.set_title(f"({fmt(float(release.epsilon))}, {fmt(float(release.delta))})"
                 f"-{release.guarantee}\n{release.mechanism}, n = {release.n}")
    ax.grid(True, axis="x", alpha=0.3)
    return ax

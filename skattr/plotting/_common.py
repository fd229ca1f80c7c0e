"""What every plot shares: matplotlib imported on first use, and argument checks."""

from __future__ import annotations

import copy
import math
import numbers
from collections.abc import Mapping

import numpy as np

from skattr.exceptions import InvalidParameterError, MissingDependencyError
from skattr.utils._param_validation import validate_parameter_constraints

__all__ = [
    "axes_or_new",
    "check_axes",
    "check_epsilons",
    "copy_mechanisms",
    "epsilon_text",
    "is_mechanism",
    "label_epsilons",
    "mark_on_axis",
    "plain_log_numbers",
    "pyplot",
]

INSTALL = 'pip install "skattr[plot]"'


def pyplot():
    """Return ``matplotlib.pyplot``, imported now rather than with skattr.

    Raises
    ------
    MissingDependencyError
        matplotlib is not installed; the message names the extra to install.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingDependencyError(
            f"skattr's plots need matplotlib, which is not installed: {INSTALL} "
            "(or pip install matplotlib).") from exc
    return plt


def check_axes(ax, caller: str) -> None:
    """Refuse an ``ax`` that is neither matplotlib Axes nor None.

    Call after :func:`pyplot`: the check needs matplotlib's Axes class.
    """
    from matplotlib.axes import Axes

    validate_parameter_constraints({"ax": [Axes, None]}, {"ax": ax}, caller)


def axes_or_new(ax, figsize=None):
    """Return ``ax``, or new Axes on a new figure when it is None."""
    if ax is None:
        _, ax = pyplot().subplots(figsize=figsize, layout="constrained")
    return ax


def check_epsilons(epsilons, caller: str) -> np.ndarray:
    """Return the epsilons sorted, without repeats, as floats; refuse bad ones."""
    if isinstance(epsilons, (str, bytes, Mapping)) or not hasattr(
            epsilons, "__iter__"):
        values = None
    else:
        values = list(epsilons)
    good = values is not None and len(values) > 0 and all(
        isinstance(e, numbers.Real) and not isinstance(e, bool)
        and math.isfinite(e) and e > 0 for e in values)
    if not good:
        raise InvalidParameterError(
            f"The 'epsilons' parameter of {caller} must be a non-empty sequence "
            f"of finite positive numbers, such as (0.1, 1.0, 10.0). Got "
            f"{epsilons!r} instead.")
    return np.unique(np.asarray(values, dtype=float))


def mark_on_axis(ax, epsilons, colour, marker: str, gid: str,
                 row: int = 0) -> None:
    """Mark epsilons on the epsilon axis, whatever the other axis shows.

    The marks stay visible where a line has no value to draw (a gap, a zero
    on a logarithmic axis); ``row`` lifts them a little, so that the marks
    of several lines at one epsilon do not hide each other.
    """
    epsilons = np.asarray(epsilons, dtype=float)
    if epsilons.size:
        # x in data coordinates, y in axes coordinates (0 is the axis).
        ax.plot(epsilons, np.full(epsilons.size, 0.03 * row),
                transform=ax.get_xaxis_transform(), linestyle="none",
                marker=marker, markersize=8, color=colour, clip_on=False,
                gid=gid)


def plain_log_numbers(axis) -> None:
    """Write a logarithmic axis's numbers plainly: 20 and 0.5, not 2 x 10^1."""
    from matplotlib.ticker import LogFormatter

    axis.set_major_formatter(LogFormatter())
    axis.set_minor_formatter(LogFormatter())


def label_epsilons(ax, epsilons) -> None:
    """Write the epsilon axis's numbers plainly (0.5, not 5 x 10^-1).

    A few epsilons are each a tick; many get the log axis's own ticks.
    """
    from matplotlib.ticker import NullFormatter

    epsilons = np.asarray(epsilons, dtype=float)
    if epsilons.size <= 10:
        ax.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        plain_log_numbers(ax.xaxis)


def epsilon_text(epsilons) -> str:
    """Return "0.1, 2 and 5": epsilons for a legend."""
    texts = [f"{e:g}" for e in epsilons]
    if len(texts) == 1:
        return texts[0]
    return ", ".join(texts[:-1]) + " and " + texts[-1]


def is_mechanism(obj) -> bool:
    """Whether ``obj`` is a skattr mechanism (fitted or not)."""
    from skattr.mechanisms import BaseMechanism

    return isinstance(obj, BaseMechanism)


def copy_mechanisms(source, caller: str) -> dict | None:
    """Return {label: a copy} of a mechanism or a mapping of them; None otherwise.

    The copies are changed (``set_params(epsilon=...)``, their plan cache, their
    noise) so that the caller's mechanisms never are.
    """
    if is_mechanism(source):
        return {source.mechanism_name: copy.deepcopy(source)}
    if not isinstance(source, Mapping) or not source or not all(
            is_mechanism(m) for m in source.values()):
        return None
    return {str(label): copy.deepcopy(m) for label, m in source.items()}

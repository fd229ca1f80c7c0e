"""A synthesiser's marginals against the noisy answers it was fitted to."""

from __future__ import annotations

from skattr.exceptions import InvalidParameterError
from skattr.plotting._common import axes_or_new, check_axes, pyplot

__all__ = ["plot_synthetic"]


def plot_synthetic(source, ax=None):
    """Plot each released marginal cell against the relaxed table's answer.

    Every cell of every released marginal is a point: its noisy released
    share (x) against the share the fitted relaxed table gives it (y), one
    colour per group for :class:`~skattr.synth.AttributePrivateRAP` (shares
    of the group), and the line y = x where the table matches the release.
    What is drawn is what the synthesiser says it released
    (:meth:`~skattr.synth.Synthesizer.released_cells`).
    Points far above or below it are cells the projection could not match
    (noise that no table reproduces, such as negative shares). Drawing
    spends no privacy: it reads only the release and the tables.

    Needs matplotlib (``pip install "skattr[plot]"``).

    Parameters
    ----------
    source : SyntheticData or Synthesizer
        What ``df.attrpriv.synthesize`` returned, or a fitted synthesiser
        (:class:`~skattr.synth.AttributePrivateRAP`, :class:`~skattr.synth.DPRAP`).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skattr.synth import DPRAP
    >>> from skattr.plotting import plot_synthetic
    >>> df = pd.DataFrame({"a": np.arange(400) % 2, "b": np.arange(400) % 3})
    >>> rap = DPRAP(categories={"a": [0, 1], "b": [0, 1, 2]}, k=2,
    ...             n_synthetic=50, iterations=50, random_state=0).fit(df)
    >>> ax = plot_synthetic(rap)
    >>> len(ax.collections)                     # one cloud of cells
    1
    """
    # Imported when drawn: importing skattr.plotting loads no estimator.
    from skattr.synth import Synthesizer, SyntheticData

    pyplot()
    check_axes(ax, "plot_synthetic")
    rap = source.synthesizer if isinstance(source, SyntheticData) else source
    if not isinstance(rap, Synthesizer) or not _fitted(rap):
        raise InvalidParameterError(
            "plot_synthetic draws a fitted synthesiser (DPRAP or "
            "AttributePrivateRAP) or what df.attrpriv.synthesize returned; "
            f"got {type(source).__name__}" + (
                "" if not isinstance(rap, Synthesizer)
                else " not fitted: call fit first") + ".")
    cells = rap.released_cells()
    if cells is None:
        raise InvalidParameterError(
            f"{type(rap).__name__} releases no cells that plot_synthetic "
            "could draw against its table.")
    ax = axes_or_new(ax, figsize=(5.5, 5))
    low, high = 0.0, 0.0
    for label, (released, fitted) in cells.groups.items():
        ax.scatter(released, fitted, s=6, alpha=0.5, label=label)
        low = min(low, released.min(), fitted.min())
        high = max(high, released.max(), fitted.max())
    ax.plot([low, high], [low, high], color="0.4", linewidth=1)
    ax.set_xlabel("released (noisy) share of the cell")
    ax.set_ylabel("the relaxed table's share")
    ax.set_title(cells.title, fontsize=9)
    if len(cells.groups) > 1:
        ax.legend(fontsize=8)
    return ax


def _fitted(estimator) -> bool:
    """Whether ``fit`` has run (scikit-learn's test: attributes ending in _)."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True

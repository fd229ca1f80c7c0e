"""A synthesiser's marginals against the noisy answers it was fitted to."""

from __future__ import annotations

import numpy as np

from skattr.exceptions import InvalidParameterError
from skattr.plotting._common import axes_or_new, check_axes, pyplot

__all__ = ["plot_synthetic"]


def plot_synthetic(source, ax=None):
    """Plot each released marginal cell against the relaxed table's answer.

    Every cell of every released marginal is a point: its noisy released
    share (x) against the share the fitted relaxed table gives it (y), one
    colour per group for :class:`~skattr.synth.AttributePrivateRAP` (shares
    of the group), and the line y = x where the table matches the release.
    Points far above or below it are cells the projection could not match
    (noise that no table reproduces, such as negative shares). Drawing
    spends no privacy: it reads only the release and the tables.

    Needs matplotlib (``pip install "skattr[plot]"``).

    Parameters
    ----------
    source : SyntheticData, AttributePrivateRAP or DPRAP
        What ``df.attrpriv.synthesize`` returned, or a fitted synthesiser.
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
    from skattr.synth import DPRAP, AttributePrivateRAP, SyntheticData
    from skattr.synth._rap import answer, relaxed_probs

    pyplot()
    check_axes(ax, "plot_synthetic")
    rap = source.synthesizer if isinstance(source, SyntheticData) else source
    if not isinstance(rap, (DPRAP, AttributePrivateRAP)) or not hasattr(
            rap, "logits_"):
        raise InvalidParameterError(
            "plot_synthetic draws a fitted synthesiser (DPRAP or "
            "AttributePrivateRAP) or what df.attrpriv.synthesize returned; "
            f"got {type(source).__name__}" + (
                "" if not isinstance(rap, (DPRAP, AttributePrivateRAP))
                else " not fitted: call fit first") + ".")
    if isinstance(rap, DPRAP):
        parts = {"released": (rap.logits_, rap.answered_, rap.noisy_answers_)}
    else:
        parts = {f"{g} the group": (rap.logits_[g], rap.answered_[g],
                                    rap.noisy_answers_[g])
                 for g in ("inside", "outside")}
    ax = axes_or_new(ax, figsize=(5.5, 5))
    low, high = 0.0, 0.0
    for label, (logits, marginals, noisy) in parts.items():
        probs = relaxed_probs(rap.domain_, logits)
        fitted = np.concatenate([answer(probs, m) for m in marginals])
        released = np.concatenate(noisy)
        ax.scatter(released, fitted, s=6, alpha=0.5, label=label)
        low = min(low, released.min(), fitted.min())
        high = max(high, released.max(), fitted.max())
    ax.plot([low, high], [low, high], color="0.4", linewidth=1)
    ax.set_xlabel("released (noisy) share of the cell")
    ax.set_ylabel("the relaxed table's share")
    cert = getattr(rap, "certificate_", None)
    records = getattr(rap, "records_certificate_", None)
    guarantee = (f"({rap.epsilon_:.3g}, {rap.delta:g})-differential privacy"
                 if cert is None else
                 f"the share: ({cert.epsilon:g}, {cert.delta:g})-"
                 f"{cert.guarantee}; " + (
                     "no record protected" if records is None else
                     f"each record: ({records.epsilon:.3g}, "
                     f"{records.delta:g})-DP"))
    ax.set_title(f"{type(rap).__name__}: {len(rap.workload_)} marginals, "
                 f"{guarantee}", fontsize=9)
    if len(parts) > 1:
        ax.legend(fontsize=8)
    return ax

"""Expected error against epsilon, from dry runs: no privacy spent, no noise drawn."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skattr._kinds import Mean, kind_of
from skattr._verbs import statistic_query
from skattr.backends import backend_of, is_frame
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.plotting._common import (
    axes_or_new,
    check_axes,
    check_epsilons,
    copy_mechanisms,
    epsilon_text,
    label_epsilons,
    mark_on_axis,
    plain_log_numbers,
    pyplot,
)
from skattr.utils._param_validation import Interval, validate_parameter_constraints

__all__ = ["plot_tradeoff"]

#: The epsilons of :func:`plot_tradeoff` when none are given.
EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)


@dataclass
class _Curve:
    """One line of the plot: a label and, per epsilon, the planned error."""

    label: str
    errors: np.ndarray            # NaN where nothing is certified
    chosen: list                  # the mechanism planned at each epsilon, or None
    auto: bool = False
    statistics: tuple = ()


def plot_tradeoff(data, columns=None, *, secret=None, reference=None,
                  statistic="mean", value=None, epsilons=EPSILONS,
                  mechanisms=None, n=None, beta=None, ax=None, **params):
    """Plot the expected error of a release against epsilon, for several mechanisms.

    Every point is a dry run (a :class:`~skattr.Plan`): the noise is calibrated
    for n records, but nothing is released, no noise is drawn and no privacy
    is spent. Each mechanism's Theta is fitted once and planned at every
    epsilon (``set_params(epsilon=...)`` then ``plan(n=...)``), so a point
    costs a calibration, not a fit.

    Needs matplotlib (``pip install "skattr[plot]"``).

    Parameters
    ----------
    data : DataFrame, fitted mechanism, or dict of str to fitted mechanism
        The private data (only its number of records and its columns are
        read), with the same keywords as ``df.attrpriv.plan``; or mechanisms
        fitted on reference data, one line each, labelled by the dict's keys
        (a single mechanism by its ``mechanism=`` name), planned for ``n=``
        records. Fitted mechanisms are copied, never changed.
    columns : str or list of str, optional
        The columns of the statistic, as for ``df.attrpriv.plan``.
    secret : Secret or list of Secret
        What the release hides (DataFrame only).
    reference : DataFrame or "self", optional
        Public reference data Theta is fitted on (DataFrame only); omitted for
        the differential-privacy baselines.
    statistic : str, callable, Query or Statistic, default="mean"
        The released statistic, as for ``df.attrpriv.plan``.
    value : object, optional
        The value counted by ``statistic="count"`` or ``"proportion"``.
    epsilons : sequence of float, default=(0.1, 0.2, 0.5, 1, 2, 5, 10)
        Where to plan, each positive and finite; drawn in increasing order.
    mechanisms : str or sequence of str, default=("auto",)
        The ``mechanism=`` names to compare (DataFrame only). ``"auto"`` is,
        at each epsilon, the certified candidate with the least expected
        error, as ``df.attrpriv.plan(mechanism="auto")`` chooses; its legend
        entry says which candidate was chosen where.
    n : int, optional
        The number of records to plan for; by default the rows of ``data``.
        Needed with fitted mechanisms.
    beta : float in (0, 1), optional
        Plot instead the error alpha that is exceeded with probability at
        most beta (:meth:`skattr.Plan.alpha`), still the error of the
        mechanism ``"auto"`` chooses by expected error.
    ax : matplotlib Axes, optional
        Where to draw; by default on a new figure.
    **params
        Any other parameter of the mechanisms (``delta``, ``calibration``,
        ``law``, ``theta``, ``bounds``, ...), as ``df.attrpriv.plan`` takes
        them; not ``epsilon``.

    Returns
    -------
    matplotlib.axes.Axes
        One line per mechanism: epsilon on the x-axis, the expected error
        E||noise||_2 (in the units of the statistic; the Euclidean norm over
        the statistics when there are several) on the y-axis, both
        logarithmic.

    Raises
    ------
    MissingDependencyError
        matplotlib is not installed.
    InvalidParameterError
        A bad argument (an unknown mechanism, a parameter no mechanism takes,
        a non-positive epsilon, ...).

    Notes
    -----
    An epsilon at which a mechanism cannot be certified (it raises
    :class:`~skattr.exceptions.NotCertifiableError`) is a gap in its line,
    marked by an x on the epsilon axis and named in the legend; a mechanism
    certified at no epsilon plotted keeps its legend entry. A release with no
    noise (the data's own variance covers the secret) has zero error: it is
    off the logarithmic axis, marked by a triangle on the epsilon axis and
    named in the legend. The line's data keep the numbers: NaN for a gap, 0
    for no noise.

    Examples
    --------
    >>> import skattr
    >>> from skattr.datasets import make_hospital
    >>> from skattr.plotting import plot_tradeoff
    >>> private = make_hospital(50, random_state=1)
    >>> reference = make_hospital(1000, random_state=0)
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> ax = plot_tradeoff(private, ["weight"], secret=secret,
    ...                    reference=reference, epsilons=(0.5, 2.0, 10.0),
    ...                    mechanisms=("apgm", "expm-gaussian"), law="gaussian")
    >>> [text.get_text() for text in ax.get_legend().get_texts()]
    ['apgm (no noise at epsilon = 10)', 'expm-gaussian']
    >>> ax.get_lines()[0].get_ydata().round(2)        # the expected errors
    array([15.25,  4.37,  0.  ])
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('epsilon', 'expected error (units of the statistic)')
    """
    pyplot()
    caller = "plot_tradeoff"
    grid = check_epsilons(epsilons, caller)
    validate_parameter_constraints(
        {"beta": [Interval("real", 0, 1, closed="neither"), None],
         "n": [Interval("integral", 1, None, closed="left"), None]},
        {"beta": beta, "n": n}, caller)
    check_axes(ax, caller)
    fitted = copy_mechanisms(data, caller)
    if fitted is not None:
        given = {"columns": columns, "secret": secret, "reference": reference,
                 "value": value, "mechanisms": mechanisms}
        extra = sorted(k for k, v in given.items() if v is not None)
        # statistic="mean" is the default: another one was named.
        named = not isinstance(kind_of(statistic), Mean)
        extra += sorted(params) + (["statistic"] if named else [])
        if extra:
            raise InvalidParameterError(
                f"A fitted mechanism carries its statistic, secret, Theta and "
                f"parameters; plot_tradeoff takes no {extra} with one. Set them "
                "on the mechanism (set_params(...).fit(reference)), or pass the "
                "private DataFrame instead.")
        if n is None:
            raise InvalidParameterError(
                "plot_tradeoff needs n= (the number of records to plan for) "
                "with fitted mechanisms.")
        curves = [_curve(label, {est.mechanism_name: est}, grid, n, beta)
                  for label, est in fitted.items()]
    else:
        if not is_frame(data):
            raise InvalidParameterError(
                "plot_tradeoff's data must be the private DataFrame, a fitted "
                "skattr mechanism or a dict of label -> fitted mechanism; got "
                f"{type(data).__name__}.")
        if "epsilon" in params:
            raise InvalidParameterError(
                "plot_tradeoff plans at every epsilon of epsilons=; drop "
                "epsilon=.")
        names = _mechanism_names(mechanisms)
        query = statistic_query(statistic, columns, value)
        from skattr.mechanisms import MECHANISMS

        for name in names:
            # Every name and parameter checked before the first fit.
            classes = MECHANISMS.classes_for(name, query)
            MECHANISMS.check_params(
                name, classes,
                MECHANISMS.fold_keywords_of_0_2(name, classes, params))
        if n is None:
            n = backend_of(data).row_count(data, what="the private data")
        # One fit per mechanism, shared by "auto" and its named line: the
        # parameters are the same, so the plans are cached once too.
        fits: dict = {}
        curves = []
        for name in names:
            candidates = _fit(name, query, secret=secret, reference=reference,
                              data=data, params=params, fits=fits)
            curves.append(_curve(name, candidates, grid, n, beta,
                                 auto=name == "auto"))
    ax = axes_or_new(ax)
    _draw(ax, curves, grid, n, beta)
    return ax


def _mechanism_names(mechanisms) -> list[str]:
    """Return the ``mechanisms=`` names as a list without repeats."""
    if mechanisms is None:
        return ["auto"]
    names = [mechanisms] if isinstance(mechanisms, str) else mechanisms
    try:
        names = list(names)
    except TypeError:
        names = None
    if not names or not all(isinstance(m, str) for m in names):
        raise InvalidParameterError(
            "The 'mechanisms' parameter of plot_tradeoff must be a mechanism= "
            "name or a non-empty sequence of them, such as ('auto', 'apgm'). "
            f"Got {mechanisms!r} instead.")
    return list(dict.fromkeys(names))


def _fit(mechanism: str, query, *, secret, reference, data, params,
         fits: dict) -> dict:
    """Fit the estimators ``mechanism=`` names once: {name: estimator or error}.

    The registry's rules, as :meth:`Registry.build` applies them, but with no
    plan at a size and epsilon: ``"auto"``'s candidates get the parameters
    they take, skip when they lack a parameter they need, and a candidate whose
    fit is refused is kept as its error; a named mechanism's refusal of a
    parameter is raised. ``fits`` holds the outcomes already known, by name (a
    named mechanism takes every parameter, so it is configured as it is among
    ``"auto"``'s candidates).
    """
    from skattr.mechanisms import MECHANISMS

    return MECHANISMS.fit_candidates(mechanism, query, secret=secret,
                                     reference=reference, data=data,
                                     params=params, refusals="keep", fits=fits)


def _curve(label: str, candidates: dict, grid: np.ndarray, n: int, beta,
           *, auto: bool = False) -> _Curve:
    """Plan every candidate at every epsilon; keep the least expected error.

    With one candidate that is its plan; with ``"auto"``'s, the first in the
    registry's order whose expected error ties the least (the registry's rule).
    """
    refused = (NotCertifiableError, InvalidParameterError) if auto else (
        NotCertifiableError,)
    errors, chosen, statistics = [], [], ()
    for epsilon in grid:
        plans = []
        for name, est in candidates.items():
            if isinstance(est, Exception):
                continue
            try:
                plans.append((name, est.set_params(epsilon=float(epsilon))
                              .plan(n=n)))
            except refused:
                continue
        if not plans:
            errors.append(np.nan)
            chosen.append(None)
            continue
        from skattr.mechanisms import MECHANISMS

        name, plan = plans[MECHANISMS.least_error(plans)]
        errors.append(plan.expected_error if beta is None
                      else plan.alpha(float(beta)))
        chosen.append(name)
        statistics = plan.statistics
    return _Curve(label, np.asarray(errors, dtype=float), chosen, auto,
                  statistics)


def _choice_text(grid: np.ndarray, chosen: list) -> str:
    """Say which mechanism "auto" chose where: "apgm (0.1-1), optimal (2)"."""
    runs = []
    for epsilon, name in zip(grid, chosen, strict=True):
        if name is None:
            continue
        if runs and runs[-1][0] == name:
            runs[-1][2] = epsilon
        else:
            runs.append([name, epsilon, epsilon])
    if len({name for name, _, _ in runs}) == 1:
        return runs[0][0]
    return ", ".join(name + (f" ({lo:g})" if lo == hi else f" ({lo:g}-{hi:g})")
                     for name, lo, hi in runs)


def _label(curve: _Curve, grid: np.ndarray) -> str:
    gaps = np.isnan(curve.errors)
    if gaps.all():
        return f"{curve.label}: not certifiable at any epsilon plotted"
    label = curve.label
    if curve.auto:
        label += ": " + _choice_text(grid, curve.chosen)
    notes = []
    if gaps.any():
        notes.append(f"not certifiable at epsilon = {epsilon_text(grid[gaps])}")
    zero = curve.errors == 0
    if zero.any():
        notes.append(f"no noise at epsilon = {epsilon_text(grid[zero])}")
    return label + (f" ({'; '.join(notes)})" if notes else "")


def _draw(ax, curves: list[_Curve], grid: np.ndarray, n: int, beta) -> None:
    row = 0
    for curve in curves:
        (line,) = ax.plot(grid, curve.errors, marker="o", markersize=4,
                          label=_label(curve, grid))
        gaps, zero = np.isnan(curve.errors), curve.errors == 0
        if gaps.all() or not (gaps.any() or zero.any()):
            # Nothing to mark, or nothing but marks: the legend says it.
            continue
        mark_on_axis(ax, grid[gaps], line.get_color(), "x", "not certifiable",
                     row)
        mark_on_axis(ax, grid[zero], line.get_color(), "v", "no noise", row)
        row += 1
    ax.set_xscale("log")
    label_epsilons(ax, grid)
    values = np.concatenate([c.errors for c in curves])
    if (values > 0).any():
        # Zero errors are marked on the epsilon axis instead.
        ax.set_yscale("log", nonpositive="mask")
        plain_log_numbers(ax.yaxis)
    ax.set_xlabel("epsilon")
    ax.set_ylabel("expected error (units of the statistic)" if beta is None else
                  f"error exceeded with probability {beta:g} (units of the "
                  "statistic)")
    statistics = next((c.statistics for c in curves if c.statistics), ())
    released = f"{', '.join(statistics)}, " if statistics else ""
    ax.set_title(f"Error of releasing {released}n = {n} records (dry runs)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")

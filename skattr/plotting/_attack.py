"""Attack accuracy against epsilon, with chance and the intervals."""

from __future__ import annotations

import copy
import numbers
from collections.abc import Mapping

import numpy as np
import pandas as pd

from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.plotting._common import (
    axes_or_new,
    check_axes,
    check_epsilons,
    copy_mechanisms,
    epsilon_text,
    label_epsilons,
    mark_on_axis,
    pyplot,
)
from skattr.plotting._tradeoff import EPSILONS
from skattr.utils._param_validation import Interval, validate_parameter_constraints

__all__ = ["plot_attack_accuracy"]

#: Accuracy of guessing one of two property values at random.
CHANCE = 0.5


def plot_attack_accuracy(source, auxiliary=None, test=None, *, epsilons=EPSILONS,
                         no_defence=True, confidence=0.95, scorer="attack",
                         param="epsilon", ax=None, **attack_params):
    """Plot the accuracy of a property-inference attack against epsilon.

    The attack (:class:`~skattr.attacks.PropertyInferenceAttack`) guesses
    which of two property values the data were drawn with from what a
    defence releases; 0.5, drawn as a line, is chance. The accuracies come
    from one of:

    - a fitted mechanism (or a dict of label to fitted mechanism, one line
      each): at every epsilon a copy of it (``set_params(epsilon=...)``) is
      attacked on shadow datasets drawn from ``auxiliary`` and scored on
      ``test``, with a confidence interval of the accuracy;
    - ``GridSearchCV.cv_results_`` with an :func:`~skattr.attacks.attack_scorer`
      named ``scorer``: the mean accuracy over the folds, with the mean plus
      or minus one standard deviation over the folds, one line per setting
      of the other searched parameters;
    - a table with columns ``epsilon`` and ``accuracy``, optionally
      ``ci_low`` and ``ci_high`` (the interval) and ``label`` (one line
      each), or a dict of epsilon to :class:`~skattr.attacks.AttackResult`.

    Needs matplotlib (``pip install "skattr[plot]"``).

    Parameters
    ----------
    source : fitted mechanism, dict, DataFrame or dict of GridSearchCV results
        What to plot, as above.
    auxiliary, test : DataFrame, optional
        The attacker's auxiliary data and the data the attack is scored on
        (disjoint); needed with mechanisms.
    epsilons : sequence of float, default=(0.1, 0.2, 0.5, 1, 2, 5, 10)
        Where to attack the mechanisms, each positive and finite.
    no_defence : bool, default=True
        With mechanisms, also attack the exact statistics they release (a
        horizontal line with its interval as a band).
    confidence : float in (0, 1), default=0.95
        Coverage of the attack's intervals (Wilson score intervals), with
        mechanisms.
    scorer : str, default="attack"
        The name of the attack scorer in ``GridSearchCV(scoring=...)``.
    param : str, default="epsilon"
        The searched parameter on the x-axis of ``cv_results_``
        (``"mechanism__epsilon"`` for a pipeline's step).
    ax : matplotlib Axes, optional
        Where to draw; by default on a new figure.
    **attack_params
        Parameters of :class:`~skattr.attacks.PropertyInferenceAttack`
        (``values``, ``n``, ``n_shadow``, ``n_test``, ``classifier``,
        ``secret``, ``random_state``), with mechanisms. An int
        ``random_state`` draws the same datasets at every epsilon.

    Returns
    -------
    matplotlib.axes.Axes
        Epsilon on a logarithmic x-axis, the attack accuracy on the y-axis.

    Raises
    ------
    MissingDependencyError
        matplotlib is not installed.
    InvalidParameterError
        A bad argument (a source of another kind, no auxiliary data with a
        mechanism, an unknown attack parameter, no column ``accuracy``, ...).

    Notes
    -----
    An epsilon at which a mechanism cannot be certified (its release raises
    :class:`~skattr.exceptions.NotCertifiableError`) is a gap in its line,
    marked by an x on the epsilon axis and named in the legend; so is a
    missing (NaN) accuracy in results measured elsewhere, as "no accuracy"
    (GridSearchCV scores a failed fit or scorer as NaN). The attack's
    accuracy measures one attacker, not the guarantee: see
    :class:`~skattr.attacks.PropertyInferenceAttack`.

    Examples
    --------
    >>> from skattr.attacks import AttackResult
    >>> from skattr.plotting import plot_attack_accuracy
    >>> results = {0.5: AttackResult(0.52, 0.45, 0.59, 200),
    ...            5.0: AttackResult(0.71, 0.64, 0.77, 200)}
    >>> ax = plot_attack_accuracy(results)
    >>> ax.get_lines()[0].get_ydata().tolist()
    [0.52, 0.71]
    >>> ax.get_ylabel()
    'attack accuracy'
    """
    pyplot()
    caller = "plot_attack_accuracy"
    validate_parameter_constraints(
        {"no_defence": [bool],
         "confidence": [Interval("real", 0, 1, closed="neither")],
         "scorer": [str], "param": [str]},
        {"no_defence": no_defence, "confidence": confidence, "scorer": scorer,
         "param": param}, caller)
    check_axes(ax, caller)
    mechanisms = copy_mechanisms(source, caller)
    if mechanisms is not None:
        grid = check_epsilons(epsilons, caller)
        tables, baselines = _attack(mechanisms, auxiliary, test, grid,
                                    no_defence, confidence, attack_params)
        spread = f"{confidence:.0%} interval"
        gap = "not certifiable"
    else:
        if auxiliary is not None or test is not None or attack_params:
            raise InvalidParameterError(
                "auxiliary, test and attack parameters are for attacking a "
                "fitted mechanism; accuracies already measured take none.")
        tables, spread = _measured(source, scorer, param)
        baselines, gap = [], "no accuracy"
    ax = axes_or_new(ax)
    _draw(ax, tables, baselines, spread, gap)
    return ax


def _attack(mechanisms: dict, auxiliary, test, grid, no_defence, confidence,
            attack_params) -> tuple[list, list]:
    """Attack every mechanism at every epsilon: one table per mechanism."""
    from skattr.attacks import PropertyInferenceAttack

    if auxiliary is None or test is None:
        raise InvalidParameterError(
            "Attacking a mechanism needs the attacker's auxiliary data and the "
            "test data: plot_attack_accuracy(mechanism, auxiliary, test, ...).")
    taken = set(PropertyInferenceAttack().get_params()) - {"mechanism", "query",
                                                           "synthesizer"}
    unknown = sorted(set(attack_params) - taken)
    if unknown:
        raise InvalidParameterError(
            f"plot_attack_accuracy takes no attack parameter(s) {unknown}; "
            f"PropertyInferenceAttack takes {', '.join(sorted(taken))} (the "
            "defence is the mechanism).")
    # Fail on bad attack parameters before any attack is run.
    PropertyInferenceAttack(**attack_params)._check_params()
    tables = []
    for label, mechanism in mechanisms.items():
        rows = []
        for epsilon in grid:
            # A fresh copy each time: every epsilon's noise starts from the
            # same state, as the data the attack draws do with an int seed.
            defence = copy.deepcopy(mechanism).set_params(epsilon=float(epsilon))
            try:
                result = PropertyInferenceAttack(defence, **attack_params).fit(
                    auxiliary).evaluate(test, confidence=confidence)
            except NotCertifiableError:
                rows.append((epsilon, np.nan, np.nan, np.nan))
                continue
            rows.append((epsilon, result.accuracy, result.ci_low, result.ci_high))
        tables.append((label, pd.DataFrame(
            rows, columns=["epsilon", "accuracy", "ci_low", "ci_high"])))
    baselines = []
    if no_defence:
        targets = {}
        for mechanism in mechanisms.values():
            secret = attack_params.get("secret") or mechanism.secrets_[0]
            names = tuple(mechanism.query_.names(mechanism.columns_))
            targets.setdefault((names, secret.label), (mechanism.query_, secret))
        params = {k: v for k, v in attack_params.items() if k != "secret"}
        for (names, _), (query, secret) in targets.items():
            result = PropertyInferenceAttack(query=query, secret=secret,
                                             **params).fit(auxiliary).evaluate(
                test, confidence=confidence)
            what = "" if len(targets) == 1 else f" ({', '.join(names)})"
            baselines.append((f"no defence{what}", result))
    return tables, baselines


def _measured(source, scorer: str, param: str) -> tuple[list, str]:
    """Read accuracies already measured: cv_results_, a table, or AttackResults."""
    from skattr.attacks import AttackResult

    if isinstance(source, Mapping) and source and all(
            isinstance(r, AttackResult) for r in source.values()):
        rows = [(e, r.accuracy, r.ci_low, r.ci_high) for e, r in source.items()]
        levels = {r.confidence for r in source.values()}
        spread = (f"{levels.pop():.0%} interval" if len(levels) == 1
                  else "interval")
        return [("", _checked(pd.DataFrame(
            rows, columns=["epsilon", "accuracy", "ci_low", "ci_high"])))], spread
    if isinstance(source, (Mapping, pd.DataFrame)) and f"mean_test_{scorer}" in (
            source.keys()):
        return _cv_results(source, scorer, param)
    if isinstance(source, pd.DataFrame):
        missing = [c for c in ("epsilon", "accuracy") if c not in source.columns]
        if missing:
            raise InvalidParameterError(
                f"The table of accuracies has no column(s) {missing}; it needs "
                "epsilon and accuracy, and optionally ci_low, ci_high and "
                f"label. Its columns: {list(source.columns)}. (For GridSearchCV's "
                f"cv_results_, is the attack scorer named {scorer!r}? Pass "
                "scorer=.)")
        frame = source.copy()
        for column in ("ci_low", "ci_high"):
            if column not in frame.columns:
                frame[column] = np.nan
        groups = (frame.groupby("label", sort=False) if "label" in frame.columns
                  else [("", frame)])
        return [(str(label), _checked(group[["epsilon", "accuracy", "ci_low",
                                             "ci_high"]]))
                for label, group in groups], "interval"
    raise InvalidParameterError(
        "plot_attack_accuracy takes a fitted mechanism (or a dict of label -> "
        "fitted mechanism) with auxiliary and test data, GridSearchCV's "
        f"cv_results_ with an attack scorer named {scorer!r}, a DataFrame with "
        "columns epsilon and accuracy, or a dict of epsilon -> AttackResult; "
        f"got {type(source).__name__}.")


def _cv_results(results, scorer: str, param: str) -> tuple[list, str]:
    """One table per setting of the other searched parameters."""
    key = f"param_{param}"
    if key not in results.keys():
        searched = sorted(k[len("param_"):] for k in results.keys()
                          if k.startswith("param_"))
        raise InvalidParameterError(
            f"cv_results_ has no {key!r}; the searched parameters are "
            f"{searched}. Pass param= (e.g. 'mechanism__epsilon' in a pipeline).")
    epsilons = np.ma.asarray(results[key])
    mean = np.asarray(results[f"mean_test_{scorer}"], dtype=float)
    std = np.asarray(results.get(f"std_test_{scorer}", np.full(mean.shape, np.nan)),
                     dtype=float)
    settings = list(results.get("params", [{}] * len(mean)))
    folds = sum(1 for k in results.keys()
                if k.startswith("split") and k.endswith(f"_test_{scorer}"))
    groups: dict[str, list] = {}
    for i, setting in enumerate(settings):
        if np.ma.is_masked(epsilons[i]):
            continue                    # a grid that does not search param
        others = ", ".join(f"{k}={_setting_text(v)}"
                           for k, v in sorted(setting.items()) if k != param)
        groups.setdefault(others, []).append(
            (float(epsilons[i]), mean[i], mean[i] - std[i], mean[i] + std[i]))
    if not groups:
        raise InvalidParameterError(
            f"No candidate of cv_results_ sets {param!r}; nothing to plot.")
    tables = [(label, _checked(pd.DataFrame(
        sorted(rows), columns=["epsilon", "accuracy", "ci_low", "ci_high"])))
        for label, rows in groups.items()]
    return tables, f"mean ± sd over {folds} folds" if folds else "mean ± sd"


def _setting_text(value) -> str:
    name = getattr(value, "mechanism_name", None)
    if name:
        return name
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return f"{value:g}"
    return str(value) if isinstance(value, str) else type(value).__name__


def _checked(table: pd.DataFrame) -> pd.DataFrame:
    """Return the table sorted by epsilon; refuse epsilons a log axis cannot show."""
    try:
        table = table.astype(float).sort_values("epsilon", kind="stable")
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            "The accuracies and epsilons must be numbers; "
            f"got {table.dtypes.to_dict()}.") from exc
    epsilon = table["epsilon"].to_numpy()
    if not (np.isfinite(epsilon) & (epsilon > 0)).all():
        raise InvalidParameterError(
            f"Every epsilon must be positive and finite; got {epsilon.tolist()}.")
    accuracy = table["accuracy"].to_numpy()
    if ((accuracy < 0) | (accuracy > 1)).any():
        raise InvalidParameterError(
            f"Accuracies are fractions in [0, 1]; got {accuracy.tolist()}.")
    return table.reset_index(drop=True)


def _draw(ax, tables: list, baselines: list, spread: str, gap: str) -> None:
    """Draw each table's accuracies with their intervals; chance; no defence.

    ``gap`` names what a missing accuracy means: "not certifiable" where the
    attacks were run here, "no accuracy" in results measured elsewhere (a
    failed fit or scorer).
    """
    for label, table in tables:
        x = table["epsilon"].to_numpy()
        y = table["accuracy"].to_numpy()
        low, high = table["ci_low"].to_numpy(), table["ci_high"].to_numpy()
        gaps = np.isnan(y)
        notes = ([f"{gap} at epsilon = {epsilon_text(x[gaps])}"]
                 if gaps.any() else [])
        text = ", ".join(p for p in (label, spread if np.isfinite(low).any()
                                     else "") if p)
        text += f" ({'; '.join(notes)})" if notes else ""
        # errorbar wants non-negative extents; a missing interval draws none.
        yerr = np.vstack([np.where(np.isnan(low), 0.0, y - low),
                          np.where(np.isnan(high), 0.0, high - y)])
        bars = ax.errorbar(x, y, yerr=yerr, marker="o", markersize=4, capsize=3,
                           label=text or "attack accuracy")
        mark_on_axis(ax, x[gaps], bars.lines[0].get_color(), "x", gap)
    for label, result in baselines:
        line = ax.axhline(result.accuracy, color="black", linewidth=1.2,
                          label=f"{label}: {result.accuracy:.2f} "
                                f"({result.ci_low:.2f}-{result.ci_high:.2f})")
        ax.axhspan(result.ci_low, result.ci_high, color=line.get_color(),
                   alpha=0.1, linewidth=0)
    ax.axhline(CHANCE, color="grey", linestyle=":", linewidth=1.2,
               label=f"chance ({CHANCE:g})", gid="chance")
    ax.set_xscale("log")
    label_epsilons(ax, np.unique(np.concatenate(
        [table["epsilon"].to_numpy() for _, table in tables])))
    ax.set_xlabel("epsilon")
    ax.set_ylabel("attack accuracy")
    ax.set_title("Property-inference attack against epsilon")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")

"""Zhang et al.'s synthetic hospital (Sec. 4.2): the data and the paper's Theta."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from skattr.exceptions import InvalidParameterError
from skattr.theta import ExpertTheta, GroupMoments

__all__ = ["make_hospital", "hospital_theta", "HOSPITAL_PAPER"]

#: The figures Zhang et al. report for the hospital experiment (Sec. 4.2).
HOSPITAL_PAPER = {
    "weight": {"sensitivity": 6.125, "variance": 4.5, "mae": 18.90},
    "blood_pressure": {"sensitivity": 2.5, "variance": 2.0, "mae": 7.40},
    "temperature": {"sensitivity": 0.075, "variance": 0.08, "mae": 0.0},
}

# Theta of the paper: N(mean, sd) read with sd as a standard deviation, which is
# the reading under which the reported variances 2 and 0.08 follow (10^2 / 50,
# 2^2 / 50).
_RANGES = {
    "k1": (3.0, 3.5), "k2": (80.0, 90.0),          # weight | height ~ N(k1 h - k2, 15)
    "height_female": (64.0, 66.0), "height_other": (69.0, 71.0),
    "bp_gap": (6.0, 10.0),                         # b_F - b_O
    "temp_gap": (0.0, 0.3),                        # t_F - t_O
    "p": (0.25, 0.75),                             # gender ~ Bernoulli(p)
}
_SD = {"height_female": 3.0, "height_other": 8.0, "weight_given_height": 15.0,
       "blood_pressure": 10.0, "temperature": 2.0}
_USES = {"weight": ("k1", "k2", "height_female", "height_other", "p"),
         "blood_pressure": ("bp_gap", "p"), "temperature": ("temp_gap", "p")}


def make_hospital(n: int = 50, random_state=None) -> pd.DataFrame:
    """Patients generated as in Zhang et al.'s hospital experiment (Sec. 4.2).

    gender ~ Bernoulli(0.6) (female), height ~ N(65, 3) if female else N(70, 3),
    weight ~ N(3.6 height - 90, 15), blood pressure ~ N(100, 3) if female else
    N(106, 3), temperature ~ N(98.6, 0.5); the second parameter is a standard
    deviation.

    Parameters
    ----------
    n : int, default=50
        Number of patients (the paper uses 50).
    random_state : None, int or Generator
        Seed for reproducibility.

    Returns
    -------
    DataFrame
        Columns ``gender`` ("female" or "other"), ``height``, ``weight``,
        ``blood_pressure``, ``temperature``.

    Examples
    --------
    >>> from skattr.datasets import make_hospital
    >>> df = make_hospital(1000, random_state=0)
    >>> df.shape
    (1000, 5)
    >>> round(float((df.gender == "female").mean()), 1)
    0.6
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError(f"n must be a positive int; got {n!r}.")
    if isinstance(random_state, np.random.Generator):
        rng = random_state
    elif random_state is None:
        rng = np.random.default_rng()  # fresh OS entropy, never the global state
    else:
        rng = np.random.default_rng(check_random_state(random_state).randint(2**31))
    female = rng.random(n) < 0.6
    height = np.where(female, rng.normal(65, 3, n), rng.normal(70, 3, n))
    weight = rng.normal(3.6 * height - 90, 15)
    blood_pressure = np.where(female, rng.normal(100, 3, n), rng.normal(106, 3, n))
    temperature = rng.normal(98.6, 0.5, n)
    return pd.DataFrame({
        "gender": np.where(female, "female", "other"),
        "height": height, "weight": weight, "blood_pressure": blood_pressure,
        "temperature": temperature,
    })


def _model(column: str, variance: str, **par) -> GroupMoments:
    if column == "weight":
        mean_in = par["k1"] * par["height_female"] - par["k2"]
        mean_out = par["k1"] * par["height_other"] - par["k2"]
        noise = _SD["weight_given_height"] ** 2
        if variance == "paper":
            # The paper's 4.5 = 15^2 / 50 leaves out the spread of height.
            var_in = var_out = noise
        else:
            var_in = par["k1"] ** 2 * _SD["height_female"] ** 2 + noise
            var_out = par["k1"] ** 2 * _SD["height_other"] ** 2 + noise
    elif column == "blood_pressure":
        mean_out = 100.0
        mean_in = mean_out + par["bp_gap"]
        var_in = var_out = _SD["blood_pressure"] ** 2
    else:
        mean_out = 98.6
        mean_in = mean_out + par["temp_gap"]
        var_in = var_out = _SD["temperature"] ** 2
    return GroupMoments(mean_in=[mean_in], mean_out=[mean_out], cov_in=var_in,
                        cov_out=var_out, p=par["p"], columns=(column,),
                        description=f"Zhang et al. Sec. 4.2 ranges ({variance} "
                                    "variances)")


def hospital_theta(column: str, variance: str = "computed",
                   resolution: int = 3) -> ExpertTheta:
    """Return the paper's Theta (its parameter ranges) for one released column.

    Parameters
    ----------
    column : {"weight", "blood_pressure", "temperature"}
        The released statistic.
    variance : {"computed", "paper"}, default="computed"
        ``"computed"``: per-record variances implied by the stated ranges
        (weight: k1^2 sd_height^2 + 15^2). ``"paper"``: the variances behind the
        paper's reported Var(F | s) = 4.5, 2, 0.08 for n = 50 (weight: 15^2
        only).
    resolution : int, default=3
        Grid points per parameter range.

    Returns
    -------
    ExpertTheta
        Models of the secret "gender == female" for that column.
    """
    if column not in _USES:
        raise InvalidParameterError(
            f"column must be one of {sorted(_USES)}; got {column!r}.")
    if variance not in ("computed", "paper"):
        raise InvalidParameterError(
            f"variance must be 'computed' or 'paper'; got {variance!r}.")
    ranges = {name: _RANGES[name] for name in _USES[column]}

    def model(**par):
        return _model(column, variance, **par)

    return ExpertTheta.from_ranges(
        model, ranges, resolution=resolution,
        description=f"Zhang et al. Sec. 4.2 parameter ranges ({variance} variances)")

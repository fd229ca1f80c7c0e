"""Reproductions of the papers' experiments, shared by the examples, CLI and tests."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from skattr._query import Query
from skattr._secret import Secret
from skattr.datasets._hospital import HOSPITAL_PAPER, hospital_theta, make_hospital
from skattr.mechanisms import AttributePrivateGaussian

__all__ = ["HOSPITAL_COLUMNS", "hospital_experiment", "hospital_mechanism",
           "hospital_secret"]

HOSPITAL_COLUMNS = ("weight", "blood_pressure", "temperature")


def hospital_secret(set_reading: str = "paper") -> Secret:
    """Return the hospital's secret: is the share of women below or above 50%?.

    Zhang et al. Sec. 4.2 hide g = proportion of female patients in (0.25, 0.5)
    vs (0.5, 0.75). The paper compares the two sets by their midpoints
    (``set_reading="paper"``, a difference of 0.25); ``"pointwise"`` is the
    certified reading (every value against every value).
    """
    return Secret.proportion("gender", "female", sets=[(0.25, 0.5), (0.5, 0.75)],
                             set_reading=set_reading)


def hospital_mechanism(column: str, *, calibration: str = "classic",
                       variance: str = "paper", set_reading: str = "paper",
                       epsilon: float = 1.0, delta: float = 1e-3,
                       random_state=None) -> AttributePrivateGaussian:
    """Return the unfitted APGM of the hospital experiment for one column.

    The paper's Theta states Gaussian laws (``law="gaussian"``, recorded on
    each release): the hospital's columns are drawn from Gaussians given the
    gender, so the mean of each group's records is Gaussian too.
    """
    return AttributePrivateGaussian(
        query=Query.mean([column]), secret=hospital_secret(set_reading),
        epsilon=epsilon, delta=delta, calibration=calibration,
        theta=hospital_theta(column, variance), law="gaussian",
        random_state=random_state)


def hospital_experiment(*, calibration: str = "classic", variance: str = "paper",
                        set_reading: str = "paper", n: int = 50,
                        n_releases: int = 1000, random_state=0) -> pd.DataFrame:
    """Reproduce Zhang et al.'s hospital experiment (Sec. 4.2).

    Generates n patients, then releases the average weight, blood pressure and
    temperature ``n_releases`` times each with the paper's Theta, epsilon = 1,
    delta = 1e-3.

    Parameters
    ----------
    calibration : {"classic", "analytic"}
        The paper uses the classic constant.
    variance : {"paper", "computed"}
        Theta's per-record variances: those behind the paper's reported
        conditional variances, or those its stated ranges imply.
    set_reading : {"paper", "pointwise", "conditional-mean"}
        How the sets below/above 50% are compared.
    n : int
        Patients (the paper uses 50).
    n_releases : int
        Releases per statistic for the mean absolute error.
    random_state : int
        Seed of the data and the noise (an experiment, not a real release).

    Returns
    -------
    DataFrame
        One row per statistic: the true value, the sensitivity, the smallest
        conditional variance, the noise standard deviation, the measured mean
        absolute error, sigma * sqrt(2 / pi) (its expectation), and the paper's
        figures beside them.
    """
    rng = np.random.default_rng(random_state)
    data = make_hospital(n, random_state=rng)
    rows = []
    for column in HOSPITAL_COLUMNS:
        mech = hospital_mechanism(column, calibration=calibration,
                                  variance=variance, set_reading=set_reading,
                                  random_state=rng).fit(data)
        truth = float(data[column].mean())
        errors = np.array([abs(float(mech.release(data).values.iloc[0]) - truth)
                           for _ in range(n_releases)])
        plan = mech.plan(data)
        sigma = float(plan.noise_std[0])
        paper = HOSPITAL_PAPER[column]
        rows.append({
            "statistic": f"mean {column}",
            "true value": truth,
            "sensitivity": plan.sensitivity,
            "paper sensitivity": paper["sensitivity"],
            "Var(F | s)": plan.inherent_variance[0],
            "paper Var(F | s)": paper["variance"],
            "noise sigma": sigma,
            "MAE": float(errors.mean()),
            "sigma sqrt(2/pi)": sigma * math.sqrt(2 / math.pi),
            "paper MAE": paper["mae"],
            "noiseless": plan.noiseless,
        })
    return pd.DataFrame(rows).set_index("statistic")

"""Zhang et al.'s schools (Sec. 5, Figure 1): grouped data from a parameter network."""

from __future__ import annotations

import numpy as np
import pandas as pd

from skattr._random import check_random_state
from skattr.bayes import ParameterNetwork
from skattr.exceptions import InvalidParameterError

__all__ = ["make_schools", "schools_network"]

# Figure 1: family income -> gender, SAT; gender -> SAT, height, weight;
# height -> weight. Each node is a parameter of a school's distribution.
_PARENTS = {"income": [], "gender": ["income"], "sat": ["income", "gender"],
            "height": ["gender"], "weight": ["gender", "height"]}
_GRIDS = {
    "income": [40_000.0, 60_000.0, 80_000.0],   # mean family income
    "gender": [0.4, 0.5, 0.6],                  # proportion of female students
    "sat": [1000.0, 1150.0, 1300.0],            # mean SAT score
    "height": [64.0, 66.0, 68.0],               # mean height (inches)
    "weight": [130.0, 150.0, 170.0],            # mean weight (pounds)
}
_CPTS = {
    "income": [1 / 3, 1 / 3, 1 / 3],
    "gender": [[0.5, 0.3, 0.2], [0.3, 0.4, 0.3], [0.2, 0.3, 0.5]],
    "sat": [[[0.6, 0.3, 0.1], [0.5, 0.35, 0.15], [0.4, 0.4, 0.2]],
            [[0.3, 0.4, 0.3], [0.25, 0.45, 0.3], [0.2, 0.45, 0.35]],
            [[0.15, 0.35, 0.5], [0.1, 0.35, 0.55], [0.1, 0.3, 0.6]]],
    "height": [[0.2, 0.3, 0.5], [0.3, 0.4, 0.3], [0.5, 0.3, 0.2]],
    "weight": [[[0.5, 0.4, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6]],
               [[0.55, 0.35, 0.1], [0.25, 0.5, 0.25], [0.1, 0.35, 0.55]],
               [[0.6, 0.3, 0.1], [0.3, 0.5, 0.2], [0.15, 0.35, 0.5]]],
}
# Spread of each student's attribute around the school's parameter.
_SD = {"income": 15_000.0, "sat": 150.0, "height": 3.0, "weight": 20.0}


def schools_network() -> ParameterNetwork:
    """Return the parameter network of Zhang et al.'s Figure 1 (an expert's).

    Nodes ``income`` (mean family income), ``gender`` (proportion of
    female students), ``sat`` (mean SAT score), ``height`` (mean height,
    inches) and ``weight`` (mean weight, pounds), each on a three-value
    grid, each governing the column of the same name in
    :func:`make_schools`.

    Examples
    --------
    >>> from skattr.datasets import schools_network
    >>> net = schools_network()
    >>> sorted(net.markov_quilts("income", max_size=1).__next__().remote)
    []
    >>> round(net.max_influence(["gender"], "income"), 4)
    0.9163
    """
    return ParameterNetwork(parents=_PARENTS, grids=_GRIDS, cpts=_CPTS)


def make_schools(n_schools: int = 200, n_students: int = 100,
                 random_state=None) -> pd.DataFrame:
    """Students of many schools, each school's parameters drawn from Figure 1.

    Each school draws its parameters (mean income, share of girls, mean SAT,
    mean height, mean weight) from :func:`schools_network`; given them, its
    students' columns are drawn independently (the model of Zhang et al.,
    Sec. 5): income ~ N(mean income, 15,000) floored at 0, gender female
    with the school's share, SAT ~ N(mean SAT, 150) clipped to [400, 1600],
    height ~ N(mean height, 3) and weight ~ N(mean weight, 20).

    Parameters
    ----------
    n_schools : int, default=200
        Number of schools (datasets).
    n_students : int, default=100
        Students per school.
    random_state : None, int or Generator
        Seed for reproducibility.

    Returns
    -------
    DataFrame
        Columns ``school`` (0, 1, ...), ``income``, ``gender`` ("female" or
        "male"), ``sat``, ``height`` and ``weight``.

    Examples
    --------
    >>> from skattr.datasets import make_schools
    >>> df = make_schools(3, 4, random_state=0)
    >>> df.shape, sorted(df["school"].unique().tolist())
    ((12, 6), [0, 1, 2])
    """
    for name, value in (("n_schools", n_schools), ("n_students", n_students)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or value < 1:
            raise InvalidParameterError(
                f"{name} must be a positive int; got {value!r}.")
    rng = check_random_state(random_state, owner="make_schools")
    net = schools_network()
    cpts = net.members[0]
    index = {}
    for node in net.nodes:
        # Ancestral sampling, every school at once: the CPT row of each
        # school's parents, then an inverse-CDF draw.
        rows = cpts[node][tuple(index[p] for p in net.parents[node])]
        rows = np.broadcast_to(rows, (n_schools, net.sizes[node]))
        u = rng.random(n_schools)[:, None]
        index[node] = np.minimum((np.cumsum(rows, axis=1) < u).sum(axis=1),
                                 net.sizes[node] - 1)
    phi = {v: net.grids[v][index[v]] for v in net.nodes}
    per = np.repeat(np.arange(n_schools), n_students)
    size = n_schools * n_students

    def normal(node):
        return rng.normal(phi[node][per], _SD[node], size)

    return pd.DataFrame({
        "school": per,
        "income": np.maximum(normal("income"), 0.0),
        "gender": np.where(rng.random(size) < phi["gender"][per], "female",
                           "male"),
        "sat": np.clip(normal("sat"), 400.0, 1600.0),
        "height": normal("height"),
        "weight": normal("weight"),
    })

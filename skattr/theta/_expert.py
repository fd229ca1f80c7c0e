"""Theta stated by an expert: a finite set of models, or a model over ranges."""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

from skattr._persistence import persistable
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.theta._models import GroupMoments, JointGaussian
from skattr.theta._protocol import ThetaSpec
from skattr.theta._request import LawUnavailable, gaussian_law_of

__all__ = ["ExpertTheta"]

_MODEL_TYPES = (GroupMoments, JointGaussian)


@persistable
class ExpertTheta(ThetaSpec):
    """A set Theta of distributions stated by an expert rather than fit on data.

    Pass it as ``theta=`` to a mechanism; ``fit`` then only checks the data's
    columns, and every certificate is the worst case over the set.

    Parameters
    ----------
    models : list of GroupMoments or JointGaussian, or dict
        The distributions theta. A dict maps a secret's column to its list of
        models, for several sensitive attributes at once.
    description : str
        Shown in releases.

    See Also
    --------
    ExpertTheta.from_ranges : Theta given as parameter ranges.

    Examples
    --------
    >>> from skattr.theta import ExpertTheta, GroupMoments
    >>> theta = ExpertTheta([
    ...     GroupMoments(mean_in=[100.0], mean_out=[106.0], cov_in=100.0,
    ...                  cov_out=100.0, columns=("blood_pressure",)),
    ...     GroupMoments(mean_in=[100.0], mean_out=[110.0], cov_in=100.0,
    ...                  cov_out=100.0, columns=("blood_pressure",)),
    ... ])
    >>> len(theta.models_for("sex"))
    2
    """

    def __init__(self, models, *, description: str = "stated by an expert"):
        self.models = models
        self.description = description
        self.parameters = None
        self.grid_shape = None

    def _check(self, models) -> list:
        models = list(models)
        if not models or not all(isinstance(m, _MODEL_TYPES) for m in models):
            raise InvalidParameterError(
                "An ExpertTheta needs a non-empty list of GroupMoments or "
                "JointGaussian models."
            )
        return models

    #: Theta protocol: an expert states the records' law itself, as
    #: moments (a Gaussian law); the reference's rows are not read.
    law_kinds = ("gaussian",)
    states_law = True
    reads_reference = False
    assumptions = ()

    def fit_law(self, request):
        """Return the Gaussian law of the stated models (no exact law).

        Over parameter ranges (:meth:`from_ranges`) the law checks that its
        worst case peaks at a grid line's end before certifying it.
        """
        if "gaussian" not in request.kinds:
            raise LawUnavailable(
                "theta states moments (an expert's, a joint Gaussian's or "
                "sampled ones), which fix no law of the statistic")
        return gaussian_law_of(self, request, request.reference(),
                               description=self.description,
                               grid=self if self.parameters is not None else None)

    def moment_models(self, reference, secret, sampling: str) -> list:
        """Theta protocol: the models stated for the secret's column."""
        return self.models_for(secret.column)

    def exact_law(self, reference, secret, statistic: str):
        """Theta protocol: None (the expert states moments, not a law)."""
        return None

    def models_for(self, column) -> list:
        """Return the models stated for the secret on ``column``."""
        if isinstance(self.models, dict):
            if column not in self.models:
                raise InvalidParameterError(
                    f"The expert Theta states no models for the secret column "
                    f"{column!r}; it covers {list(self.models)}."
                )
            return self._check(self.models[column])
        return self._check(self.models)

    @classmethod
    def from_ranges(cls, model: Callable[..., GroupMoments | JointGaussian],
                    ranges: dict, *, resolution: int = 3,
                    description: str = "parameter ranges stated by an expert"):
        """Theta as every model whose parameters lie in the given ranges.

        The worst case over the box of parameters is taken on a grid of
        ``resolution`` points per parameter, which includes every vertex. The
        supremum over the whole box is attained at a vertex when the required
        noise has no interior peak along any axis: monotone or convex in each
        parameter separately (true of the mixture formulas with parameters
        entering the means linearly and the variances monotonically, as in Zhang
        et al.'s hospital experiment). The mechanisms check, along every grid
        line, that the largest value lies at an end, and refuse to certify
        otherwise. That check reads the grid only: a peak narrower than the grid
        spacing escapes it, which a finer ``resolution`` guards against.

        Parameters
        ----------
        model : callable
            Maps keyword parameters to a GroupMoments or JointGaussian.
        ranges : dict
            ``{name: (low, high)}``; a single number fixes a parameter.
        resolution : int, default=3
            Grid points per parameter (at least 3, so an interior peak can be
            seen).
        description : str
            Shown in releases.
        """
        if resolution < 3:
            raise InvalidParameterError(
                "resolution must be at least 3 so that the grid can show whether the "
                "worst case lies at a vertex of the ranges."
            )
        axes = {}
        for name, rng in ranges.items():
            values = np.atleast_1d(np.asarray(rng, dtype=float))
            if values.size == 1:
                axes[name] = values
            elif values.size == 2 and values[0] <= values[1]:
                axes[name] = np.linspace(values[0], values[1], resolution)
            else:
                raise InvalidParameterError(
                    f"Range {name}={rng!r} must be a number or (low, high) with "
                    "low <= high."
                )
        names = list(axes)
        grid = list(itertools.product(*(axes[n] for n in names)))
        models = [model(**dict(zip(names, point, strict=True))) for point in grid]
        theta = cls(models, description=description)
        theta.parameters = (names, np.array(grid))
        theta.grid_shape = tuple(axes[n].size for n in names)
        return theta

    def check_worst_case_on_grid(self, required: np.ndarray, what: str) -> None:
        """Refuse unless ``required`` (one value per model) peaks at a grid line's end.

        If, along every line of the grid parallel to an axis, the largest value
        lies at one of the line's two ends (the value is monotone, or convex, in
        each parameter separately), the supremum over the whole box of ranges is
        attained at a vertex, and so on the grid. An interior peak on any line
        means the supremum may lie between grid points: nothing is certified.
        """
        if self.grid_shape is None:
            return
        values = np.asarray(required, dtype=float)
        if values.size != int(np.prod(self.grid_shape)):
            raise InvalidParameterError(
                f"Got {values.size} values of the {what} for a grid of "
                f"{int(np.prod(self.grid_shape))} models."
            )
        values = values.reshape(self.grid_shape)
        # The tolerance scales with the finite values only: an infinite one would
        # make every step look flat.
        finite = np.abs(values[np.isfinite(values)])
        tol = 1e-9 * max(1.0, float(finite.max(initial=0.0)))
        names = self.parameters[0]
        for axis, name in enumerate(names):
            if values.shape[axis] < 3:
                continue
            lines = np.moveaxis(values, axis, -1)
            ends = np.maximum(lines[..., 0], lines[..., -1])
            if np.any(lines[..., 1:-1].max(axis=-1) > ends + tol):
                raise NotCertifiableError(
                    f"The {what} peaks inside the range of the parameter {name!r}, "
                    "so its supremum may lie between grid points and cannot be "
                    "certified from the grid. State Theta as a finite set of "
                    "models, or split the range of that parameter."
                )

    def __repr__(self) -> str:
        n = (sum(len(v) for v in self.models.values()) if isinstance(self.models, dict)
             else len(self.models))
        return f"ExpertTheta({n} models: {self.description})"

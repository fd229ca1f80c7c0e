"""The record of one release (or of a dry run): values, noise law, certificate."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from skattr._certificate import Method
from skattr._certified import Certified, accepts_prose
from skattr._persistence import from_json, persistable, to_json
from skattr._record_fields import _check_plan_fields, _check_values, _refuse_field
from skattr.exceptions import InvalidParameterError, PersistenceError
from skattr.noise import (
    NoiseLaw,
    expected_gaussian_norm,
    expected_laplace_norm,
    gaussian_accuracy,
    marginal_half_widths,
)
from skattr.utils._param_validation import Interval, validate_parameter_constraints

if TYPE_CHECKING:
    from skattr._summary import Summary

__all__ = [
    "Certificate",
    "Plan",
    "Release",
    "expected_gaussian_norm",
    "expected_laplace_norm",
    "fmt",
    "gaussian_accuracy",
]


def fmt(x) -> str:
    """Return a certificate's number as its reports print it (6 digits)."""
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


@persistable
@dataclass(frozen=True, kw_only=True)
class Certificate(Certified):
    """What a mechanism's calibration proves, before it is tied to a release.

    A mechanism's ``_plan`` returns its noise law and one of these;
    :class:`~skattr.mechanisms.BaseMechanism` assembles the :class:`Plan`.

    Attributes
    ----------
    epsilon, delta : float
        The certified guarantee (after any stated relaxation).
    sensitivity : float
        The sensitivity the noise is calibrated to (see :class:`Plan`).
    certified_by : Method
        How the pairs were certified (``method``: its prose).
    assumed : tuple of Assumption
        What the certificate takes for granted (``assumptions``: their prose).
    guarantee : str
        The kind of privacy certified.
    calibration : str or None
        How the noise was calibrated; None takes the mechanism's
        ``calibration`` parameter.
    inherent_variance : tuple of float or None
        The smallest conditional variance of each statistic; None when the
        certificate does not use the data's own variance (zeros).
    error_ratio : float or None
        The expected error over that of ``mechanism="optimal"`` at the same
        guarantee; None when not compared.
    """

    epsilon: float
    delta: float
    sensitivity: float
    certified_by: Method = Method()
    assumed: tuple = ()
    guarantee: str = "attribute privacy"
    calibration: str | None = None
    inherent_variance: tuple | None = None
    error_ratio: float | None = None

    def __post_init__(self):
        self._check_records()


@persistable
@accepts_prose
@dataclass(frozen=True, kw_only=True)
class Plan(Certified):
    """What a release would do, computed before any noise is drawn.

    Attributes
    ----------
    mechanism : str
        The ``mechanism=`` name (e.g. ``"apgm"``).
    statistics : tuple of str
        The released statistics' labels.
    n : int
        Records in the private data (public).
    epsilon, delta : float
        The certified guarantee (after any stated relaxation).
    calibration : str
        ``"analytic"`` or ``"classic"`` (``"laplace"`` for mechanisms whose
        only noise is Laplace).
    secrets : tuple of str
        What is hidden.
    theta : str
        Where Theta came from.
    sensitivity : float
        The largest l2 distance between the means of F given two secrets of a
        pair, worst case over Theta (Zhang et al. Eq. 1); the
        infinity-Wasserstein distance W for the Wasserstein mechanisms; the
        record-level sensitivity for the differential-privacy baselines.
    inherent_variance : tuple of float
        The smallest conditional variance of each statistic over pairs and Theta.
    noise_law : skattr.noise.NoiseLaw
        The law of the added noise: :class:`~skattr.noise.GaussianNoise`,
        :class:`~skattr.noise.LaplaceNoise`, or a sum of them.
    noise : str
        The kind of the main noise: "gaussian" or "laplace".
    noise_covariance : ndarray of shape (k, k)
        Covariance of the added noise (zeros when none is added; 2 b^2 B B^T for
        Laplace noise of scale b on the columns of B).
    noise_scale : float or None
        Scale b of Laplace noise; None for Gaussian noise.
    noise_basis : ndarray of shape (k, d) or None
        For Laplace noise: the orthonormal directions each carrying one
        Laplace(b) draw (the identity for per-component noise).
    extra_laplace_scale : float or None
        Chen & Ohrimenko Thm 4.7: the scale W / lambda of Laplace noise added to
        every statistic on top of the mechanism's own (``noise_covariance``
        then includes it).
    noiseless : bool
        True when no noise is added (the data's own randomness covers the
        sensitivity, or the two secrets' laws coincide).
    expected_error : float
        E ||noise||_2.
    accuracy : tuple of (alpha, beta)
        P(||M(X) - F(X)||_2 > alpha) <= beta (Zhang et al. Thm 2).
    certified_by : Method
        How the pairs were certified, as data: its steps, each a kind and
        parameters (``certified_by.kind``, ``certified_by.uses("secure")``).
    method : str
        The same in prose (``str(certified_by)``): the "certified by" line.
    assumed : tuple of Assumption
        What the certificate takes for granted, as data: each a kind, its
        parameters and whether the user opted into it (``opt_in``, ``option``);
        ``assumes(kind)`` asks for one.
    assumptions : tuple of str
        The same in prose, one str each: the "assumes" lines. The prose
        arguments ``method=`` and ``assumptions=`` build a plan too (as skattr
        0.2's files hold them): known texts become their kinds, others
        ``"stated"`` records.
    guarantee : str
        The kind of privacy certified at (epsilon, delta): "attribute privacy"
        unless the mechanism certifies another (the differential-privacy
        baselines).
    error_ratio : float or None
        The expected error over that of ``mechanism="optimal"``, the least
        certified Gaussian noise, at the same guarantee (1 when this is as
        good); None when not compared.
    clipping : skattr._clipping.Clipping or None
        The ranges the released columns were clipped to before the statistic
        was computed (``bounds=``), and where they came from; None for a plan
        built by hand. How many records were clipped is never recorded.
    ranges : tuple of (float, float) or None
        The range of values each statistic can take, public (what a release
        is clamped to: the clipping range for a mean or a quantile, 0 to 1
        for a proportion, 0 to n for a count); None when not known (a plan
        built by hand, a function). ``summary()`` says a release is mostly
        noise when its noise's 95% interval is wider than this range.
    """

    mechanism: str
    statistics: tuple
    n: int
    epsilon: float
    delta: float
    calibration: str
    secrets: tuple
    theta: str
    sensitivity: float
    inherent_variance: tuple
    noise_law: NoiseLaw
    certified_by: Method = Method()
    assumed: tuple = ()
    guarantee: str = "attribute privacy"
    error_ratio: float | None = None
    clipping: object = None
    ranges: tuple | None = None
    expected_error: float = field(init=False)

    def __post_init__(self):
        self._check_records()
        if self.ranges is not None:
            ranges = tuple(tuple(float(v) for v in r) for r in self.ranges)
            if len(ranges) != len(self.statistics) or not all(
                    len(r) == 2 and r[0] <= r[1] for r in ranges):
                raise ValueError(
                    f"ranges must hold one (low, high) pair, low <= high, per "
                    f"statistic ({len(self.statistics)}); got {self.ranges!r}.")
            object.__setattr__(self, "ranges", ranges)
        if not isinstance(self.noise_law, NoiseLaw):
            raise TypeError(
                "noise_law must be a skattr.noise.NoiseLaw; got "
                f"{type(self.noise_law).__name__}.")
        _check_plan_fields(self)
        object.__setattr__(self, "expected_error",
                           float(self.noise_law.expected_norm()))

    @property
    def _noise_parts(self) -> tuple:
        return getattr(self.noise_law, "parts", (self.noise_law,))

    @property
    def noise(self) -> str:
        """The kind of the main noise: "gaussian" or "laplace"."""
        return self._noise_parts[0].kind

    @property
    def noise_covariance(self) -> np.ndarray:
        """Covariance (k, k) of all the added noise."""
        return self.noise_law.covariance

    @property
    def noise_scale(self) -> float | None:
        """Scale b of the main noise when it is Laplace; None otherwise."""
        return getattr(self._noise_parts[0], "scale", None)

    @property
    def noise_basis(self) -> np.ndarray | None:
        """Directions of the main noise when it is Laplace; None otherwise."""
        return getattr(self._noise_parts[0], "basis", None)

    @property
    def extra_laplace_scale(self) -> float | None:
        """Scale of the Laplace noise of Chen & Ohrimenko's Thm 4.7, if any."""
        parts = self._noise_parts
        return parts[1].scale if len(parts) > 1 else None

    @property
    def noiseless(self) -> bool:
        """True when no noise is added."""
        return self.noise_law.is_zero

    @property
    def accuracy(self) -> tuple[float, float]:
        """(alpha, beta) with beta = 0.05: see :meth:`alpha`."""
        return self.alpha(0.05), 0.05

    @property
    def noise_std(self) -> np.ndarray:
        """Standard deviation of the noise on each statistic."""
        return np.sqrt(np.diagonal(self.noise_covariance))

    def alpha(self, beta: float = 0.05) -> float:
        """Return alpha: the l2 error exceeds it with probability at most beta.

        Exact for isotropic Gaussian noise (Zhang et al. Thm 2 for one
        statistic) and for Laplace noise in one direction; otherwise an upper
        bound (the largest noise variance in every direction for Gaussian noise,
        ||y||_2 <= ||y||_1 ~ Gamma(d, b) for Laplace noise, a union bound over
        the parts of a sum of noises).
        """
        return self.noise_law.alpha(beta)

    def _rows(self) -> list[tuple[str, str]]:
        alpha, beta = self.accuracy
        rows = [
            ("statistics", ", ".join(self.statistics)),
            ("mechanism", self.mechanism),
            ("guarantee", f"({fmt(self.epsilon)}, {fmt(self.delta)})-"
                          f"{self.guarantee}"),
            ("covers", self._scope_text()),
            ("calibration", self.calibration),
            ("hidden", "; ".join(self.secrets)),
            ("Theta", self.theta),
            ("records n", str(self.n)),
            ("sensitivity", fmt(self.sensitivity)),
            ("inherent variance", ", ".join(fmt(v) for v in self.inherent_variance)),
            ("noise", self._noise_text()),
            ("expected error", self._error_text()),
            ("accuracy", f"||error|| <= {fmt(alpha)} with probability "
                         f"{fmt(1 - beta)}"),
            ("certified by", self.method),
        ]
        if self.clipping is not None:
            rows.insert(-1, ("clipped", self.clipping.describe()))
        rows += [("assumes", a) for a in self.assumptions]
        return rows

    def _error_text(self) -> str:
        text = fmt(self.expected_error)
        if self.error_ratio is not None:
            text += f" ({self.error_ratio:.3g} x optimal's)"
        return text

    def _scope_text(self) -> str:
        if "differential privacy" in self.guarantee:
            return ("this release alone; differential privacy composes, so "
                    "several releases cost at most the sum of their epsilons and "
                    "deltas")
        return ("this release alone: Pufferfish guarantees do not add up, and "
                "two releases of the same data can reveal together what neither "
                "reveals alone")

    def _noise_text(self) -> str:
        return self.noise_law.describe(self.statistics)

    def _statistic_table(self, alpha: float) -> tuple[list, list]:
        """Column names and one row per statistic for :meth:`summary`."""
        half = marginal_half_widths(self.noise_law, alpha)
        level = f"{100 * (1 - alpha):.4g}%"
        return (["noise sd", f"noise within +/- ({level})"],
                [[fmt(float(sd)), fmt(float(h))]
                 for sd, h in zip(self.noise_std, half, strict=True)])

    def summary(self, alpha: float = 0.05) -> Summary:
        """Return a report: the guarantee in plain words, the values, the certificate.

        Parameters
        ----------
        alpha : float in (0, 1), default=0.05
            The intervals hold each statistic (a plan: its noise) with
            probability 1 - alpha (see :meth:`Release.conf_int`).

        Returns
        -------
        Summary
            ``print`` it, or ``as_text()``, ``as_html()``; ``tables`` holds
            the two statsmodels ``SimpleTable`` s.

        Examples
        --------
        >>> import pandas as pd
        >>> from skattr._release import Release
        >>> from skattr.noise import LaplaceNoise
        >>> rel = Release(mechanism="approx-wasserstein", statistics=("age",),
        ...               n=100, epsilon=1.0, delta=0.01, calibration="laplace",
        ...               secrets=("rich: 0.2 vs 0.4",), theta="resampling",
        ...               sensitivity=2.0, inherent_variance=(0.0,),
        ...               noise_law=LaplaceNoise.on_each(2.0, 1),
        ...               values=pd.Series([40.5], index=["age"]))
        >>> print(rel.summary())  # doctest: +ELLIPSIS
        Hidden: rich: 0.2 vs 0.4. Whatever an observer believed about it, seeing this
        release changes their odds by at most a factor e^1 = 2.72 (epsilon = 1), except
        with probability 0.01 (delta). It holds under the assumptions listed below
        ("assumes"). It covers this release alone: ...
        <BLANKLINE>
                         Release
        ==========================================
            value noise sd lower (95%) upper (95%)
        ------------------------------------------
        age 40.5  2.82843  34.5085     46.4915
                                            Certificate
        ====...
        mechanism         approx-wasserstein
        guarantee         (1, 0.01)-attribute privacy
        ...
        """
        validate_parameter_constraints(
            {"alpha": [Interval("real", 0, 1, closed="neither")]},
            {"alpha": alpha}, f"{type(self).__name__}.summary")
        title = "Release plan (no noise drawn)" if type(self) is Plan else "Release"
        columns, rows = self._statistic_table(float(alpha))
        certificate = [(k, v) for k, v in self._rows()
                       if k not in ("statistics", "released")]
        from skattr._plain import plain_summary
        from skattr._summary import Summary

        return Summary(title, columns, [str(k) for k in self.statistics], rows,
                       certificate,
                       plain=plain_summary(self, planned=type(self) is Plan))

    def in_plain_words(self) -> str:
        """Return the guarantee in a few plain sentences (``summary()``'s opening).

        What is hidden, the factor e^epsilon by which an observer's odds can
        move, the probability delta that they move more, what the guarantee
        rests on (the population the reference was sampled from, at its
        confidence, or a model you chose), that it covers this release
        alone and hides the property, not any one record; and which
        statistics, if any, are mostly noise.
        """
        from skattr._plain import plain_summary

        return plain_summary(self, planned=type(self) is Plan)

    def _repr_html_(self) -> str:
        return self.summary().as_html()

    def to_json(self) -> str:
        """Return the record as JSON text that :meth:`from_json` loads exactly.

        Every field (the noise law, the certificate, a release's values with
        their index) is kept exactly, with a schema version and a SHA-256
        content hash; no pickle. Unlike :meth:`Release.to_dict`, which is a
        readable summary, this is the record itself.

        Returns
        -------
        str
        """
        return to_json(self)

    @classmethod
    def from_json(cls, text: str):
        """Load a record saved by :meth:`to_json`, checked before it is built.

        Parameters
        ----------
        text : str
            What :meth:`to_json` returned.

        Returns
        -------
        Plan or Release
            An instance of the class it is called on.

        Raises
        ------
        PersistenceError
            The text is not valid JSON or not a skattr file, has another
            schema version, does not match its content hash (corrupted or
            edited), names a type outside skattr's allowlist, or holds another
            class.

        Examples
        --------
        >>> import pandas as pd
        >>> from skattr import Release
        >>> from skattr.noise import LaplaceNoise
        >>> rel = Release(mechanism="approx-wasserstein", statistics=("x",), n=100,
        ...               epsilon=1.0, delta=0.01, calibration="laplace",
        ...               secrets=(), theta="", sensitivity=2.0,
        ...               inherent_variance=(0.0,),
        ...               noise_law=LaplaceNoise.on_each(2.0, 1),
        ...               values=pd.Series([0.1 + 0.2], index=["x"]))
        >>> loaded = Release.from_json(rel.to_json())
        >>> bool(loaded.values["x"] == 0.1 + 0.2)
        True
        >>> str(loaded.summary()) == str(rel.summary())
        True
        """
        if cls is not Plan:
            return from_json(text, cls)
        # A release's file loads as a plan's too, as when a release was one.
        loaded = from_json(text, Certified)
        if not isinstance(loaded, (Plan, Release)):
            raise PersistenceError(
                f"The file holds a {type(loaded).__name__}, not a Plan; load it "
                f"with {type(loaded).__name__}.from_json.")
        return loaded


#: A plan's fields, in the order its files hold them.
_PLAN_ARGUMENTS = tuple(name for name, f in Plan.__dataclass_fields__.items()
                        if f.init)


def _plan_of_release(fields: dict) -> Plan:
    """Return the plan of a release built from the plan's fields.

    A field refused is named as the release's, as when a release was a plan.
    """
    try:
        return Plan(**fields)
    except (InvalidParameterError, TypeError, ValueError) as exc:
        text = str(exc)
        if not text.startswith("A Plan's"):
            raise
        raise type(exc)("A Release's" + text[len("A Plan's"):]) from None


def check_monotone(monotone) -> None:
    """Refuse a ``monotone=`` that is not a bool, before anything is released."""
    validate_parameter_constraints({"monotone": [bool]}, {"monotone": monotone},
                                   "quantile")


def _release_arguments(release) -> dict:
    """Return the keyword arguments that rebuild ``release`` (its file's fields).

    Its plan's fields, then its own: the file a release is saved to is the
    one it was saved to when it was a plan's subclass, so both load.
    """
    plan = release.plan
    return {**{name: getattr(plan, name) for name in _PLAN_ARGUMENTS},
            "values": release.values, "unclamped": release.unclamped,
            "seeded": release.seeded,
            **({"in_ledger": True} if release.in_ledger else {})}


@persistable(arguments=_release_arguments)
@accepts_prose
@dataclass(frozen=True, init=False)
class Release(Certified):
    """A released statistic with its certificate.

    It holds the :class:`~skattr.Plan` it was released by (``plan``: the
    noise law and the certificate, with any post-processing recorded in its
    method) and the noisy values; every attribute of the plan is read from
    the release as well (``release.epsilon``, ``release.noise_std``). The
    true statistic is never stored.

    A release is built from its plan (``Release(plan=plan, values=...)``,
    where fields of the plan given as well replace the plan's), or from the
    plan's fields themselves (``Release(mechanism=..., epsilon=...,
    values=...)``, as saved files hold them).

    Attributes
    ----------
    plan : Plan
        What the release did: its noise law and certificate.
    values : pandas.Series
        The noisy statistics, one entry per released column, each clamped to
        what its statistic can take (free post-processing; see the method's
        ``post-processed.clamped`` step).
    unclamped : pandas.Series or None
        The same noisy statistics before clamping (None when nothing bounds
        them): the released value plus the noise's whole law, unbiased, for
        averaging releases or measuring the noise; the same guarantee.
    seeded : bool
        Whether the noise was drawn from a seed (``random_state``) rather than
        the operating system's entropy: reproducible, for experiments only,
        since whoever knows the seed can subtract the noise.
    in_ledger : bool
        Whether it was made through a ledger, which certifies it jointly
        with the ledger's other releases (its plain words say so).
    """

    plan: Plan
    values: pd.Series
    unclamped: pd.Series | None = None
    seeded: bool = False
    in_ledger: bool = False

    def __init__(self, *, values, unclamped=None, seeded=False, plan=None,
                 in_ledger=False, **plan_fields):
        if plan is None:
            plan = _plan_of_release(plan_fields)
        elif plan_fields:
            # dataclasses.replace(release, epsilon=...) lands here.
            plan = _plan_of_release(
                {**{name: getattr(plan, name) for name in _PLAN_ARGUMENTS},
                 **plan_fields})
        if not isinstance(plan, Plan):
            _refuse_field(self, "plan", "a skattr Plan", plan)
        object.__setattr__(self, "plan", plan)
        k = len(plan.statistics)
        _check_values(self, "values", values, k)
        if unclamped is not None:
            _check_values(self, "unclamped", unclamped, k)
        if not isinstance(seeded, bool):
            _refuse_field(self, "seeded", "a bool", seeded)
        if not isinstance(in_ledger, bool):
            _refuse_field(self, "in_ledger", "a bool", in_ledger)
        values = values.copy()
        values.flags.allows_duplicate_labels = False
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "unclamped", unclamped)
        object.__setattr__(self, "seeded", seeded)
        object.__setattr__(self, "in_ledger", in_ledger)

    def __getattr__(self, name: str):
        # Only what the release itself lacks (the plan's fields, properties
        # and helpers); never a dunder (copy and pickle ask for those before
        # the plan is set).
        if name.startswith("__") or name == "plan":
            raise AttributeError(name)
        try:
            plan = object.__getattribute__(self, "plan")
        except AttributeError:
            raise AttributeError(name) from None
        return getattr(plan, name)

    @classmethod
    def of(cls, plan: Plan, values: pd.Series, *, seeded: bool = False
           ) -> Release:
        """Return the release of ``values`` made as ``plan`` says."""
        return cls(plan=plan, values=values, seeded=bool(seeded))

    summary = Plan.summary
    in_plain_words = Plan.in_plain_words

    def _scope_text(self) -> str:
        if self.in_ledger:
            return ("this release; made through a ledger, which certifies "
                    "it jointly with the ledger's other releases (their joint "
                    "guarantee: ledger.spent)")
        return self.plan._scope_text()
    _repr_html_ = Plan._repr_html_
    to_json = Plan.to_json
    from_json = classmethod(Plan.from_json.__func__)

    def to_dict(self) -> dict:
        """Return the values and the certificate as plain Python data (JSON-ready).

        Examples
        --------
        >>> import skattr
        >>> from skattr.datasets import make_hospital
        >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
        >>> reference = make_hospital(2000, random_state=0)
        >>> rel = make_hospital(200, random_state=1).attrpriv.mean(
        ...     ["weight"], secret=secret, reference=reference,
        ...     mechanism="apgm", law="gaussian", random_state=0)
        >>> record = rel.to_dict()
        >>> sorted(record)[:4], record["mechanism"]
        (['accuracy', 'assumptions', 'calibration', 'clipping'], 'apgm')
        """
        alpha, beta = self.accuracy
        return {
            "values": {str(k): float(v) for k, v in self.values.items()},
            "mechanism": self.mechanism,
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "guarantee": self.guarantee,
            "calibration": self.calibration,
            "secrets": list(self.secrets),
            "theta": self.theta,
            "n": int(self.n),
            "sensitivity": float(self.sensitivity),
            "noise": self.noise_law.describe(self.statistics),
            "noise_covariance": self.noise_covariance.tolist(),
            "expected_error": float(self.expected_error),
            "error_ratio": (None if self.error_ratio is None
                            else float(self.error_ratio)),
            "accuracy": {"alpha": float(alpha), "beta": float(beta)},
            "method": self.method,
            "assumptions": list(self.assumptions),
            "clipping": (None if self.clipping is None
                         else self.clipping.to_dict()),
            "seeded": bool(self.seeded),
        }

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Return an interval per statistic that holds it with probability 1 - alpha.

        The interval is the released value plus or minus t_i, where
        ``P(|noise_i| > t_i) = alpha`` under the release's noise law
        (:func:`skattr.noise.marginal_half_widths`): exact for Gaussian noise
        of any covariance (rank-deficient included) and for Laplace noise on
        each statistic, and computed from the characteristic function for
        directional Laplace noise and sums of noises. Over the noise, each
        interval covers its true statistic with probability exactly 1 -
        alpha; for all k at once, use alpha / k (Bonferroni). The intervals
        cover the noise only, not the sampling variation of the data.

        Parameters
        ----------
        alpha : float in (0, 1), default=0.05

        Returns
        -------
        DataFrame
            Columns ``lower`` and ``upper``, one row per statistic.

        Examples
        --------
        >>> import pandas as pd
        >>> from skattr._release import Release
        >>> from skattr.noise import LaplaceNoise
        >>> rel = Release(mechanism="approx-wasserstein", statistics=("x",), n=100,
        ...               epsilon=1.0, delta=0.01, calibration="laplace",
        ...               secrets=(), theta="", sensitivity=2.0,
        ...               inherent_variance=(0.0,),
        ...               noise_law=LaplaceNoise.on_each(2.0, 1),
        ...               values=pd.Series([10.0], index=["x"]))
        >>> rel.conf_int(0.05).round(3)        # 10 -/+ 2 ln(20)
           lower   upper
        x  4.009  15.991
        """
        validate_parameter_constraints(
            {"alpha": [Interval("real", 0, 1, closed="neither")]},
            {"alpha": alpha}, "Release.conf_int")
        half = marginal_half_widths(self.noise_law, float(alpha))
        values = self.values.to_numpy(dtype=float)
        return pd.DataFrame({"lower": values - half, "upper": values + half},
                            index=self.values.index)

    def monotone_quantiles(self, levels) -> Release:
        """Return the release with each column's quantiles in the order of ``levels``.

        Post-processing spends no privacy: the noise was drawn, and the
        guarantee certified, on the statistics as released. Sorting each
        column's released quantiles (monotone rearrangement) never moves them
        further, in any L^p norm, from true quantiles, which are monotone in
        the level (Chernozhukov, Fernandez-Val and Galichon, 2009).

        Parameters
        ----------
        levels : sequence of float
            The quantile levels, in the order each column's values come.

        Examples
        --------
        >>> import pandas as pd
        >>> from skattr._release import Release
        >>> from skattr.noise import LaplaceNoise
        >>> rel = Release(mechanism="approx-wasserstein",
        ...               statistics=("x:q0.25", "x:q0.75"), n=100, epsilon=1.0,
        ...               delta=0.01, calibration="laplace", secrets=(), theta="",
        ...               sensitivity=1.0, inherent_variance=(0.0, 0.0),
        ...               noise_law=LaplaceNoise.on_each(1.0, 2),
        ...               values=pd.Series([19.9, 12.2],
        ...                                index=["x:q0.25", "x:q0.75"]))
        >>> rel.monotone_quantiles([0.25, 0.75]).values.tolist()
        [12.2, 19.9]
        """
        levels = np.asarray(levels, dtype=float).ravel()
        values = self.values.to_numpy(dtype=float)
        if levels.size == 0 or values.size % levels.size:
            raise InvalidParameterError(
                f"{values.size} released values do not split into columns of "
                f"{levels.size} quantile levels.")
        block = values.reshape(-1, levels.size)
        order = np.argsort(levels, kind="stable")
        out = np.empty_like(block)
        out[:, order] = np.sort(block, axis=1)
        return replace(self, values=pd.Series(out.ravel(), index=self.values.index,
                                              name=self.values.name),
                       certified_by=self.certified_by.then(
                           "post-processed.monotone"))

    def to_frame(self) -> pd.DataFrame:
        """Return one row per statistic: value, noise sd and the guarantee."""
        return pd.DataFrame({
            "statistic": [str(k) for k in self.values.index],
            "value": self.values.to_numpy(dtype=float),
            "noise_sd": self.noise_std,
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "guarantee": self.guarantee,
            "mechanism": self.mechanism,
        })

    def _rows(self) -> list[tuple[str, str]]:
        released = ", ".join(f"{k} = {fmt(float(v))}" for k, v in self.values.items())
        # The released values name the statistics.
        drawn = ("a seed (random_state): reproducible, for experiments only; "
                 "whoever knows the seed can subtract the noise"
                 if self.seeded else "the operating system's entropy")
        rows = [("released", released)] + Plan._rows(self)[1:]
        at = next(i for i, (k, _) in enumerate(rows) if k == "noise") + 1
        return rows[:at] + [("noise drawn from", drawn)] + rows[at:]

    def _statistic_table(self, alpha: float) -> tuple[list, list]:
        interval = self.conf_int(alpha)
        level = f"{100 * (1 - alpha):.4g}%"
        return (["value", "noise sd", f"lower ({level})", f"upper ({level})"],
                [[fmt(float(v)), fmt(float(sd)), fmt(float(lo)), fmt(float(hi))]
                 for v, sd, lo, hi in zip(self.values, self.noise_std,
                                          interval["lower"], interval["upper"],
                                          strict=True)])

    def plot(self, alpha: float = 0.05, ax=None):
        """Plot the released values with their intervals (deprecated).

        .. deprecated:: 0.3
           Use :func:`skattr.plotting.plot_release` (the plotting module reads
           releases; a record draws nothing). Removed in 0.4.

        Parameters
        ----------
        alpha : float in (0, 1), default=0.05
            Each interval is :meth:`conf_int` at ``alpha``.
        ax : matplotlib Axes, optional
            Where to draw; by default on a new figure.

        Returns
        -------
        matplotlib.axes.Axes
            One row per statistic; the guarantee in the title.
        """
        warnings.warn(
            "Release.plot() is deprecated and will be removed in skattr 0.4; "
            "use skattr.plotting.plot_release(release, alpha=..., ax=...).",
            FutureWarning, stacklevel=2)
        from skattr.plotting import plot_release

        return plot_release(self, alpha=alpha, ax=ax)


# A release records everything its plan did: its docstring lists the plan's
# attributes after its own.
Release.__doc__ = (Release.__doc__.rstrip() + "\n"
                   + Plan.__doc__[Plan.__doc__.index("    mechanism : str"):])

"""The synthesiser interface: what synthesize, the accessor, the CLI and plots ask.

:class:`Synthesizer` says what any synthesiser is to the rest of skattr:
``fit`` spends the budget once, ``sample`` is free, the certificates it
sets, its parameters (read from ``__init__`` and
``_parameter_constraints``), its options on the command line
(:class:`Option`) and what a plot can draw (:class:`ReleasedCells`). RAP's
machinery (the domain, the workload, the relaxed tables) is one
implementation of it, :class:`~skattr.synth.RAPBase`.
"""

from __future__ import annotations

import copy
import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from skattr._persistence import from_json as load_json
from skattr._persistence import to_json as save_json
from skattr._release import Certificate
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.utils._param_validation import (
    Interval,
    Options,
    validate_parameter_constraints,
)

__all__ = ["Option", "Parameter", "ReleasedCells", "Synthesizer",
           "certificate_lines", "check_draws"]

#: The parameters ``synthesize`` fills itself: the public domain, the
#: secret, and the seed (which also seeds the sampling).
FILLED_BY_SYNTHESIZE = ("categories", "secret", "random_state")
#: ``synthesize``'s own keywords, which no synthesiser's parameter may take
#: (they would never reach it).
SYNTHESIZE_OWN = ("data", "n", "method", "reference", "bins", "columns")


@dataclass(frozen=True)
class Parameter:
    """A synthesiser's parameter, as ``__init__`` and its constraints state it.

    Attributes
    ----------
    name : str
        The keyword.
    default : object
        Its default in ``__init__``.
    constraints : list
        Its entry of ``_parameter_constraints`` (empty: not declared).
    """

    name: str
    default: object
    constraints: list

    @property
    def choices(self) -> list | None:
        """Its allowed values when it takes a fixed set (None otherwise)."""
        for c in self.constraints:
            if isinstance(c, Options):
                return sorted(c.values, key=str)
        return None

    @property
    def kind(self) -> type:
        """The type a command-line word is read as: int, float or str."""
        for c in self.constraints:
            if isinstance(c, Interval):
                return int if c.kind == "integral" else float
        return str


@dataclass(frozen=True)
class Option:
    """A synthesiser's parameter on the command line (``skattr synthesize``).

    Its default, and its type or choices, are the parameter's own
    (:class:`Parameter`); an option states only what the command line says
    differently.

    Attributes
    ----------
    name : str
        The parameter.
    help : str or None, default=None
        Its ``--help`` text.
    flag : str or None, default=None
        The option (default: ``--`` and the name with dashes).
    words : mapping or None, default=None
        The command line's words for its values, in the order ``--help``
        lists them (``{"dp": "dp", "none": None}``): its choices.
    """

    name: str
    help: str | None = None
    flag: str | None = None
    words: Mapping | None = None

    @property
    def option(self) -> str:
        """The command-line option, e.g. ``--n-marginals``."""
        return self.flag or "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class ReleasedCells:
    """What :func:`~skattr.plotting.plot_synthetic` draws of a fitted synthesiser.

    Attributes
    ----------
    groups : dict label -> (ndarray, ndarray)
        Each released answer's cells (its noisy shares) and the fitted
        table's shares of the same cells, one entry a group drawn.
    title : str
        What was released and certified, in a line.
    """

    groups: dict
    title: str


def check_draws(n, owner: str) -> int:
    """Return ``n`` (records to draw) as an int, refusing anything but n >= 1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError(
            f"{owner}: n must be a positive int (records to draw); got {n!r}.")
    return int(n)


def certificate_lines(head: str, cert: Certificate, *, precision: str = "g",
                      detail: str = "") -> list[str]:
    """Return a certificate's line in a record's summary, and its assumptions.

    Examples
    --------
    >>> from skattr._release import Certificate
    >>> cert = Certificate(epsilon=0.0, delta=0.0, sensitivity=0.0,
    ...                    guarantee="dataset attribute privacy")
    >>> certificate_lines("The share", cert)[0][:43]
    'The share: (0, 0)-dataset attribute privacy'
    """
    return [f"{head}: ({cert.epsilon:{precision}}, {cert.delta:g})-"
            f"{cert.guarantee}{detail}. Certified by: {cert.method}.",
            *(f"  Assumes: {a}." for a in cert.assumptions)]


class Synthesizer(BaseEstimator, ABC):
    """A synthesiser: ``fit`` spends the budget once, ``sample`` is free.

    What skattr asks of any synthesiser. Subclasses keep what ``fit``
    learned in attributes ending in ``_``; a saved synthesiser samples as
    the fitted one does, and never sees the private data again.

    A synthesiser that :func:`~skattr.synth.synthesize` can run (one in
    :data:`~skattr.synth.SYNTHESIZERS`, added with
    :func:`~skattr.synth.register_synthesizer`) hides the share of the
    secret's group: ``__init__`` takes ``categories`` (every column's
    categories, public), ``secret`` and ``random_state``, and ``fit`` sets

    - ``certificate_`` : the share's :class:`~skattr.Certificate`;
    - ``records_certificate_`` : each record's, or None (no record
      protected);
    - ``share_`` : the group's share in the sampled tables (stated, never
      the data's);
    - ``group_sizes_`` : ``{"inside": int, "outside": int}``, the records of
      each group the table was computed from;
    - ``n_records_`` : the records of the data (``sample``'s default).

    Its other parameters are what ``synthesize``, the accessor and
    ``skattr synthesize`` take, with their defaults and constraints
    (:meth:`parameters`); ``command_line`` names those the command offers.

    Attributes
    ----------
    method_name : str
        Its name in ``synthesize(method=...)`` (empty: not registered).
    description : str
        ``skattr synthesize --method <method_name>``'s description.
    command_line : tuple of Option
        Its parameters on the command line, in ``--help``'s order.
    fitted_layout : int
        The layout of the attributes ``fit`` sets (files record it).
    """

    method_name = ""
    description = ""
    command_line: tuple = ()
    fitted_layout = 1

    @abstractmethod
    def fit(self, X, y=None):
        """Spend the budget on the private data ``X``; return self."""

    @abstractmethod
    def sample(self, n: int | None = None, *, random_state=None) -> pd.DataFrame:
        """Draw ``n`` synthetic records (post-processing: no privacy spent)."""

    def in_plain_words(self) -> str:
        """Return what the fitted synthesiser guarantees, in plain words.

        Every synthesiser ``synthesize`` runs says it (its registration
        refuses one that does not).
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not say its guarantees in words.")

    # ------------------------------------------------------- parameters
    @classmethod
    def parameters(cls) -> dict[str, Parameter]:
        """Return its parameters, name -> :class:`Parameter`, in ``__init__``'s order.

        Examples
        --------
        >>> from skattr.synth import AttributePrivateRAP
        >>> p = AttributePrivateRAP.parameters()["privacy"]
        >>> p.default, p.choices
        ('dataset', ['dataset', 'distributional'])
        """
        constraints = getattr(cls, "_parameter_constraints", {})
        return {name: Parameter(name, p.default,
                                list(constraints.get(name, [])))
                for name, p in inspect.signature(cls.__init__).parameters.items()
                if name != "self" and p.kind is p.KEYWORD_ONLY}

    @classmethod
    def check_synthesize(cls, params: dict, *, reference) -> None:
        """Refuse what ``synthesize`` cannot pass on, before the domain is read.

        ``params`` are the synthesiser's parameters the caller gave. None
        refused by default.
        """

    @classmethod
    def from_domain(cls, params: dict, *, categories: dict, secret,
                    reference, bins, random_state) -> Synthesizer:
        """Return the unfitted synthesiser ``synthesize`` fits on the domain.

        ``categories`` is every column's (public); ``reference`` and
        ``bins`` are what the caller gave (public), for a parameter read
        from them.
        """
        return cls(categories=categories, secret=secret,
                   random_state=random_state, **params)

    # ------------------------------------------------------------ checks
    def _validated(self, X) -> None:
        """Validate the parameters and the data: a DataFrame with records."""
        name = type(self).__name__
        validate_parameter_constraints(self._parameter_constraints,
                                       self.get_params(deep=False), name)
        if not isinstance(X, pd.DataFrame):
            raise DataValidationError(
                f"{name} fits a pandas DataFrame; got {type(X).__name__}.")
        if len(X) == 0:
            raise DataValidationError("The data has no records.")

    # -------------------------------------------------------- the record
    @property
    def released_marginals(self) -> tuple:
        """The marginals the table was fitted to, by column names (() if none)."""
        return ()

    @property
    def noise_sd(self) -> dict:
        """Each group's noise sd (empty: no noise, or not one number a group)."""
        return {}

    def summary_lines(self) -> list[str]:
        """Return a record's lines on what was fitted and what is certified.

        :meth:`~skattr.synth.SyntheticData.summary` prints them between the
        plain words and the note on sampling more.
        """
        share, records = self.certificate_, self.records_certificate_
        lines = certificate_lines("The share", share)
        if records is None:
            lines.append("Each record: not protected.")
        else:
            lines += certificate_lines("Each record", records, precision=".6g")
        return lines

    def released_cells(self) -> ReleasedCells | None:
        """Return what a plot draws of the fitted synthesiser (None: nothing).

        :func:`~skattr.plotting.plot_synthetic` draws each released cell
        against the fitted table's; a synthesiser that releases no cells
        returns None (the default), and the plot refuses it.
        """
        return None

    # ------------------------------------------------------------- files
    def to_json(self) -> str:
        """Return the synthesiser as JSON text: parameters and what ``fit`` kept.

        Holds the released (noisy) answers and what was fitted to them,
        which are post-processing of the release; never the private data,
        and never the ``random_state`` (saved as None: a seed and the noisy
        answers would give the true ones away).
        Saved with a schema version and a SHA-256 content hash
        (:mod:`skattr._persistence`); a Python function in the parameters
        (a lambda predicate) is refused: use :mod:`skattr.predicates`.
        """
        # The seed is not saved: with it and the noisy answers, anyone could
        # subtract the noise and read the true marginals.
        saved = copy.copy(self)
        saved.random_state = None
        return save_json(saved)

    @classmethod
    def from_json(cls, text: str):
        """Load a synthesiser saved by :meth:`to_json`, checked before it is built.

        Examples
        --------
        >>> import pandas as pd
        >>> from skattr.synth import DPRAP
        >>> df = pd.DataFrame({"a": [0, 1] * 50})
        >>> rap = DPRAP(categories={"a": [0, 1]}, k=1, n_synthetic=10,
        ...             iterations=10, random_state=0).fit(df)
        >>> again = DPRAP.from_json(rap.to_json())
        >>> again.sample(5, random_state=1).equals(rap.sample(5, random_state=1))
        True
        """
        return load_json(text, expected=cls)

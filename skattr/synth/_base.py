"""What the synthesisers share: checks, workload, table rows, JSON (no pickle)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.synth._rap import OneHotDomain, workload_of
from skattr.utils._param_validation import validate_parameter_constraints

__all__ = ["Synthesizer"]


class Synthesizer(BaseEstimator):
    """A relaxed-projection synthesiser: ``fit`` spends the budget, ``sample`` is free.

    Subclasses keep what ``fit`` learned in attributes ending in ``_``; a
    saved synthesiser samples as the fitted one does, and never sees the
    private data again.
    """

    #: The layout of the attributes ``fit`` sets (files record it).
    fitted_layout = 1

    def _checked(self, X) -> OneHotDomain:
        """Validate the parameters and the data; return the public domain."""
        name = type(self).__name__
        if self.categories is None:
            raise InvalidParameterError(
                f"{name} needs categories={{column: [every category]}}: the "
                "domain is public, never read from the private data (read it "
                "from public reference data with OneHotDomain.from_frame(ref)"
                ".categories).")
        validate_parameter_constraints(self._parameter_constraints,
                                       self.get_params(deep=False), name)
        if not isinstance(X, pd.DataFrame):
            raise DataValidationError(
                f"{name} fits a pandas DataFrame; got {type(X).__name__}.")
        if len(X) == 0:
            raise DataValidationError("The data has no records.")
        return OneHotDomain(self.categories)

    def _workload(self, domain: OneHotDomain, rng) -> list:
        """Return the workload: ``marginals``, or a draw seeded from ``rng``."""
        return workload_of(domain, self.marginals, int(self.k),
                           self.n_marginals,
                           np.random.default_rng(int(rng.integers(0, 2**63 - 1))))

    def _start(self, domain: OneHotDomain, rng, rows: int | None = None
               ) -> np.ndarray:
        """Return a relaxed table's first logits (``rows``, default n_synthetic)."""
        rows = int(self.n_synthetic) if rows is None else int(rows)
        return 0.1 * rng.standard_normal((rows, domain.width))

    @staticmethod
    def _rows(table: np.ndarray, count: int, rng) -> np.ndarray:
        """Which relaxed record each of ``count`` drawn ones comes from.

        Each is used equally often (the remainder at random).
        """
        return rng.permuted(np.resize(np.arange(table.shape[0]), count))

    def to_json(self) -> str:
        """Return the synthesiser as JSON text: parameters and the relaxed tables.

        Holds the released (noisy) answers and the tables fitted to them,
        which are post-processing of the release; never the private data,
        and never the ``random_state`` (saved as None: a seed and the noisy
        answers would give the true ones away).
        Saved with a schema version and a SHA-256 content hash
        (:mod:`skattr._persistence`); a Python function in the parameters
        (a lambda predicate) is refused: use :mod:`skattr.predicates`.
        """
        import copy

        from skattr._persistence import to_json

        # The seed is not saved: with it and the noisy answers, anyone could
        # subtract the noise and read the true marginals.
        saved = copy.copy(self)
        saved.random_state = None
        return to_json(saved)

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
        from skattr._persistence import from_json

        return from_json(text, expected=cls)

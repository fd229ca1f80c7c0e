"""What the synthesisers share: saving and loading (JSON, no pickle)."""

from __future__ import annotations

from sklearn.base import BaseEstimator

__all__ = ["Synthesizer"]


class Synthesizer(BaseEstimator):
    """A relaxed-projection synthesiser: ``fit`` spends the budget, ``sample`` is free.

    Subclasses keep what ``fit`` learned in attributes ending in ``_``; a
    saved synthesiser samples as the fitted one does, and never sees the
    private data again.
    """

    #: The layout of the attributes ``fit`` sets (files record it).
    fitted_layout = 1

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

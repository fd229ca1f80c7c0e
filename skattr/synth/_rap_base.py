"""RAP's machinery under the interface: the domain, the workload, relaxed tables."""

from __future__ import annotations

import numpy as np

from skattr.exceptions import InvalidParameterError
from skattr.synth._base import Synthesizer
from skattr.synth._rap import (
    OneHotDomain,
    answer,
    bin_columns,
    relaxed_probs,
    select_marginals,
    workload_of,
)

__all__ = ["RAPBase"]


class RAPBase(Synthesizer):
    """A relaxed-projection synthesiser: marginals released, a relaxed table fitted.

    What :class:`DPRAP` and :class:`AttributePrivateRAP` share: the public
    domain (one-hot), the workload of k-way marginals (``marginals``, or
    ``n_marginals`` drawn), the relaxed tables' start and rows, the released
    cells a plot draws.
    """

    def _checked(self, X) -> OneHotDomain:
        """Validate the parameters and the data; return the public domain."""
        name = type(self).__name__
        if self.categories is None:
            raise InvalidParameterError(
                f"{name} needs categories={{column: [every category]}}: the "
                "domain is public, never read from the private data (read it "
                "from public reference data with OneHotDomain.from_frame(ref)"
                ".categories).")
        self._validated(X)
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

    def _cells(self, logits: np.ndarray, marginals, noisy) -> tuple:
        """Return the released cells and the relaxed table's, concatenated."""
        probs = relaxed_probs(self.domain_, logits)
        fitted = np.concatenate([answer(probs, m) for m in marginals])
        return np.concatenate(noisy), fitted

    @property
    def released_marginals(self) -> tuple:
        """The workload's marginals, by column names."""
        names = self.domain_.columns
        return tuple(tuple(names[j] for j in m) for m in self.workload_)

    # ------------------------------------------------- through synthesize
    @classmethod
    def check_synthesize(cls, params: dict, *, reference) -> None:
        """Refuse a ``marginals`` word other than "reference" with a reference."""
        marginals = params.get("marginals")
        if isinstance(marginals, str) and (marginals != "reference"
                                           or reference is None):
            raise InvalidParameterError(
                "marginals='reference' chooses the marginals from public "
                "reference data: pass reference= with it (or a list of "
                f"column tuples, or None); got marginals={marginals!r}.")

    @classmethod
    def from_domain(cls, params: dict, *, categories: dict, secret,
                    reference, bins, random_state) -> RAPBase:
        """Read ``marginals="reference"`` as the reference's most dependent ones.

        :func:`select_marginals` on the public reference (binned as the
        data): no privacy spent.
        """
        if isinstance(params.get("marginals"), str):
            defaults = cls.parameters()
            k, count = (params.get(p, defaults[p].default)
                        for p in ("k", "n_marginals"))
            public, _ = bin_columns(reference[list(categories)], bins or {})
            params = {**params,
                      "marginals": select_marginals(public, categories, k,
                                                    count)}
        return super().from_domain(params, categories=categories,
                                   secret=secret, reference=reference,
                                   bins=bins, random_state=random_state)

"""``synthesize``: one call from a frame to a synthetic table and its record.

What ``df.attrpriv.synthesize(...)`` and ``skattr synthesize`` run: the
domain read from what is public (stated categories, bins, a public
reference), :class:`AttributePrivateRAP` fitted once, a table sampled, and a
:class:`SyntheticData` record of what was certified and what was assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from skattr._plain import RECORDS, plain_grid, plain_secret
from skattr._release import Certificate
from skattr._secret import Secret
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.synth._ap_rap import AttributePrivateRAP
from skattr.synth._rap import (
    OneHotDomain,
    bin_columns,
    check_draws,
    select_marginals,
)

__all__ = ["SyntheticData", "resolve_domain", "synthesize"]

#: A numeric column with more distinct values than this in the reference
#: must be binned (its categories would be its values).
_MOST_VALUES = 64


@dataclass(frozen=True, eq=False)
class SyntheticData:
    """A synthetic table and what its certificate says.

    Attributes
    ----------
    data : DataFrame
        The synthetic records (binned columns hold their bins' labels).
    certificate : Certificate
        The guarantee of the one release the table was fitted to.
    secret : str
        What is hidden.
    share : float
        The secret group's share in ``data``: stated, not the private data's.
    marginals : tuple of tuple
        The released marginals, by column names.
    noise_sd : dict
        Each group's Gaussian noise sd on every cell, in shares of the group.
    synthesizer : AttributePrivateRAP
        The fitted synthesiser (sample more, plot, save with ``to_json``).
    """

    data: pd.DataFrame
    certificate: Certificate
    secret: str
    share: float
    marginals: tuple
    noise_sd: dict
    synthesizer: AttributePrivateRAP

    @property
    def epsilon(self) -> float:
        return self.certificate.epsilon

    @property
    def delta(self) -> float:
        return self.certificate.delta

    def summary(self) -> str:
        """Return the record in plain words: what is hidden, how, what is assumed.

        Examples
        --------
        >>> import numpy as np, pandas as pd, skattr
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"sex": rng.choice(["F", "M"], 3000),
        ...                    "job": rng.choice(["a", "b"], 3000)})
        >>> out = skattr.synth.synthesize(
        ...     df, secret=skattr.Secret.proportion("sex", "F",
        ...                                         pairs=[(0.4, 0.6)]),
        ...     categories={"sex": ["F", "M"], "job": ["a", "b"]}, k=1,
        ...     privacy="distributional", n_synthetic=50, iterations=50,
        ...     random_state=0)
        >>> print(out.summary().splitlines()[0])  # doctest: +NORMALIZE_WHITESPACE
        A synthetic table of 3000 records; its share of proportion(sex == 'F')
        is 0.5, as stated: nothing of the data's share.
        """
        cert = self.certificate
        sd = ", ".join(f"{g} the group {v:.3g}" for g, v in self.noise_sd.items())
        lines = [
            f"A synthetic table of {len(self.data)} records; its share of "
            f"{self.secret.split(':')[0]} is {self.share:g}, as stated: "
            "nothing of the data's share.",
            f"It was fitted to each group's {len(self.marginals)} marginals "
            f"(shares of the group in each cell), released once under "
            f"({cert.epsilon:g}, {cert.delta:g})-{cert.guarantee}, which "
            f"hides {plain_secret(self.secret)}"
            f"{plain_grid(self.secret, cert.assumed)}.",
            RECORDS,
            f"Noise: Gaussian, sd {sd} (in shares of the group, on every "
            "cell). The table is post-processing of that release: sampling "
            "more records spends nothing. The release is certified alone: "
            "other releases of the same data (a ledger's) reveal more "
            "together with it.",
            f"Certified by: {cert.method}.",
        ]
        lines += [f"Assumes: {a}." for a in cert.assumptions]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """Return the record as plain data (the table's rows left out)."""
        cert = self.certificate
        return {"records": len(self.data), "secret": self.secret,
                "share": self.share, "epsilon": cert.epsilon,
                "delta": cert.delta, "guarantee": cert.guarantee,
                "marginals": [list(m) for m in self.marginals],
                "noise_sd": dict(self.noise_sd), "certified_by": cert.method,
                "assumes": list(cert.assumptions)}


def resolve_domain(data: pd.DataFrame, *, columns=None, categories=None,
                   bins=None, reference=None) -> tuple[pd.DataFrame, dict]:
    """Return the data with its binned columns, and every column's categories.

    The categories are public: stated (``categories``), the bins' labels
    (``bins``), or read from a public ``reference`` frame; never from the
    private data. A numeric column read from a reference with more than 64
    values must be binned.
    """
    if not isinstance(data, pd.DataFrame):
        raise DataValidationError(
            f"synthesize takes a pandas DataFrame; got {type(data).__name__}.")
    columns = list(data.columns if columns is None else columns)
    _check_names(columns, list(data.columns), "columns",
                 "which the data does not have")
    for name, given, what in (("categories", categories,
                               "{column: [every category]}"),
                              ("bins", bins, "{column: [edges]}")):
        if given is not None and not isinstance(given, dict):
            raise InvalidParameterError(
                f"{name}= is a dict {what}; got {type(given).__name__}.")
        _check_names(list(given or {}), columns, name,
                     "which are not among the columns synthesised")
    bins = dict(bins or {})
    binned, found = bin_columns(data[columns], bins)
    found.update({c: list(v) for c, v in (categories or {}).items()
                  if c not in found})
    unknown = [c for c in columns if c not in found]
    if unknown and reference is not None:
        if not isinstance(reference, pd.DataFrame):
            raise DataValidationError(
                "reference= is public data as a pandas DataFrame; got "
                f"{type(reference).__name__}.")
        absent = [c for c in unknown if c not in reference.columns]
        if absent:
            raise InvalidParameterError(
                f"The reference has no column(s) {absent}; state their "
                "categories with categories={column: [...]}.")
        for c in unknown:
            values = OneHotDomain.from_frame(reference, [c]).categories[c]
            numeric = (pd.api.types.is_numeric_dtype(reference[c])
                       and not pd.api.types.is_bool_dtype(reference[c]))
            if numeric and len(values) > _MOST_VALUES:
                raise InvalidParameterError(
                    f"Column {c!r} is numeric with {len(values)} values in the "
                    f"reference: bin it with bins={{{c!r}: [edges]}} (edges "
                    "chosen without the private data; -inf and inf allowed).")
            found[c] = values
        unknown = []
    if unknown:
        raise InvalidParameterError(
            f"The categories of {unknown} are public information that "
            "synthesize does not read from the private data: state them "
            "with categories={column: [...]}, bin numeric ones with "
            "bins={column: [edges]}, or give reference= (public data) to "
            "read them from.")
    return binned, {c: found[c] for c in columns}


def _check_names(names: list, known: list, option: str, why: str) -> None:
    stray = [c for c in names if c not in known]
    if stray:
        raise InvalidParameterError(
            f"{option} names {stray}, {why} ({known}).")


def synthesize(data, *, secret, categories=None, bins=None, reference=None,
               columns=None, n=None, epsilon=1.0, delta=1e-3,
               privacy="dataset", share=None, k=3, n_marginals=64,
               marginals=None, n_synthetic=1000, iterations=1000,
               progress="auto", random_state=None) -> SyntheticData:
    """Fit an attribute-private synthesiser once and sample a table from it.

    Parameters
    ----------
    data : DataFrame
        The private data.
    secret : Secret
        ``Secret.proportion(column, value, pairs=...)``: the share hidden.
    categories, bins, reference
        The public domain (see :func:`resolve_domain`).
    columns : list or None
        The columns synthesised (default: all of ``data``'s).
    n : int or None
        Records of the synthetic table (default: as many as ``data``).
    marginals : list of tuple, "reference" or None
        The workload by column names; ``"reference"`` chooses the
        ``n_marginals`` k-way marginals most dependent in ``reference``
        (:func:`select_marginals`: public, no privacy spent); None draws
        them at random.
    epsilon, delta, privacy, share, k, n_marginals, n_synthetic, iterations,
    progress, random_state
        As :class:`AttributePrivateRAP`; ``random_state`` also seeds the
        sampling.

    Returns
    -------
    SyntheticData
    """
    if not isinstance(secret, Secret):
        raise InvalidParameterError(
            "synthesize needs secret=Secret.proportion(column, value, "
            "pairs=...): the group whose share the table hides.")
    if isinstance(marginals, str) and (marginals != "reference"
                                       or reference is None):
        raise InvalidParameterError(
            "marginals='reference' chooses the marginals from public "
            "reference data: pass reference= with it (or a list of column "
            f"tuples, or None); got marginals={marginals!r}.")
    if n is not None:
        check_draws(n, "synthesize")
    if columns is not None and secret.column not in columns:
        columns = [*columns, secret.column]
    binned, cats = resolve_domain(data, columns=columns, categories=categories,
                                  bins=bins, reference=reference)
    if isinstance(marginals, str):
        public, _ = bin_columns(reference[list(cats)], bins or {})
        marginals = select_marginals(public, cats, k, n_marginals)
    rap = AttributePrivateRAP(
        categories=cats, secret=secret, epsilon=epsilon, delta=delta,
        privacy=privacy, share=share, k=k, n_marginals=n_marginals,
        marginals=marginals,
        n_synthetic=n_synthetic, iterations=iterations, progress=progress,
        random_state=random_state)
    rap.fit(binned)
    seed = (None if random_state is None
            else int(np.random.default_rng(random_state).integers(2**32)))
    table = rap.sample(n, random_state=seed)
    names = rap.domain_.columns
    return SyntheticData(
        data=table, certificate=rap.certificate_, secret=secret.label,
        share=rap.share_,
        marginals=tuple(tuple(names[j] for j in m) for m in rap.workload_),
        noise_sd=dict(rap.sigma_), synthesizer=rap)

"""``synthesize``: one call from a frame to a synthetic table and its record.

What ``df.attrpriv.synthesize(...)`` and ``skattr synthesize`` run: the
domain read from what is public (stated categories, bins, a public
reference), the synthesiser ``method=`` names (:data:`SYNTHESIZERS`; by
default :class:`AttributePrivateRAP`) fitted once, a table sampled, and a
:class:`SyntheticData` record of what was certified and what was assumed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from skattr._release import Certificate
from skattr._secret import Secret
from skattr.backends import check_same_kinds
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.synth._base import Synthesizer, check_draws
from skattr.synth._rap import OneHotDomain, bin_columns
from skattr.synth._registry import SYNTHESIZERS

__all__ = ["SyntheticData", "resolve_domain", "synthesize"]

#: A numeric column with more distinct values than this in the reference
#: must be binned (its categories would be its values).
_MOST_VALUES = 64


@dataclass(frozen=True, eq=False)
class SyntheticData:
    """A synthetic table and what its certificates say.

    Attributes
    ----------
    data : DataFrame
        The synthetic records (binned columns hold their bins' labels).
    certificate : Certificate
        The share's guarantee: exact under dataset privacy (epsilon 0,
        delta 0), delta the size bound's failure chance under distributional.
    records_certificate : Certificate or None
        Each record's (epsilon, delta)-differential privacy; None when
        ``individuals=None`` was asked for (no record protected).
    secret : str
        What is hidden.
    share : float
        The secret group's share in ``data``: stated, not the private data's.
    marginals : tuple of tuple
        The marginals the table was fitted to, by column names (empty for
        a synthesiser that fits none).
    noise_sd : dict
        Each group's noise sd on every cell, in shares of the group (empty
        for a synthesiser that adds none, or not one sd a group).
    group_sizes : dict
        Each group's public size: the records of it the table was fitted on.
    synthesizer : Synthesizer
        The fitted synthesiser (sample more, plot, save with ``to_json``).
    """

    data: pd.DataFrame
    certificate: Certificate
    records_certificate: Certificate | None
    secret: str
    share: float
    marginals: tuple
    noise_sd: dict
    group_sizes: dict
    synthesizer: Synthesizer

    @property
    def epsilon(self) -> float:
        """Each record's epsilon (inf with ``individuals=None``: none protected).

        The share's is ``certificate.epsilon`` (0).
        """
        cert = self.records_certificate
        return math.inf if cert is None else cert.epsilon

    @property
    def delta(self) -> float:
        """Each record's delta (1 with ``individuals=None``: none protected)."""
        cert = self.records_certificate
        return 1.0 if cert is None else cert.delta

    def in_plain_words(self) -> str:
        """Return both guarantees in plain words, each with what it assumes."""
        return self.synthesizer.in_plain_words()

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
        ...     n_synthetic=50, iterations=50, random_state=0)
        >>> print(out.summary().splitlines()[0])
        A synthetic table of 3000 records.
        >>> "The table's share of the group is 0.5, as stated" in out.summary()
        True
        """
        return "\n".join([
            f"A synthetic table of {len(self.data)} records.",
            self.in_plain_words(),
            *self.synthesizer.summary_lines(),
            "The table is post-processing of those releases: sampling more "
            "records spends nothing."])

    def to_dict(self) -> dict:
        """Return the record as plain data (the table's rows left out)."""
        share, records = self.certificate, self.records_certificate
        return {"records": len(self.data), "secret": self.secret,
                "share": self.share,
                "share_guarantee": {
                    "epsilon": share.epsilon, "delta": share.delta,
                    "guarantee": share.guarantee,
                    "certified_by": share.method,
                    "assumes": list(share.assumptions)},
                "records_guarantee": None if records is None else {
                    "epsilon": records.epsilon, "delta": records.delta,
                    "guarantee": records.guarantee,
                    "certified_by": records.method,
                    "assumes": list(records.assumptions)},
                "group_sizes": dict(self.group_sizes),
                "marginals": [list(m) for m in self.marginals],
                "noise_sd": dict(self.noise_sd)}


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
                 "which the private data does not have")
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
                f"The reference data has no column(s) {absent}, which the "
                "private data has and the table would hold; state their "
                "categories with categories={column: [...]}, or leave them "
                "out with columns=[...] (other columns may differ between "
                "the two frames: only these are read).")
        check_same_kinds(data, reference, unknown)
        for c in unknown:
            # The reference's values as they are (public): a number matches
            # its equal in the private data (20 and 20.0), and the table's
            # dtype comes from them, never from the private column's.
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


def synthesize(data, *, secret, method="rap", reference=None, categories=None,
               bins=None, columns=None, n=None, random_state=None,
               **params) -> SyntheticData:
    """Fit a synthesiser that hides a group's share once and sample a table from it.

    The synthesiser is the one ``method`` names in :data:`SYNTHESIZERS`;
    the default, ``"rap"``, subsamples each group of the secret to a public
    size (the share hidden exactly) and releases it with differential
    privacy for each record (:class:`AttributePrivateRAP`).

    Parameters
    ----------
    data : DataFrame
        The private data.
    secret : Secret
        ``Secret.proportion(column, value, pairs=...)``: the share hidden.
    method : str, default="rap"
        The synthesiser: a name of :data:`SYNTHESIZERS`.
    categories, bins, reference
        The public domain (see :func:`resolve_domain`).
    columns : list or None
        The columns synthesised (default: all of ``data``'s).
    n : int or None
        Records of the synthetic table (default: as many as ``data``).
    random_state : None, int or Generator, default=None
        The synthesiser's, and the sampling's.
    **params
        The synthesiser's parameters, with its defaults
        (``SYNTHESIZERS[method].parameters()``); for ``"rap"`` those of
        :class:`AttributePrivateRAP`, where ``marginals="reference"`` also
        chooses the ``n_marginals`` k-way marginals most dependent in
        ``reference`` (:func:`select_marginals`: public, no privacy spent).

    Returns
    -------
    SyntheticData
    """
    cls = SYNTHESIZERS.check_params(method, params, caller=synthesize)
    if not isinstance(secret, Secret):
        raise InvalidParameterError(
            "synthesize needs secret=Secret.proportion(column, value, "
            "pairs=...): the group whose share the table hides.")
    cls.check_synthesize(params, reference=reference)
    if n is not None:
        check_draws(n, "synthesize")
    if columns is not None and secret.column not in columns:
        columns = [*columns, secret.column]
    binned, cats = resolve_domain(data, columns=columns, categories=categories,
                                  bins=bins, reference=reference)
    synthesizer = cls.from_domain(params, categories=cats, secret=secret,
                                  reference=reference, bins=bins,
                                  random_state=random_state)
    synthesizer.fit(binned)
    seed = (None if random_state is None
            else int(np.random.default_rng(random_state).integers(2**32)))
    table = synthesizer.sample(n, random_state=seed)
    return SyntheticData(
        data=table, certificate=synthesizer.certificate_,
        records_certificate=synthesizer.records_certificate_,
        secret=secret.label, share=synthesizer.share_,
        marginals=synthesizer.released_marginals,
        noise_sd=synthesizer.noise_sd,
        group_sizes=dict(synthesizer.group_sizes_), synthesizer=synthesizer)

"""Relaxed Adaptive Projection (Aydore et al. 2021): differentially private RAP.

The records are one-hot encoded, one block of indicator features per
column; a k-way marginal on columns (A, B, C) is the vector of the shares of
records in each cell (a, b, c), a *product query*: the mean over records of
x_a x_b x_c. The synthetic table is *relaxed*: each synthetic record holds,
for each column, a probability vector over its categories (here the softmax
of free logits), so every query is a differentiable function of the table.

``T = 1`` (the slides' Algorithm 2): every query is answered once by the
Gaussian mechanism, each with zCDP budget rho / m, and the relaxed table is
moved by gradient descent (Adam) until its answers are as close as it can
bring them, in squared l2, to the noisy ones: the *relaxed projection*.
With ``T > 1`` rounds of ``K`` queries, each round chooses the worst
answered of the remaining queries by report-noisy-max on the relaxed
table's errors (rho / (2 T K) each) and answers them (rho / (2 T K) each).
Synthetic records are then sampled from the relaxed table, each column from
its probability vector (the paper's randomized rounding).

Privacy (zCDP, Bun and Steinke 2016): a counting query has sensitivity 1/n
(one record replaced moves a share by at most 1/n), the Gaussian mechanism
with sigma = (1/n) / sqrt(2 rho_i) is rho_i-zCDP, report-noisy-max with
Laplace noise of scale (2/n) / eps_i is eps_i-DP, so eps_i^2 / 2-zCDP,
rho-zCDP budgets add, and rho-zCDP gives (rho + 2 sqrt(rho log(1/delta)),
delta)-DP. The projection only reads the noisy answers (and, in adaptive
rounds, the selections): post-processing.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from skattr._persistence import persistable
from skattr.exceptions import InvalidParameterError, SkattrError

__all__ = ["OneHotDomain", "answer", "bin_columns", "marginal_workload",
           "relaxed_projection", "report_noisy_max", "select_marginals",
           "workload_of"]


@persistable
class OneHotDomain:
    """The categories of each column, and their blocks of one-hot features.

    Parameters
    ----------
    categories : dict column -> sequence
        Every category a column may take, in order (stated or read from
        public data: the categories are not learned from the private data).
    """

    def __init__(self, categories: dict):
        if not categories:
            raise InvalidParameterError(
                "The domain needs at least one column with its categories.")
        self.columns = list(categories)
        self.categories = {c: list(v) for c, v in categories.items()}
        for c, cats in self.categories.items():
            if len(cats) < 1 or len(set(map(category_key, cats))) != len(cats):
                raise InvalidParameterError(
                    f"Column {c!r} needs distinct categories (a number once: "
                    f"1 and 1.0 are one category); got {cats!r}.")
        sizes = [len(self.categories[c]) for c in self.columns]
        if sum(sizes) > 100_000:
            raise InvalidParameterError(
                f"The domain has {sum(sizes):,} one-hot features; bin or "
                "group the widest columns (at most 100,000 in all).")
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
        self.sizes = np.array(sizes, dtype=int)
        self.width = int(self.sizes.sum())

    @classmethod
    def from_frame(cls, frame, columns=None) -> OneHotDomain:
        """Return the categories a public frame shows, sorted.

        For public reference data only: read from the private data, the
        domain itself would leak which categories occur.
        """
        columns = list(frame.columns if columns is None else columns)
        return cls({c: sorted(pd.unique(frame[c].dropna()).tolist(),
                              key=repr) for c in columns})

    def dtypes(self) -> dict:
        """Return each column's dtype, read from its categories alone (public).

        Integers give int64, other real numbers float64, booleans bool,
        anything else object: never the private data's dtype, which can
        depend on its values (a CSV column is read as floats when one record
        holds 90.5).
        """
        out = {}
        for c, cats in self.categories.items():
            if all(isinstance(v, (bool, np.bool_)) for v in cats):
                out[c] = "bool"
            elif all(_is_number(v) and float(v).is_integer() and not
                     isinstance(v, (float, np.floating)) for v in cats):
                out[c] = "int64"
            elif all(_is_number(v) for v in cats):
                out[c] = "float64"
            else:
                out[c] = "object"
        return out

    def block(self, j: int) -> slice:
        """Return the features of column ``j`` (by position)."""
        return slice(int(self.starts[j]), int(self.starts[j] + self.sizes[j]))

    def codes(self, frame) -> np.ndarray:
        """Return each record's category index per column, (n, columns).

        Raises InvalidParameterError on a value outside a column's
        categories (the domain is public: an unseen value is not learned).
        """
        missing = [c for c in self.columns if c not in frame.columns]
        if missing:
            raise InvalidParameterError(
                f"The data has no column(s) {missing}; the domain's columns "
                f"are {self.columns}.")
        out = np.empty((len(frame), len(self.columns)), dtype=np.int64)
        for j, c in enumerate(self.columns):
            lookup = {category_key(v): i
                      for i, v in enumerate(self.categories[c])}
            values = frame[c].tolist()
            codes = [lookup.get(category_key(v), -1) for v in values]
            out[:, j] = codes
            if np.any(out[:, j] < 0) and frame[c].isna().any() and not any(
                    pd.isna(v) for v in self.categories[c]):
                raise InvalidParameterError(
                    f"Column {c!r} holds missing values (NaN); drop or fill "
                    "them first (or state a category for them).")
            if np.any(out[:, j] < 0):
                unseen = sorted({repr(v) for v, k in zip(values, codes,
                                                          strict=True)
                                 if k < 0})[:5]
                raise InvalidParameterError(
                    f"Column {c!r} holds values outside its categories: "
                    f"{', '.join(unseen)}. State every category in the "
                    "domain (or bin a numeric column first).")
        return out

    def onehot(self, frame) -> list:
        """Return the one-hot matrix (records, categories) of each column."""
        return self.onehot_of_codes(self.codes(frame))

    def onehot_of_codes(self, codes: np.ndarray) -> list:
        """Return the one-hot matrices of category indices (``codes``' rows)."""
        return [np.eye(self.sizes[j])[codes[:, j]]
                for j in range(len(self.columns))]


def _is_number(value) -> bool:
    return (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, (bool, np.bool_)))


def category_key(value):
    """Return the key a category is matched by: a number by its value.

    20 and 20.0 are one category (a column's dtype, int or float, can depend
    on its values, and must not decide whether a record is refused); other
    values match by their ``repr`` (so "1" is not 1, nor True 1).
    """
    if _is_number(value):
        number = value.item() if isinstance(value, np.generic) else value
        if number == number:                # NaN keeps its repr
            # Python's numbers hash equal when equal (20 and 20.0), and
            # integers stay exact (2**53 + 1 is not 2**53).
            return ("number", number)
    return ("value", repr(value))


def bin_columns(frame: pd.DataFrame, bins: dict) -> tuple[pd.DataFrame, dict]:
    """Replace numeric columns by their bins; return the frame and the bins' labels.

    ``bins`` maps a column to its edges (increasing, chosen without the
    private data; use -inf and inf for open ends). A value is in bin
    ``[e_i, e_{i+1})``; one outside every bin, or NaN, is refused. The
    caller's frame is not changed.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skattr.synth import bin_columns
    >>> binned, labels = bin_columns(pd.DataFrame({"age": [17, 35, 90]}),
    ...                              {"age": [0, 30, 60, np.inf]})
    >>> binned["age"].tolist(), labels["age"]
    (['[0, 30)', '[30, 60)', '[60, inf)'], ['[0, 30)', '[30, 60)', '[60, inf)'])
    """
    out = frame.copy()
    labels = {}
    for column, edges in bins.items():
        if column not in frame.columns:
            raise InvalidParameterError(
                f"bins names {column!r}, which is not a column of the data.")
        edges = np.asarray(edges, dtype=float)
        if edges.ndim != 1 or edges.size < 2 or np.any(np.isnan(edges)) \
                or np.any(np.diff(edges) <= 0):
            raise InvalidParameterError(
                f"The bins of {column!r} must be at least two increasing "
                f"edges; got {edges.tolist()!r}.")
        try:
            values = frame[column].to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"Column {column!r} is not numeric; bins are for numeric "
                "columns (state a categorical column's categories).") from None
        index = np.searchsorted(edges, values, side="right") - 1
        outside = (index < 0) | (index >= edges.size - 1) | np.isnan(values)
        if outside.any():
            raise InvalidParameterError(
                f"Column {column!r} has {int(outside.sum())} value(s) outside "
                f"its bins [{edges[0]:g}, {edges[-1]:g}) (or NaN); widen the "
                "end edges (-inf and inf are allowed).")
        names = [f"[{a:g}, {b:g})" for a, b in zip(edges[:-1], edges[1:],
                                                  strict=True)]
        out[column] = np.asarray(names, dtype=object)[index]
        labels[column] = names
    return out, labels


def report_noisy_max(scores, epsilon: float, sensitivity: float, rng) -> int:
    """Return the index of the largest score plus Laplace(2 sensitivity / epsilon).

    epsilon-DP when each score moves by at most ``sensitivity`` between
    neighbouring datasets (Dwork and Roth, Claim 3.9, with the factor 2 that
    scores which are not monotone need), so epsilon^2 / 2-zCDP.
    """
    scores = np.asarray(scores, dtype=float)
    noisy = scores + rng.laplace(0.0, 2.0 * sensitivity / epsilon, scores.size)
    return int(np.argmax(noisy))


def marginal_workload(n_columns: int, k: int, n_marginals: int | None,
                      rng) -> list[tuple[int, ...]]:
    """Return ``n_marginals`` distinct k-way column sets drawn at random (all: None).

    The workload is public: drawn from ``rng``, never from the data.
    """
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= n_columns:
        raise InvalidParameterError(
            f"k must be an int from 1 to the number of columns ({n_columns}); "
            f"got {k!r}. Pass k={min(max(n_columns, 1), 3)} or fewer, or "
            "name the marginals with marginals=[...].")
    every = list(itertools.combinations(range(n_columns), int(k)))
    if n_marginals is None or n_marginals >= len(every):
        return every
    if not isinstance(n_marginals, (int, np.integer)) or n_marginals < 1:
        raise InvalidParameterError(
            f"n_marginals must be a positive int or None; got {n_marginals!r}.")
    chosen = rng.choice(len(every), size=int(n_marginals), replace=False)
    return [every[i] for i in sorted(chosen)]


def workload_of(domain: OneHotDomain, marginals, k: int,
                n_marginals: int | None, rng) -> list[tuple[int, ...]]:
    """Return the workload by column position: ``marginals`` (names), or a draw.

    ``marginals`` is chosen from public information (stated, or
    :func:`select_marginals` on public data); None draws ``n_marginals``
    k-way marginals from ``rng``.
    """
    if marginals is None:
        return marginal_workload(len(domain.columns), k, n_marginals, rng)
    found = []
    for marginal in marginals:
        names = (marginal,) if isinstance(marginal, str) else tuple(marginal)
        unknown = [c for c in names if c not in domain.columns]
        if not names or unknown or len(set(names)) != len(names):
            raise InvalidParameterError(
                f"Each of marginals= is a tuple of distinct columns of the "
                f"domain ({domain.columns}); got {marginal!r}.")
        found.append(tuple(domain.columns.index(c) for c in names))
    if not found or len(set(found)) != len(found):
        raise InvalidParameterError(
            "marginals= needs at least one marginal, each named once.")
    return found


def select_marginals(reference: pd.DataFrame, categories: dict, k: int = 3,
                     n_marginals: int = 64) -> list[tuple]:
    """Return the k-way marginals most dependent in public data, by column names.

    Each k-subset of the columns is scored by its total correlation in
    ``reference`` (the sum of its columns' entropies less their joint
    entropy, each with Miller and Madow's correction): how far the marginal
    is from what its 1-way marginals would give. The ``n_marginals`` highest
    are returned. A choice from public data spends no privacy; pass it as
    ``marginals=`` to a synthesiser.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skattr.synth import select_marginals
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 500)
    >>> ref = pd.DataFrame({"a": a, "b": a ^ (rng.random(500) < 0.1),
    ...                     "c": rng.integers(0, 2, 500)})
    >>> select_marginals(ref, {"a": [0, 1], "b": [0, 1], "c": [0, 1]}, k=2,
    ...                  n_marginals=1)
    [('a', 'b')]
    """
    domain = OneHotDomain(categories)
    codes = domain.codes(reference)
    if len(codes) == 0:
        raise InvalidParameterError("The reference has no records.")
    size = len(codes)

    def entropy(columns) -> float:
        index = np.ravel_multi_index(tuple(codes[:, j] for j in columns),
                                     tuple(int(domain.sizes[j])
                                           for j in columns))
        counts = np.bincount(index)
        counts = counts[counts > 0]
        p = counts / size
        return float(-(p * np.log(p)).sum() + (counts.size - 1) / (2 * size))

    single = [entropy((j,)) for j in range(len(domain.columns))]
    every = marginal_workload(len(domain.columns), k, None, None)
    scores = np.array([sum(single[j] for j in m) - entropy(m)
                       for m in every])
    best = np.argsort(-scores, kind="stable")[:int(n_marginals)]
    return [tuple(domain.columns[j] for j in every[i]) for i in sorted(best)]


def answer(probs: list, marginal: tuple[int, ...]) -> np.ndarray:
    """Return a (relaxed) table's k-way marginal, flattened: mean of products.

    ``probs[j]`` is the (records, categories) matrix of column j (one-hot
    rows for a real table, probability rows for a relaxed one). The cells
    are in C order of the marginal's columns; computed as P_A^T K / n, K the
    row-wise product of the other columns' matrices (one matrix product).
    """
    n_rows = probs[marginal[0]].shape[0]
    rest = _khatri_rao([probs[j] for j in marginal[1:]], n_rows)
    return (probs[marginal[0]].T @ rest).ravel() / n_rows


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


#: The projection stops when this many Adam steps lowered the loss by less
#: than this share of it.
_PLATEAU_STEPS = 100
_PLATEAU_GAIN = 1e-3


def _khatri_rao(mats: list, n_rows: int) -> np.ndarray:
    """Row-wise products of the columns of ``mats``: (n_rows, prod of widths)."""
    if not mats:
        return np.ones((n_rows, 1))
    out = mats[0]
    for m in mats[1:]:
        out = (out[:, :, None] * m[:, None, :]).reshape(n_rows, -1)
    return out


def loss_and_gradient(probs: list, workload, targets, sizes
                      ) -> tuple[float, list]:
    """Sum of squared errors of the workload's answers, and its gradient.

    The gradient is with respect to each column's probability matrix. A
    marginal on (A, B, C) is P_A^T K / n', K the row-wise product of P_B and
    P_C; its gradient for A is K E_A^T (2 / n'), E the error as an array;
    for B and C, Q = P_A E_A (one product) contracted with P_C, or P_B, row
    by row (a batched product); for k > 3, like A's. Matrix products
    (BLAS), not sums over every cell and record.
    """
    n_rows = probs[0].shape[0]
    grads = [np.zeros_like(p) for p in probs]
    loss = 0.0
    for marginal, target in zip(workload, targets, strict=True):
        shape = [int(sizes[j]) for j in marginal]
        rest = _khatri_rao([probs[j] for j in marginal[1:]], n_rows)
        error = ((probs[marginal[0]].T @ rest).ravel().astype(np.float64)
                 / n_rows - target)
        loss += float(error @ error)
        # In the probabilities' precision (float32 in the projection).
        e = ((2.0 / n_rows) * error.reshape(shape)).astype(probs[0].dtype)
        grads[marginal[0]] += rest @ e.reshape(shape[0], -1).T
        if len(marginal) in (2, 3):
            # E contracted with the first column once, Q[r] = P_A[r] E, then
            # with the other column by a batched matrix product: no
            # row-wise product built (four times faster than two of them).
            q = (probs[marginal[0]] @ e.reshape(shape[0], -1)).reshape(
                n_rows, *shape[1:])
            if len(marginal) == 2:
                grads[marginal[1]] += q
            else:
                b, c = (probs[marginal[1]], probs[marginal[2]])
                # Some OpenBLAS builds raise a spurious "invalid value" flag
                # in batched single-precision products (numpy issue 24067);
                # the projection checks that what it returns is finite.
                with np.errstate(invalid="ignore"):
                    grads[marginal[1]] += np.matmul(q, c[:, :, None])[:, :, 0]
                    grads[marginal[2]] += np.matmul(b[:, None, :], q)[:, 0, :]
            continue
        for pos in range(1, len(marginal)):
            others = [probs[marginal[i]] for i in range(len(marginal))
                      if i != pos]
            grads[marginal[pos]] += _khatri_rao(others, n_rows) @ np.moveaxis(
                e, pos, 0).reshape(shape[pos], -1).T
    return loss, grads


def relaxed_projection(domain: OneHotDomain, workload, targets, logits,
                       *, iterations: int = 1000, learning_rate: float = 0.05,
                       tolerance: float = 1e-16, bar=None) -> np.ndarray:
    """Move the relaxed table's logits until its answers match ``targets``.

    Minimises sum over the workload of ||answer(marginal) - target||^2 by
    Adam on the logits (analytic gradients, :func:`loss_and_gradient`,
    through the softmax), from ``logits`` (records, features); returns the
    new logits. Stops early once the loss is at most ``tolerance`` a target
    (matched), or when ``_PLATEAU_STEPS`` steps lowered it by less than a
    relative ``_PLATEAU_GAIN`` (as the reference implementation stops when
    the loss stops falling).
    """
    logits = np.array(logits, dtype=float)
    m_t = np.zeros_like(logits)
    v_t = np.zeros_like(logits)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    previous = math.inf
    for step in range(1, int(iterations) + 1):
        probs = relaxed_probs(domain, logits)
        # The products in single precision: the projection only steers (its
        # result is post-processing of the answers), at half the memory
        # traffic; the logits and Adam's state stay in double.
        loss, grad_p = loss_and_gradient(
            [p.astype(np.float32) for p in probs], workload, targets,
            domain.sizes)
        grad = np.empty_like(logits)
        for j, (p, g) in enumerate(zip(probs, grad_p, strict=True)):
            grad[:, domain.block(j)] = p * (g - (p * g).sum(axis=1,
                                                           keepdims=True))
        m_t = beta1 * m_t + (1 - beta1) * grad
        v_t = beta2 * v_t + (1 - beta2) * grad**2
        m_hat = m_t / (1 - beta1**step)
        v_hat = v_t / (1 - beta2**step)
        logits -= learning_rate * m_hat / (np.sqrt(v_hat) + eps)
        if bar is not None:
            bar.update(1)
        if loss <= tolerance * len(targets) or not math.isfinite(loss):
            break                              # matched (or diverged: below)
        if step % _PLATEAU_STEPS == 0:
            if loss > (1 - _PLATEAU_GAIN) * previous:
                break                          # no longer improving
            previous = loss
    if not (math.isfinite(loss) and np.all(np.isfinite(logits))):
        raise SkattrError(
            "The relaxed projection diverged (a table entry is not finite): "
            "nothing is sampled from it. Check that the targets are finite, "
            "or lower learning_rate.")
    return logits


def relaxed_probs(domain: OneHotDomain, logits: np.ndarray) -> list:
    """Return the relaxed table's probability matrices, one per column."""
    return [_softmax(logits[:, domain.block(j)])
            for j in range(len(domain.columns))]


def draw_records(domain: OneHotDomain, probs: list, rows: np.ndarray, rng,
                 dtypes: dict) -> pd.DataFrame:
    """Round a relaxed table: each record's columns drawn from its probabilities.

    ``rows`` says which relaxed record each synthetic one comes from; each
    column is drawn independently from that record's probabilities (the
    randomized rounding of Aydore et al.), and cast to ``dtypes`` where its
    categories allow.
    """
    out = {}
    for j, c in enumerate(domain.columns):
        cdf = np.cumsum(probs[j][rows], axis=1)
        u = rng.random(rows.size)[:, None] * cdf[:, -1:]
        code = np.minimum((u > cdf).sum(axis=1), cdf.shape[1] - 1)
        values = pd.Series(np.asarray(domain.categories[c], dtype=object)[code])
        try:
            values = values.astype(dtypes[c])
        except (TypeError, ValueError):
            pass
        out[c] = values
    return pd.DataFrame(out)

"""Learn a ParameterNetwork from grouped reference data (one dataset per group)."""

from __future__ import annotations

import math
from collections.abc import Mapping

# networkx is imported by the functions that build or search a graph: a
# process whose releases use no network never loads it (0.3 CPU-s of its
# first release, issue 42).
import numpy as np
import pandas as pd

from skattr._query import check_present, indicator
from skattr._validation import check_columns, numeric_block
from skattr.bayes._network import ParameterNetwork
from skattr.exceptions import DataValidationError, InvalidParameterError

__all__ = ["fit_network"]

_STRUCTURES = ("chow-liu", "independent")
# The value of a spec that names a column alone: the parameter is its mean.
_MEAN = object()


def fit_network(data: pd.DataFrame, *, group, parameters: Mapping,
                grids: Mapping | None = None, bins: int = 3,
                structure="chow-liu", root=None,
                alpha: float = 1.0) -> ParameterNetwork:
    """Fit a Bayesian network over attribute parameters on grouped data.

    Each group of ``data`` (a school, a hospital, ...) is one dataset drawn
    from the population, and gives one observation of every parameter phi:
    its per-group mean or proportion (Zhang, Ohrimenko and Cummings,
    Sec. 5). The observations are discretised onto finite grids, a structure
    is chosen (a Chow-Liu tree by default) and each node's conditional
    probability table is estimated from the counts over the groups.

    Parameters
    ----------
    data : pandas.DataFrame
        The reference records, one row each; never modified.
    group : column label
        The column whose values name the datasets (groups). At least two
        groups are needed, and the column must hold no missing value.
    parameters : dict node -> spec
        The parameter of each node. A column label means the column's
        per-group mean (the column must be numeric). A tuple
        ``(column, value)`` means the per-group proportion of records whose
        column equals ``value``; ``value`` may also be a callable taking the
        column (a Series) and returning a boolean mask, as in
        :meth:`skattr.Query.count`. A tuple is always read as
        ``(column, value)``. The spec's column becomes the node's
        ``columns`` entry in the network.
    grids : dict node -> array-like, optional
        A strictly increasing 1-D grid for some nodes; each group's estimate
        is mapped to the nearest grid value (ties to the lower one). Nodes
        without a grid get one learned from the data (see Notes).
    bins : int, default=3
        The number of equal-count bins of a learned grid.
    structure : {"chow-liu", "independent"}, dict or list, default="chow-liu"
        "chow-liu" learns a maximum mutual information spanning tree;
        "independent" has no edges; a dict ``{node: [parents]}`` (a node
        absent has no parents) or a list of ``(parent, child)`` edges gives
        the DAG itself.
    root : node, optional
        With "chow-liu", the node the tree's edges point away from (default:
        the first node of ``parameters``).
    alpha : float, default=1.0
        The Dirichlet (additive) smoothing added to every count; must be
        positive (see Notes).

    Returns
    -------
    ParameterNetwork
        The fitted network, with ``columns`` mapping each node to its spec's
        column.

    Raises
    ------
    DataValidationError
        ``data`` is not a DataFrame, names no such column, holds NaN in a
        used column, a mean's column is not numeric, or has fewer than two
        groups.
    InvalidParameterError
        A bad ``parameters``, ``grids``, ``bins``, ``structure``, ``root``
        or ``alpha``.

    Notes
    -----
    A learned grid (a node not in ``grids``) has at most ``bins`` values:
    the per-group estimates are cut into ``bins`` equal-count bins at their
    quantiles (``np.quantile`` edges, a value on an inner edge going to the
    upper bin), each estimate goes to its bin, and the bin's grid value is
    the mean of the estimates in it. Empty bins (from tied estimates) are
    dropped; with fewer distinct estimates than ``bins``, the grid is the
    distinct estimates themselves.

    The Chow-Liu tree [1]_ is the tree-shaped distribution closest in
    Kullback-Leibler divergence to the empirical one: the maximum spanning
    tree of the complete graph weighted by the empirical mutual information
    (in nats) between each pair of discretised nodes over the groups. Its
    edges are oriented away from ``root``.

    ``cpts[v][i_1, ..., i_k, j]`` is proportional to ``alpha`` plus the
    number of groups with the parents at values ``i_1, ..., i_k`` and ``v``
    at value ``j``. Without smoothing, a parent configuration seen in no
    group, or a value never seen with it, gets probability zero; the
    max-influence e(X_Q | X_i) compares log-probabilities across values of
    phi_i, so one zero makes it infinite and no Markov quilt that reaches
    the node can be certified. Hence ``alpha > 0``.

    References
    ----------
    .. [1] C. K. Chow and C. N. Liu, "Approximating discrete probability
       distributions with dependence trees", IEEE Transactions on
       Information Theory 14(3), 462-467, 1968.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from skattr.bayes import fit_network
    >>> rng = np.random.default_rng(0)
    >>> women = np.repeat(rng.uniform(0.2, 0.8, 50), 40)
    >>> data = pd.DataFrame({
    ...     "school": np.repeat(np.arange(50), 40),
    ...     "sex": np.where(rng.uniform(size=2000) < women, "F", "M"),
    ...     "sat": rng.normal(1000 + 300 * women, 50)})
    >>> net = fit_network(data, group="school", bins=2,
    ...                   parameters={"women": ("sex", "F"), "sat": "sat"})
    >>> net.parents
    {'women': (), 'sat': ('women',)}
    >>> net.columns
    {'women': ('sex',), 'sat': ('sat',)}
    >>> net.grids["women"].round(2)
    array([0.36, 0.65])
    """
    nodes, columns, grids, labels = _discretised(
        data, group=group, parameters=parameters, grids=grids, bins=bins)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.number)) \
            or not math.isfinite(alpha) or alpha <= 0:
        raise InvalidParameterError(
            f"alpha must be a positive finite number; got {alpha!r}. Use e.g. "
            "alpha=1 (a zero probability would make the max-influence infinite).")
    parents = _structure(structure, nodes, root, labels)
    sizes = {v: grids[v].size for v in nodes}
    cpts = {v: _cpt(labels, sizes, v, parents[v], float(alpha)) for v in nodes}
    return ParameterNetwork(parents=parents, grids=grids, cpts=cpts,
                            columns=columns)


def _discretised(data, *, group, parameters, grids, bins):
    """Nodes, their columns, grids and per-group grid indices (one array each)."""
    if not isinstance(data, pd.DataFrame):
        raise DataValidationError(
            "data must be a pandas DataFrame with one row per record and a "
            f"group column; got {type(data).__name__}. Build one with "
            "pd.DataFrame(...).")
    if not isinstance(parameters, Mapping) or not parameters:
        raise InvalidParameterError(
            "parameters must be a non-empty dict {node: column} or {node: "
            f"(column, value)}}; got {parameters!r}.")
    grids = {} if grids is None else grids
    if not isinstance(grids, Mapping):
        raise InvalidParameterError(
            f"grids must be a dict {{node: grid values}}; got {type(grids).__name__}.")
    extra = [v for v in grids if v not in parameters]
    if extra:
        raise InvalidParameterError(
            f"grids names node(s) {extra} that are not in parameters; its keys "
            f"must be among {list(parameters)}.")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise InvalidParameterError(
            f"bins must be a positive int; got {bins!r}.")
    nodes = list(parameters)
    specs = {v: _spec(v, parameters[v]) for v in nodes}
    columns = {v: column for v, (column, _) in specs.items()}
    check_columns(data, [group, *dict.fromkeys(columns.values())], what="data")
    check_present(data[group], group, what="data")
    estimates = _group_estimates(data, group, specs)
    if estimates.shape[0] < 2:
        raise DataValidationError(
            f"Column {group!r} holds {estimates.shape[0]} group(s); fitting a "
            "network needs at least 2 (one observation of the parameters per "
            "group). Pass reference data with more datasets.")
    fitted, labels = {}, {}
    for k, v in enumerate(nodes):
        grid = _check_grid(v, grids[v]) if v in grids else None
        fitted[v], labels[v] = _to_grid(estimates[:, k], grid, int(bins))
    return nodes, columns, fitted, labels


def _spec(node, spec):
    """``(column, value)`` of a spec; value is ``_MEAN`` for a mean."""
    if isinstance(spec, tuple):
        if len(spec) != 2:
            raise InvalidParameterError(
                f"parameters[{node!r}] = {spec!r}: a tuple must be (column, "
                "value); give a column label alone for the column's mean.")
        return spec
    if isinstance(spec, (list, dict, set)):
        raise InvalidParameterError(
            f"parameters[{node!r}] = {spec!r} is not a column label; give a "
            "label (the mean) or a tuple (column, value) (the proportion).")
    return spec, _MEAN


def _group_estimates(data, group, specs) -> np.ndarray:
    """Per-group estimates, groups x nodes, in one groupby over the records."""
    block = np.empty((len(data), len(specs)))
    for k, (v, (column, value)) in enumerate(specs.items()):
        if value is _MEAN:
            col = data[column]
            if not (pd.api.types.is_numeric_dtype(col.dtype)
                    or pd.api.types.is_bool_dtype(col.dtype)):
                raise DataValidationError(
                    f"Column {column!r} of data is not numeric (dtype "
                    f"{col.dtype}), so parameters[{v!r}] cannot be its mean. "
                    "Give (column, value) for the proportion of records equal "
                    "to value.")
            block[:, k] = numeric_block(data, [column], what="data")[:, 0]
        else:
            block[:, k] = indicator(data, column, value, what="data")
    # Positional grouping by the column's values: the frame's index may repeat,
    # and unused categories of a categorical column form no group.
    return pd.DataFrame(block).groupby(
        data[group].to_numpy(), sort=False).mean().to_numpy()


def _check_grid(node, values) -> np.ndarray:
    try:
        grid = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"grids[{node!r}] is not an array of numbers.") from exc
    if grid.ndim != 1 or grid.size < 1 or not np.isfinite(grid).all():
        raise InvalidParameterError(
            f"grids[{node!r}] must be a non-empty 1-D array of finite numbers; "
            f"got shape {grid.shape}.")
    if np.any(np.diff(grid) <= 0):
        raise InvalidParameterError(
            f"grids[{node!r}] is not strictly increasing; pass np.unique(grid).")
    return grid


def _to_grid(estimates, grid, bins):
    """Return the grid (given or learned) and each estimate's index on it."""
    if grid is not None:
        # argmin takes the first minimum: a tie goes to the lower grid value.
        return grid, np.abs(estimates[:, None] - grid[None, :]).argmin(axis=1)
    distinct, inverse = np.unique(estimates, return_inverse=True)
    if distinct.size <= bins:
        return distinct, inverse
    edges = np.quantile(estimates, np.linspace(0, 1, bins + 1))
    _, labels = np.unique(np.searchsorted(edges[1:-1], estimates, side="right"),
                          return_inverse=True)
    bins = pd.Series(estimates).groupby(labels)
    # Clipped to the bin's range so float rounding of a mean can never reach
    # the next bin's values: the grid stays strictly increasing.
    grid = np.clip(bins.mean(), bins.min(), bins.max()).to_numpy()
    return grid, labels


def _mutual_information(x: np.ndarray, y: np.ndarray) -> float:
    """Empirical mutual information (nats) of two arrays of labels 0..k-1."""
    kx, ky = int(x.max()) + 1, int(y.max()) + 1
    joint = np.bincount(x * ky + y, minlength=kx * ky).reshape(kx, ky) / x.size
    outer = joint.sum(axis=1)[:, None] * joint.sum(axis=0)[None, :]
    seen = joint > 0
    return max(0.0, float(np.sum(joint[seen] * np.log(joint[seen] / outer[seen]))))


def _chow_liu(nodes, labels, root) -> dict:
    """Parents of the Chow-Liu tree of ``labels``, oriented away from ``root``."""
    import networkx as nx
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_weighted_edges_from(
        (u, v, _mutual_information(labels[u], labels[v]))
        for i, u in enumerate(nodes) for v in nodes[i + 1:])
    tree = nx.maximum_spanning_tree(graph)
    parents = {v: [] for v in nodes}
    for u, v in nx.bfs_edges(tree, root):
        parents[v].append(u)
    return parents


def _structure(structure, nodes, root, labels) -> dict:
    """Return the parents of each node, read from ``structure`` and checked."""
    import networkx as nx
    if root is not None and not (isinstance(structure, str)
                                 and structure == "chow-liu"):
        raise InvalidParameterError(
            "root orients a Chow-Liu tree; it is not used with structure="
            f"{structure!r}. Drop root= or use structure='chow-liu'.")
    if isinstance(structure, str):
        if structure == "independent":
            return {v: [] for v in nodes}
        if structure == "chow-liu":
            root = nodes[0] if root is None else root
            if root not in labels:
                raise InvalidParameterError(
                    f"root {root!r} is not a node; pick one of {nodes}.")
            return _chow_liu(nodes, labels, root)
        raise InvalidParameterError(
            f"structure must be one of {list(_STRUCTURES)}, a dict {{node: "
            f"[parents]}} or a list of (parent, child) edges; got {structure!r}.")
    if isinstance(structure, Mapping):
        for v, ps in structure.items():
            if isinstance(ps, (str, bytes)) or not isinstance(ps, (list, tuple)):
                raise InvalidParameterError(
                    f"structure[{v!r}] = {ps!r} must be a list of parents, e.g. "
                    f"[{ps!r}].")
        edges = [(p, v) for v, ps in structure.items() for p in ps]
        named = list(structure) + [p for p, _ in edges]
    elif isinstance(structure, (list, tuple)):
        bad = [e for e in structure if not isinstance(e, (list, tuple)) or len(e) != 2]
        if bad:
            raise InvalidParameterError(
                f"structure edges {bad[:3]} are not (parent, child) pairs.")
        edges = [tuple(e) for e in structure]
        named = [v for e in edges for v in e]
    else:
        raise InvalidParameterError(
            f"structure must be one of {list(_STRUCTURES)}, a dict {{node: "
            "[parents]}} or a list of (parent, child) edges; got "
            f"{type(structure).__name__}.")
    unknown = [v for v in dict.fromkeys(named) if v not in labels]
    if unknown:
        raise InvalidParameterError(
            f"structure names node(s) {unknown} that are not in parameters; "
            f"its nodes are {nodes}.")
    if len(set(edges)) != len(edges):
        raise InvalidParameterError(
            "structure repeats an edge; list each (parent, child) once.")
    graph = nx.DiGraph(edges)
    if not nx.is_directed_acyclic_graph(graph):
        cycle = [u for u, _ in nx.find_cycle(graph)]
        raise InvalidParameterError(
            f"structure has a cycle {cycle}; a Bayesian network is acyclic. "
            "Remove one of its edges.")
    parents = {v: [] for v in nodes}
    for p, v in edges:
        parents[v].append(p)
    return parents


def _cpt(labels, sizes, node, parents, alpha) -> np.ndarray:
    """Return (counts + alpha) of (parents, node) over the groups, normalised."""
    shape = (*(sizes[p] for p in parents), sizes[node])
    flat = np.ravel_multi_index([labels[p] for p in parents] + [labels[node]], shape)
    counts = np.bincount(flat, minlength=math.prod(shape)).reshape(shape) + alpha
    return counts / counts.sum(axis=-1, keepdims=True)

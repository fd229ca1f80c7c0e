"""Exact inference in a discrete Bayesian network by variable elimination."""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["joint_table"]

_LETTERS = string.ascii_letters
_GREEDY_LIMIT = 40


def _product(factors, keep, sizes) -> tuple[np.ndarray, tuple]:
    """Multiply ``factors`` and sum out every variable not in ``keep``."""
    variables = tuple(dict.fromkeys(v for _, vs in factors for v in vs))
    out = tuple(v for v in variables if v in keep)
    letter = {v: _LETTERS[k] for k, v in enumerate(variables)}
    spec = ",".join("".join(letter[v] for v in vs) for _, vs in factors)
    spec += "->" + "".join(letter[v] for v in out)
    return np.einsum(spec, *(table for table, _ in factors), optimize=True), out


def _elimination_order(hidden, factors, sizes, topological):
    """Order the hidden nodes: greedy min-weight when few, else children first.

    Greedy min-weight (eliminate the node whose combined factor is smallest)
    keeps the factors of a general DAG small but costs a pass over the
    factors for each candidate; beyond ``_GREEDY_LIMIT`` hidden nodes the
    reverse topological order is used, which on trees and chains never builds
    a factor larger than the query's own joint table.
    """
    if len(hidden) > _GREEDY_LIMIT:
        return [v for v in reversed(topological) if v in hidden]
    factors, hidden, order = list(factors), set(hidden), []
    position = {v: k for k, v in enumerate(topological)}
    while hidden:
        scopes = [vs for _, vs in factors]

        def weight(v, scopes=scopes):
            involved = {u for vs in scopes if v in vs for u in vs}
            return float(np.prod([sizes[u] for u in involved]))
        v = min(sorted(hidden, key=position.__getitem__), key=weight)
        hidden.discard(v)
        order.append(v)
        touching = [vs for _, vs in factors if v in vs]
        merged = tuple({u for vs in touching for u in vs} - {v})
        factors = [f for f in factors if v not in f[1]] + [(None, merged)]
    return order


def joint_table(query: Sequence, parents: Mapping, cpts: Mapping,
                sizes: Mapping, topological: Sequence) -> np.ndarray:
    """Return P(query), an array with one axis per query node, in their order.

    Parameters
    ----------
    query : sequence of nodes
        The nodes whose joint law is wanted (distinct).
    parents : mapping node -> tuple of nodes
        The network's structure.
    cpts : mapping node -> ndarray
        ``cpts[v][parent values..., v value]`` = P(v | parents).
    sizes : mapping node -> int
        Number of values of each node.
    topological : sequence of nodes
        Every node, parents before children.

    Notes
    -----
    Only the ancestors of the query enter: every other node is barren (its
    conditional sums to one). The elimination order is greedy, each step
    removing the node whose combined factor is smallest (min-weight), which
    is linear in the number of nodes on trees and chains (large networks are
    eliminated children first, see :func:`_elimination_order`). Tables multiply in
    ``np.einsum``; no row-level Python loop runs.
    """
    query = tuple(query)
    relevant, stack = set(query), list(query)
    while stack:
        for p in parents[stack.pop()]:
            if p not in relevant:
                relevant.add(p)
                stack.append(p)
    factors = [(np.asarray(cpts[v], dtype=np.float64), (*parents[v], v))
               for v in relevant]
    hidden = relevant - set(query)
    for v in _elimination_order(hidden, factors, sizes, topological):
        touching = [f for f in factors if v in f[1]]
        factors = [f for f in factors if v not in f[1]]
        keep = {u for _, vs in touching for u in vs} - {v}
        factors.append(_product(touching, keep, sizes))
    table, order = _product(factors, set(query), sizes)
    # Query nodes without any factor cannot occur (each node has its own CPT).
    return np.transpose(table, [order.index(v) for v in query])

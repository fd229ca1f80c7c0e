"""A Bayesian network over attribute parameters: max-influence and Markov quilts."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

# networkx is imported by the functions that build or search a graph: a
# process whose releases use no network never loads it (0.3 CPU-s of its
# first release, issue 42).
import numpy as np

from skattr._persistence import persistable
from skattr.bayes._inference import joint_table
from skattr.exceptions import InvalidParameterError

__all__ = ["MarkovQuilt", "ParameterNetwork", "QuiltChoice"]

# A CPT row must sum to one within this (float rounding of user tables).
_SUM_TOL = 1e-9
# Max-influences are rounded up by this relative margin, so that the float
# rounding of variable elimination never lands on the uncertified side.
_ROUND_UP = 1e-9


@persistable
@dataclass(frozen=True)
class MarkovQuilt:
    """A Markov quilt (Q, N, R) of a node (Zhang et al., Def. 6).

    Deleting ``quilt`` leaves ``nearby`` (holding the node) and ``remote``,
    with the remote nodes independent of the node given the quilt
    (d-separated in the network).
    """

    node: object
    quilt: frozenset
    nearby: frozenset
    remote: frozenset


@persistable
@dataclass(frozen=True)
class QuiltChoice:
    """The quilt a Markov quilt mechanism chose for one sensitive node.

    ``influence`` is e_Theta(X_Q | X_node) in nats, ``near_targets`` the
    queried nodes left in N, and ``scale`` the Laplace scale this quilt needs.
    """

    quilt: MarkovQuilt
    influence: float
    near_targets: frozenset
    scale: float


def _as_grid(values, node) -> np.ndarray:
    grid = np.asarray(values, dtype=np.float64).ravel() if not isinstance(
        values, np.ndarray) or values.dtype.kind in "biuf" else np.asarray(values)
    if grid.size < 1:
        raise InvalidParameterError(
            f"grids[{node!r}] is empty; give the values its parameter can take.")
    if grid.dtype.kind == "f" and not np.isfinite(grid).all():
        raise InvalidParameterError(f"grids[{node!r}] holds a non-finite value.")
    if len(set(grid.tolist())) != grid.size:
        raise InvalidParameterError(
            f"grids[{node!r}] repeats a value; each grid value must be distinct.")
    return grid


def _network_args(net) -> dict:
    """ParameterNetwork's constructor arguments (it keeps a networkx graph)."""
    return {"parents": net.parents, "grids": net.grids, "cpts": list(net.members),
            "columns": net.columns}


@persistable(arguments=_network_args)
class ParameterNetwork:
    """A Bayesian network over the parameters of the attributes' distributions.

    Each node is an attribute's parameter phi (the proportion of women, the
    mean SAT score, ...) taking values on a finite grid; the network is the
    law of the parameters of a dataset drawn from the population (Zhang et
    al., Sec. 5). Given all parameters, the attributes' columns are drawn
    independently. A set of networks with one structure (a set Theta, e.g.
    bootstrap replicates) is given by a list of CPT dicts; every quantity is
    then the worst case over them.

    Parameters
    ----------
    parents : dict node -> list of nodes
        The parents of each node (a node may be absent when it has none);
        the graph must be acyclic.
    grids : dict node -> array-like
        The finite grid of each node's parameter.
    cpts : dict node -> array-like, or list of such dicts
        ``cpts[node][i_1, ..., i_k, j]`` = P(phi_node = grids[node][j] | the
        parents at their grid values i_1, ..., i_k, in the order listed);
        non-negative, summing to one on the last axis.
    columns : dict node -> column label or list of labels, optional
        The data columns whose distribution each node's parameter governs
        (default: the column named like the node). Used by the mechanisms to
        find the nodes a query reads and the node of a secret.

    Attributes
    ----------
    nodes : tuple
        The nodes, parents before children.
    graph : networkx.DiGraph
        The structure.

    Examples
    --------
    >>> from skattr.bayes import ParameterNetwork
    >>> net = ParameterNetwork(
    ...     parents={"income": [], "sat": ["income"]},
    ...     grids={"income": [0.3, 0.7], "sat": [1000, 1300]},
    ...     cpts={"income": [0.5, 0.5], "sat": [[0.8, 0.2], [0.4, 0.6]]})
    >>> round(net.max_influence(["sat"], "income"), 4)   # log(0.6 / 0.2)
    1.0986
    >>> [sorted(q.quilt) for q in net.markov_quilts("income")]
    [[], ['sat']]
    """

    def __init__(self, *, parents: Mapping, grids: Mapping, cpts,
                 columns: Mapping | None = None):
        import networkx as nx
        if not isinstance(grids, Mapping) or not grids:
            raise InvalidParameterError(
                "grids must be a non-empty dict {node: grid values}.")
        if not isinstance(parents, Mapping):
            raise InvalidParameterError(
                "parents must be a dict {node: [parent nodes]}.")
        unknown = [v for v in parents if v not in grids]
        unknown += [p for ps in parents.values() for p in ps if p not in grids]
        if unknown:
            raise InvalidParameterError(
                f"parents names node(s) {sorted(map(str, set(unknown)))} without "
                "a grid; give every node a grid in grids=.")
        self.grids = {v: _as_grid(g, v) for v, g in grids.items()}
        self.parents = {v: tuple(parents.get(v, ())) for v in self.grids}
        for v, ps in self.parents.items():
            if len(set(ps)) != len(ps) or v in ps:
                raise InvalidParameterError(
                    f"parents[{v!r}] = {list(ps)} repeats a parent or names the "
                    "node itself.")
        graph = nx.DiGraph()
        graph.add_nodes_from(self.grids)
        graph.add_edges_from((p, v) for v, ps in self.parents.items() for p in ps)
        if not nx.is_directed_acyclic_graph(graph):
            cycle = [u for u, _ in nx.find_cycle(graph)]
            raise InvalidParameterError(
                f"The network has a cycle {cycle}; a Bayesian network is "
                "acyclic. Remove one of its edges.")
        self.graph = graph
        self.nodes = tuple(nx.lexicographical_topological_sort(graph, key=str))
        self.sizes = {v: g.size for v, g in self.grids.items()}
        members = [cpts] if isinstance(cpts, Mapping) else list(cpts)
        if not members:
            raise InvalidParameterError("cpts is an empty list of networks.")
        self.members = tuple(self._check_cpts(m) for m in members)
        columns = {} if columns is None else dict(columns)
        extra = [v for v in columns if v not in self.grids]
        if extra:
            raise InvalidParameterError(
                f"columns names node(s) {extra} that are not in the network.")
        self.columns = {v: tuple(c if isinstance(c, (list, tuple)) else [c])
                        for v, c in ((v, columns.get(v, v)) for v in self.nodes)}

    def _check_cpts(self, cpts) -> dict:
        if not isinstance(cpts, Mapping):
            raise InvalidParameterError(
                "cpts must be a dict {node: table} or a list of such dicts; got "
                f"{type(cpts).__name__}.")
        missing = [v for v in self.nodes if v not in cpts]
        if missing:
            raise InvalidParameterError(
                f"cpts has no table for node(s) {missing}.")
        out = {}
        for v in self.nodes:
            shape = (*(self.sizes[p] for p in self.parents[v]), self.sizes[v])
            try:
                table = np.asarray(cpts[v], dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise InvalidParameterError(
                    f"cpts[{v!r}] is not an array of probabilities.") from exc
            if table.shape != shape:
                raise InvalidParameterError(
                    f"cpts[{v!r}] has shape {table.shape}; it must be {shape}: "
                    "one axis per parent (in the order of parents[node]) and "
                    "the node's own grid last.")
            if not np.isfinite(table).all() or (table < 0).any():
                raise InvalidParameterError(
                    f"cpts[{v!r}] holds a negative or non-finite probability.")
            if not np.allclose(table.sum(axis=-1), 1.0, rtol=0, atol=_SUM_TOL):
                raise InvalidParameterError(
                    f"cpts[{v!r}] does not sum to one over its last axis (the "
                    "node's values); normalise each row.")
            table = table.copy()
            table.flags.writeable = False
            out[v] = table
        return out

    def __repr__(self) -> str:
        edges = ", ".join(f"{u}->{v}" for u, v in self.graph.edges)
        theta = f", {len(self.members)} networks" if len(self.members) > 1 else ""
        shown = edges or "no edges"
        return f"ParameterNetwork({len(self.nodes)} nodes: {shown}{theta})"

    # Structure -------------------------------------------------------------

    @cached_property
    def is_tree(self) -> bool:
        """True when every node has at most one parent and no cycle is undirected.

        Such a network (a forest of rooted trees, chains included) has no
        collider, so a node set blocks a path exactly when it lies on it.
        """
        import networkx as nx
        return (all(len(ps) <= 1 for ps in self.parents.values())
                and nx.is_forest(self.graph.to_undirected(as_view=True)))

    def node_of(self, column) -> object:
        """Return the node whose parameter governs ``column`` (None if none)."""
        for v, cols in self.columns.items():
            if column in cols:
                return v
        return None

    def secret_node(self, column) -> object:
        """Return the node governing a secret's ``column``, or raise.

        Raises
        ------
        InvalidParameterError
            No node governs the column.
        """
        node = self.node_of(column)
        if node is None:
            raise InvalidParameterError(
                f"The secret's column {column!r} is governed by no node of the "
                "network; map it with ParameterNetwork(columns={node: column}).")
        return node

    def _check_node(self, node) -> None:
        if node not in self.grids:
            raise InvalidParameterError(
                f"{node!r} is not a node of the network; its nodes are "
                f"{list(self.nodes)}.")

    def remote(self, node, quilt) -> frozenset:
        """Return the nodes d-separated from ``node`` given ``quilt`` (largest R).

        Uses :func:`networkx.is_d_separator` (a forest uses path blocking,
        the same test without colliders, in one traversal).
        """
        import networkx as nx
        quilt = frozenset(quilt)
        others = [v for v in self.nodes if v != node and v not in quilt]
        if self.is_tree:
            undirected = self.graph.to_undirected(as_view=True)
            reached = nx.node_connected_component(
                nx.restricted_view(undirected, quilt, []), node)
            return frozenset(v for v in others if v not in reached)
        return frozenset(v for v in others
                         if nx.is_d_separator(self.graph, {node}, {v}, set(quilt)))

    def markov_quilts(self, node, *, max_size: int | None = None,
                      maximal: bool = True) -> Iterator[MarkovQuilt]:
        """Yield the Markov quilts (Q, N, R) of ``node`` (Zhang et al., Def. 6).

        Parameters
        ----------
        node : node
            The (sensitive) node, which lies in N.
        max_size : int, optional
            Yield quilts of at most this many nodes (default: every size).
        maximal : bool, default=True
            Yield one quilt per Q, with R every node d-separated from ``node``
            given Q (the least N: any other R for that Q is a subset and gives
            a larger N, so a mechanism never needs it). False yields every
            (Q, N, R) of the definition, every subset of that R, for small
            networks.

        Yields
        ------
        MarkovQuilt
            The trivial quilt (Q empty, R the nodes independent of ``node``)
            first, then by increasing size of Q.
        """
        self._check_node(node)
        others = [v for v in self.nodes if v != node]
        top = len(others) if max_size is None else min(int(max_size), len(others))
        everything = frozenset(self.nodes)
        for size in range(top + 1):
            for quilt in itertools.combinations(others, size):
                quilt = frozenset(quilt)
                remote = self.remote(node, quilt)
                subsets = [remote] if maximal else (
                    frozenset(r) for k in range(len(remote) + 1)
                    for r in itertools.combinations(sorted(remote, key=str), k))
                for r in subsets:
                    yield MarkovQuilt(node, quilt, everything - quilt - r, r)

    # Influence -------------------------------------------------------------

    def joint(self, nodes, member: int = 0) -> np.ndarray:
        """Return the joint law P(phi_nodes) of one network of the set.

        An array with one axis per node (in the order given), by exact
        variable elimination.
        """
        nodes = tuple(nodes)
        for v in nodes:
            self._check_node(v)
        return joint_table(nodes, self.parents, self.members[member], self.sizes,
                           self.nodes)

    def max_influence(self, targets, source) -> float:
        """Return the max-influence e_Theta(X_targets | X_source) in nats (Def. 7).

        sup over the networks of the set, max over two values a, b of
        phi_source and over every value v of phi_targets, of
        log P(phi_targets = v | a) / P(phi_targets = v | b). Values of
        phi_source of probability zero are not conditioned on (they never
        occur under that network).

        Returns
        -------
        float
            0 for no targets or independent ones; ``inf`` when some value of
            the targets is possible under one value of the source and not
            under another.
        """
        self._check_node(source)
        targets = tuple(dict.fromkeys(targets))
        for v in targets:
            self._check_node(v)
        if not targets:
            return 0.0
        if source in targets:
            # phi_source itself tells its values apart, if two are possible.
            possible = max(int(np.count_nonzero(self.joint((source,), m)))
                           for m in range(len(self.members)))
            return math.inf if possible > 1 else 0.0
        worst = 0.0
        for member in range(len(self.members)):
            table = self.joint((source, *targets), member).reshape(
                self.sizes[source], -1)
            marginal = table.sum(axis=1)
            conditional = table[marginal > 0] / marginal[marginal > 0, None]
            high, low = conditional.max(axis=0), conditional.min(axis=0)
            if np.any((high > 0) & (low <= 0)):
                return math.inf
            seen = high > 0
            worst = max(worst, float(np.max(np.log(high[seen] / low[seen]))))
        return worst * (1 + _ROUND_UP) if worst > 0 else 0.0

    def variable_max_influence(self, targets, source) -> float:
        """Song, Wang and Chaudhuri's max-influence of a variable (Def. 10).

        The same quantity as :meth:`max_influence`, read on a network whose
        nodes are the variables of one database (one record's attributes, or
        the successive entries of a Markov chain) rather than parameters.
        """
        return self.max_influence(targets, source)

    # Quilt search ----------------------------------------------------------

    def least_influence_covers(self, node, targets, *, epsilon: float = math.inf,
                               max_size: int | None = None) -> dict:
        """For each set S of targets left near, the least-influence quilt.

        Returns ``{S: (influence, MarkovQuilt)}`` over the quilts Q of at
        most ``max_size`` nodes with influence below ``epsilon``, where S is
        the set of ``targets`` in N(Q): the Pareto frontier of (S, least
        e(X_Q | X_node)). Every set S a quilt can leave near is either in it
        with its least influence, or dominated by an entry S' within S of no
        more influence; a mechanism whose cost grows with the queried nodes
        left near needs nothing else.

        Notes
        -----
        The search is exact on that frontier and prunes with two facts. The
        max-influence only grows when nodes join Q (a marginal's log-ratio
        is at most the joint's), so a Q at or above ``epsilon``, or at or above the best
        influence leaving no target near, has no useful superset. And only
        ancestors of the node and the targets need be tried: if Q separates
        them, so does Q intersected with those ancestors (in the moral graph
        of the ancestral set, which Q's other nodes never enter), at no more
        influence. On a forest the candidates shrink further to the targets
        and the branching nodes of the paths from ``node`` to them: moving a
        quilt node away from ``node`` along its path, past no branching,
        keeps what it separates and cannot raise the influence (the
        log-ratio contracts under the Markov kernel it passes through).
        """
        self._check_node(node)
        targets = frozenset(targets) - {node}
        for v in targets:
            self._check_node(v)
        candidates = self._candidates(node, targets)
        best: dict = {}
        dead: set = set()
        influence_of = {}
        top = (len(candidates) if max_size is None
               else min(max_size, len(candidates)))
        for size in range(top + 1):
            grew = False
            for quilt in itertools.combinations(candidates, size):
                quilt = frozenset(quilt)
                if any(quilt - {q} in dead for q in quilt):
                    dead.add(quilt)
                    continue
                bound = min(epsilon, best.get(frozenset(), (math.inf,))[0])
                e = influence_of.get(quilt)
                if e is None:
                    e = influence_of[quilt] = self.max_influence(quilt, node)
                if e >= bound:
                    dead.add(quilt)
                    continue
                grew = True
                remote = self.remote(node, quilt)
                near = targets - quilt - remote
                if e < best.get(near, (math.inf,))[0]:
                    everything = frozenset(self.nodes)
                    best[near] = (e, MarkovQuilt(
                        node, quilt, everything - quilt - remote, remote))
            if not grew:
                break
        return best

    def _candidates(self, node, targets) -> list:
        """Nodes a least-influence quilt may use (see least_influence_covers)."""
        import networkx as nx
        if not targets:
            return []
        if self.is_tree:
            undirected = self.graph.to_undirected(as_view=True)
            paths = [nx.shortest_path(undirected, node, t) for t in targets
                     if nx.has_path(undirected, node, t)]
            on_paths = {v for p in paths for v in p[1:]}
            children = {v: {p[k + 1] for p in paths
                            for k in range(len(p) - 1) if p[k] == v}
                        for v in on_paths}
            keep = {v for v in on_paths if v in targets or len(children[v]) > 1}
        else:
            keep = set(nx.ancestors(self.graph, node)).union(
                *(nx.ancestors(self.graph, t) | {t} for t in targets)) - {node}
        return [v for v in self.nodes if v in keep]

    @classmethod
    def fit(cls, data, *, group, parameters, **kwargs) -> ParameterNetwork:
        """Learn a network from grouped reference data (one dataset per group).

        The same as :func:`skattr.bayes.fit_network`, whose keywords
        (``grids``, ``bins``, ``structure``, ``root``, ``alpha``) it takes.

        Examples
        --------
        >>> from skattr.bayes import ParameterNetwork
        >>> from skattr.datasets import make_schools
        >>> schools = make_schools(100, 30, random_state=0)
        >>> net = ParameterNetwork.fit(
        ...     schools, group="school",
        ...     parameters={"income": "income", "height": "height",
        ...                 "gender": ("gender", "female")})
        >>> sorted(net.nodes)
        ['gender', 'height', 'income']
        """
        from skattr.bayes._fit import fit_network

        return fit_network(data, group=group, parameters=parameters, **kwargs)

    def plot(self, *, quilt: MarkovQuilt | None = None, targets=(), ax=None,
             title: str | None = None):
        """Draw the network, parents above children, with a quilt's parts coloured.

        Needs matplotlib (``pip install 'skattr[plot]'``).

        Parameters
        ----------
        quilt : MarkovQuilt, optional
            Colours its sensitive node, quilt Q, nearby N and remote R.
        targets : iterable of nodes, default=()
            The queried nodes, drawn with a thick outline.
        ax : matplotlib Axes, optional
            Where to draw; a new figure otherwise.
        title : str, optional
            The axes' title.

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        MissingDependencyError
            matplotlib is not installed.
        """
        from skattr.bayes._plot import plot_network

        if quilt is not None and not isinstance(quilt, MarkovQuilt):
            raise InvalidParameterError(
                "quilt must be a MarkovQuilt (from markov_quilts or a "
                f"mechanism's quilt_choices); got {type(quilt).__name__}.")
        targets = list(targets)
        for v in targets + ([] if quilt is None else [quilt.node]):
            self._check_node(v)
        return plot_network(self, quilt=quilt, targets=targets, ax=ax,
                            title=title)

    @classmethod
    def markov_chain(cls, initial, transition, length: int, *,
                     states=None) -> ParameterNetwork:
        """Build a Markov chain X_0 -> X_1 -> ... of ``length`` nodes 0, 1, ...

        ``initial`` is the law of X_0 and ``transition[i, j]`` the
        probability of moving from state i to state j; ``states`` are the
        values (default 0, 1, ...).
        """
        initial = np.asarray(initial, dtype=np.float64)
        transition = np.asarray(transition, dtype=np.float64)
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)) \
                or length < 1:
            raise InvalidParameterError(
                f"length must be a positive int; got {length!r}.")
        k = initial.size
        if transition.shape != (k, k):
            raise InvalidParameterError(
                f"transition has shape {transition.shape}; with {k} states it "
                f"must be ({k}, {k}).")
        states = np.arange(k) if states is None else states
        return cls(parents={t: ([t - 1] if t else []) for t in range(length)},
                   grids={t: states for t in range(length)},
                   cpts={t: (transition if t else initial) for t in range(length)})

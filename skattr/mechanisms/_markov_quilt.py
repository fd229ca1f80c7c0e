"""The Markov quilt mechanisms: Zhang et al.'s APMQM and Song, Wang and Chaudhuri's."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from skattr._certificate import Assumption, Method
from skattr._release import Certificate
from skattr._secret import SECRETS
from skattr.bayes import MarkovQuilt, ParameterNetwork, QuiltChoice
from skattr.exceptions import (
    InvalidParameterError,
    NotCertifiableError,
    WorkLimitError,
)
from skattr.mechanisms._baselines import (
    _DPBaseline,
    _parts,
    record_sensitivities,
    resolve_bounds,
)
from skattr.mechanisms._chain_quilts import chain_scales
from skattr.mechanisms._registry import register
from skattr.noise import LaplaceNoise, NoiseLaw
from skattr.utils._docstrings import fill_doc
from skattr.utils._param_validation import Interval

__all__ = ["NETWORK_WORK_LIMIT", "AttributePrivateMarkovQuilt",
           "MarkovQuiltMechanism", "chain_quilt_scales"]

#: Work a quilt search over a network (not a chain) may take before it
#: refuses: quilts tried times (T + joint-table entries); about a minute.
NETWORK_WORK_LIMIT = 20_000_000

def _column_nodes(network: ParameterNetwork, columns, reads) -> list:
    """Return the nodes each released column depends on (None: not modelled)."""
    reads = {} if reads is None else reads
    out = []
    for c in columns:
        if c in reads:
            nodes = [reads[c]] if not isinstance(reads[c], (list, tuple, set)) \
                else list(reads[c])
            unknown = [v for v in nodes if v not in network.grids]
            if unknown:
                raise InvalidParameterError(
                    f"reads[{c!r}] names {unknown}, which are not nodes of the "
                    f"network; its nodes are {list(network.nodes)}.")
            out.append(frozenset(nodes))
        else:
            node = network.node_of(c)
            out.append(None if node is None else frozenset([node]))
    return out


@fill_doc()
@register
class AttributePrivateMarkovQuilt(_DPBaseline):
    """Attribute-Private Markov Quilt Mechanism (Zhang et al., Algorithm 2).

    Distributional attribute privacy: hides the parameter phi_i of a
    sensitive attribute's distribution (the share of women a school's
    students are drawn with), when the parameters of a dataset's attributes
    follow a Bayesian network (a :class:`~skattr.bayes.ParameterNetwork`) and
    the columns are independent given the parameters. Attributes far from
    the sensitive one in the network need no noise.

    For each sensitive node i the scale is the least of Delta_A F / epsilon
    and, over the Markov quilts (Q, N, R) of i with max-influence
    e = e_Theta(X_Q | X_i) < epsilon, Delta_{A and N} F / (epsilon - e); the
    release adds Laplace noise of the largest such scale over the sensitive
    nodes on each statistic. Delta_S F is the l1 change of F when the columns
    of the nodes in S change arbitrarily, from declared column bounds: a
    mean changes by high - low, a sum by n (high - low), a count by n and a
    proportion by 1.

    Parameters
    ----------
    query : Query or StackedQuery
        The linear statistics to release (mean, sum, count, proportion).
    secret : Secret or list of Secret
        Names the sensitive attributes: each secret's column must be
        governed by a node of the network (``network.columns``). The
        guarantee covers any two values of that node's parameter on its grid
        (Def. 7 takes the maximum over all of them), so it covers the
        secret's pairs whenever they lie on the grid.
    network : ParameterNetwork
        Theta: the law of the attribute parameters (stated by an expert, or
        fitted with :func:`skattr.bayes.fit_network`); a set of networks
        certifies the worst case over them.
    epsilon : float, default=1.0
        The privacy parameter.
    bounds : dict, sequence of (low, high), (low, high) or None, default=None
        Declared range of each averaged or summed column (never read from
        the data); counts and proportions need none. A release clips each
        record's values to them, so the sensitivities computed from them
        hold whatever the data (``"reference"`` is refused: no Theta is fit
        on reference data).
    reads : dict column -> node or list of nodes, optional
        For a released column derived from several attributes (say a 0/1
        column "tall and SAT > 1300"), the nodes whose columns it is computed
        from. A released column that no node governs and ``reads`` does not
        name is counted as near every sensitive node (always noised), which
        is sound whatever its dependence.
    max_quilt_size : int or None, default=None
        Search quilts of at most this many nodes (fewer candidates, possibly
        more noise, never less privacy). None searches every quilt (exact;
        the search prunes by the monotonicity of the max-influence).
    %(secure)s
    random_state : None, int or numpy Generator, default=None
        None draws noise from the operating system's entropy; a seed is for
        reproducible experiments only.

    Attributes
    ----------
    %(query_attributes)s
    secrets_ : tuple of Secret
        The secrets.
    sensitive_nodes_ : tuple
        The network nodes of the secrets.
    column_nodes_ : list
        For each released statistic, the nodes its column depends on (None
        when no node governs it: counted as near).
    theta_ : tuple
        The network.
    %(input_attributes)s

    Notes
    -----
    Theorem 3 of Zhang et al.: the mechanism is (epsilon, 0)-distributional
    attribute private; the proof conditions on the parameters and columns of
    R and Q, so that F moves by at most Delta_{A and N} F (noise factor
    exp(epsilon - e)) and the parameters of Q move the rest by exp(e).
    Theorem 4 states the accuracy with log(1 / (2 beta)), the one-sided
    Laplace tail; the release's ``alpha(beta)`` is the two-sided bound
    b log(1 / beta) for one statistic (the l1 norm's Gamma tail for several),
    which is what ``|noise| <= alpha`` needs.

    References
    ----------
    .. [1]
       %(zhang_ohrimenko_cummings)s
       Section 5, Algorithm 2, Theorems 3-4, Example 1.

    Examples
    --------
    >>> import skattr
    >>> from skattr.datasets import make_schools, schools_network
    >>> schools = make_schools(1, 200, random_state=0)
    >>> net = schools_network()
    >>> secret = skattr.Secret.mean("income", pairs=[(40_000, 80_000)])
    >>> mech = skattr.mechanisms.AttributePrivateMarkovQuilt(
    ...     query=skattr.Query.count("height", lambda h: h > 66), secret=secret,
    ...     network=net, epsilon=1.0, random_state=0).fit(schools)
    >>> mech.plan(schools).noise_scale      # a quilt leaves height remote
    0.0
    """

    # Laplace noise and declared bounds, as the DP baselines; the secret is
    # required (it names the sensitive node).
    _parameter_constraints = {
        **_DPBaseline._parameter_constraints,
        "secret": [SECRETS],
        "network": [ParameterNetwork, None],
        "reads": [dict, None],
        "max_quilt_size": [Interval("integral", 0, None, closed="left"), None],
    }

    mechanism_name = "markov-quilt"
    noise = "laplace"
    #: Distributional attribute privacy: ``"auto"`` considers it, when a
    #: network is given. The network is Theta, so ``fit`` (the baselines')
    #: reads only the columns of its data and releases check the bounds.
    auto_candidate = True
    auto_requires = ("network",)

    def __init__(self, *, query=None, secret=None, network=None, epsilon=1.0,
                 bounds=None, reads=None, max_quilt_size=None, secure=False,
                 random_state=None):
        self.query = query
        self.secret = secret
        self.network = network
        self.epsilon = epsilon
        self.bounds = bounds
        self.reads = reads
        self.max_quilt_size = max_quilt_size
        self.secure = secure
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        # Checked with the parameters, before the bounds: nothing certifies
        # without Theta.
        if self.network is None:
            raise InvalidParameterError(
                "mechanism='markov-quilt' needs network=<a ParameterNetwork>: "
                "the Bayesian network of the attribute parameters (Theta), "
                "stated by an expert or fitted with skattr.bayes.fit_network.")

    def _fit_theta(self, frame: pd.DataFrame, secrets) -> None:
        super()._fit_theta(frame, secrets)
        network = self.network
        if not self.query_.is_linear:
            raise InvalidParameterError(
                "AttributePrivateMarkovQuilt releases linear statistics (mean, "
                "sum, count, proportion); derive a 0/1 column for a predicate "
                "over several attributes and name them in reads=.")
        self.sensitive_nodes_ = tuple(dict.fromkeys(
            network.secret_node(s.column) for s in secrets))
        resolve_bounds(self.bounds, self.query_, known=frame.columns)
        self.column_nodes_ = _column_nodes(
            network, [c for p in _parts(self.query_) for c in p.columns],
            self.reads)
        self.theta_ = (network,)

    def _theta_description(self) -> str:
        net = self.theta_[0]
        many = (f", worst case over {len(net.members)} networks"
                if len(net.members) > 1 else "")
        return (f"Bayesian network of the attribute parameters "
                f"({len(net.nodes)} nodes{many})")

    def column_sensitivities(self, n: int) -> np.ndarray:
        """Delta of each statistic when its columns change in every record.

        n times the change one record makes: a mean's high - low, a sum's
        n (high - low), a count's n, a proportion's 1.
        """
        return n * record_sensitivities(self.query_, n, self.bounds)

    def quilt_choices(self, n: int) -> dict:
        """Return the quilt Algorithm 2 chooses for each sensitive node (n records).

        Returns
        -------
        dict
            Sensitive node -> :class:`~skattr.bayes.QuiltChoice`: the quilt,
            its max-influence, the queried nodes it leaves near and the
            Laplace scale it needs (the trivial quilt's Delta_A F / epsilon
            when no quilt does better).
        """
        check_is_fitted(self)
        network = self.theta_[0]
        per_stat = self.column_sensitivities(n)
        always = sum(d for d, nodes in zip(per_stat, self.column_nodes_, strict=True)
                     if nodes is None)
        targets = frozenset().union(*(v for v in self.column_nodes_ if v))

        def delta_of(near) -> float:
            # Delta_{A and N} F: the statistics reading a node left near.
            return float(always + sum(
                d for d, nodes in zip(per_stat, self.column_nodes_, strict=True)
                if nodes is not None and nodes & near))

        eps = float(self.epsilon)
        choices = {}
        for node in self.sensitive_nodes_:
            covers = network.least_influence_covers(
                node, targets, epsilon=eps, max_size=self.max_quilt_size)
            # Algorithm 2 starts from Delta_A F / epsilon.
            full = delta_of(targets | {node})
            best = QuiltChoice(
                MarkovQuilt(node, frozenset(), frozenset(network.nodes),
                            frozenset()), 0.0, targets, full / eps)
            for near, (e, quilt) in covers.items():
                near = near | ({node} & targets)
                scale = delta_of(near) / (eps - e)
                if scale < best.scale:
                    best = QuiltChoice(quilt, e, near, scale)
            choices[node] = best
        return choices

    def plot_quilt(self, n, *, node=None, ax=None):
        """Draw the network with the quilt chosen for a sensitive node.

        Needs matplotlib (``pip install 'skattr[plot]'``).

        Parameters
        ----------
        n : int or DataFrame
            The number of records released on (or the data itself).
        node : network node, optional
            The sensitive node; the first secret's by default.
        ax : matplotlib Axes, optional
            Where to draw.

        Returns
        -------
        matplotlib.axes.Axes
        """
        check_is_fitted(self)
        n = len(n) if isinstance(n, pd.DataFrame) else n
        node = self.sensitive_nodes_[0] if node is None else node
        if node not in self.sensitive_nodes_:
            raise InvalidParameterError(
                f"{node!r} is not a sensitive node of this mechanism; its "
                f"sensitive nodes are {list(self.sensitive_nodes_)}.")
        choice = self.quilt_choices(n)[node]
        targets = frozenset().union(*(v for v in self.column_nodes_ if v))
        q = ", ".join(map(str, sorted(choice.quilt.quilt, key=str)))
        return self.theta_[0].plot(
            quilt=choice.quilt, targets=targets, ax=ax,
            title=(f"Q = {{{q}}}, e = {choice.influence:.3g} nats, "
                   f"Laplace scale {choice.scale:.3g}"))

    def _plan(self, n: int) -> tuple[NoiseLaw, Certificate]:
        choices = self.quilt_choices(n)
        per_stat = self.column_sensitivities(n)
        eps = float(self.epsilon)
        worst = max(choices.values(), key=lambda c: c.scale)
        k = len(per_stat)
        # Per sensitive node: its quilt, max-influence and the queried nodes
        # left near it, as the method names them.
        quilts = tuple(
            (f"{node}", tuple(map(str, sorted(c.quilt.quilt, key=str))),
             c.influence, tuple(sorted(map(str, c.near_targets))))
            for node, c in choices.items())
        cert = Certificate(
            epsilon=eps, delta=0.0,
            sensitivity=float(worst.scale * (eps - worst.influence)),
            certified_by=Method.of("quilt.zhang", scale=worst.scale,
                                   quilts=quilts),
            assumed=(
                Assumption.of("network.parameters"),
                Assumption.of("network.secret-parameter"),
                Assumption.of("quilt.declared-bounds")
                if any(p.kind.linear and not p.kind.counts
                       for p in _parts(self.query_)) else
                Assumption.of("quilt.zero-one")),
            guarantee="distributional attribute privacy",
            calibration="laplace",
        )
        return LaplaceNoise.on_each(worst.scale, k), cert


def _amount(x) -> str:
    """Return a count in words a reader can take in (``"about 10^42"``)."""
    if x < 10**15:
        return f"{x:,.0f}"
    if x == math.inf:
        return "more than 10^300"
    return f"10^{math.floor(math.log10(x))}"     # log10 takes any int


def chain_quilt_scales(network: ParameterNetwork, epsilon: float, *,
                       work_limit: int | None = None) -> np.ndarray:
    """Song, Wang and Chaudhuri's b_i = min over quilts ``|N| / (eps - e)`` on a chain.

    The network's nodes, in order, are the chain's entries; the largest b_i
    over its networks (``network.members``) for each entry. The search is
    :func:`skattr.mechanisms._chain_quilts.chain_scales`.

    Returns
    -------
    ndarray of shape (T,)
        b_i for each entry (at most T / epsilon, the trivial quilt's:
        ``|N| = T``).
    """
    T = len(network.nodes)
    order = network.nodes
    worst = np.zeros(T)
    for cpts in network.members:
        kernels = [np.asarray(cpts[order[t]], dtype=np.float64)
                   for t in range(1, T)]
        worst = np.maximum(worst, chain_scales(
            np.asarray(cpts[order[0]], dtype=np.float64), kernels, T, epsilon,
            work_limit=work_limit))
    return worst


@fill_doc()
@register
class MarkovQuiltMechanism(_DPBaseline):
    """Song, Wang and Chaudhuri's Markov Quilt Mechanism (Algorithm 5).

    Pufferfish privacy of each entry of a database whose entries form a
    Bayesian network: the rows of the data are the network's nodes, in the
    order of ``network.nodes`` (the successive states of a Markov chain, or
    one record's attributes written one per row). Each entry's value is
    hidden from an adversary who knows the network. For comparison with
    :class:`AttributePrivateMarkovQuilt`, which hides a parameter of a
    whole column's distribution instead.

    With L the change of F when one entry changes (from the query and the
    declared bounds), the noise is Laplace(L b_max) on each statistic, where
    b_max = max over entries i of min over quilts (Q, N, R) of i with
    variable-max-influence e = e_Theta(Y_Q | Y_i) < epsilon of
    ``|N| / (epsilon - e)`` (Definition 10); the trivial quilt gives T / epsilon.

    Parameters
    ----------
    query : Query or StackedQuery
        Linear statistics of the entries (a mean, sum, count or proportion
        over the rows).
    network : ParameterNetwork or None, default=None
        The law of the entries: one node per row (for a chain,
        :meth:`ParameterNetwork.markov_chain`).
    transition : array-like of shape (k, k) or None, default=None
        Instead of ``network``: the entries are a Markov chain with this
        transition matrix, as long as the data (the states are the row
        values' positions 0 .. k-1; only the law matters here).
    initial : array-like of shape (k,) or None, default=None
        The law of the chain's first entry (default: uniform).
    secret : Secret, list of Secret or None, default=None
        Not needed (every entry is a secret); recorded when given.
    epsilon : float, default=1.0
        The privacy parameter.
    bounds : dict, sequence of (low, high), (low, high) or None, default=None
        Declared range of each averaged or summed column; a release clips
        each record's values to it.
    max_quilt_size : int or None, default=None
        Search quilts of at most this many nodes (a chain needs two, and
        uses its own exact search whatever this says). Fewer nodes is less
        work and never less noise than the full search (the least over fewer
        quilts), still a valid certificate.
    max_work : int or None, default=None
        The most work the quilt search may take before it refuses with
        :class:`~skattr.exceptions.WorkLimitError` (matrix products on a
        chain, joint-table entries on another network; default about a
        minute's work). The search estimates its work first.
    %(secure)s
    random_state : None, int or numpy Generator, default=None
        None draws noise from the operating system's entropy.

    Attributes
    ----------
    %(query_attributes)s
    secrets_ : tuple of Secret
        The recorded secrets (empty when none is given).
    %(input_attributes)s

    Notes
    -----
    F is L-Lipschitz in the Hamming distance between databases, so changing
    the ``|N|`` entries near Y_i moves it by at most ``L |N|``.

    References
    ----------
    .. [1] S. Song, Y. Wang and K. Chaudhuri. "Pufferfish Privacy Mechanisms
       for Correlated Data." SIGMOD 2017. Algorithm 5 and Definition 10 as
       given in the appendix of Zhang et al. (long version).

    Examples
    --------
    >>> import numpy as np, pandas as pd, skattr
    >>> from skattr.bayes import ParameterNetwork
    >>> chain = ParameterNetwork.markov_chain([0.5, 0.5],
    ...                                       [[0.9, 0.1], [0.1, 0.9]], 50)
    >>> states = pd.DataFrame({"active": np.tile([0, 1], 25)})
    >>> mech = skattr.mechanisms.MarkovQuiltMechanism(
    ...     query=skattr.Query.proportion("active"), network=chain,
    ...     epsilon=1.0, random_state=0).fit(states)
    >>> round(mech.plan(states).noise_scale, 4)
    0.6348
    """

    _parameter_constraints = {
        **_DPBaseline._parameter_constraints,
        "network": [ParameterNetwork, None],
        "transition": [list, tuple, np.ndarray, None],
        "initial": [list, tuple, np.ndarray, None],
        "max_quilt_size": [Interval("integral", 0, None, closed="left"), None],
        "max_work": [Interval("integral", 1, None, closed="left"), None],
    }

    mechanism_name = "markov-quilt-swc"
    noise = "laplace"

    def __init__(self, *, query=None, network=None, transition=None,
                 initial=None, secret=None, epsilon=1.0, bounds=None,
                 max_quilt_size=None, max_work=None, secure=False,
                 random_state=None):
        self.query = query
        self.network = network
        self.transition = transition
        self.initial = initial
        self.secret = secret
        self.epsilon = epsilon
        self.bounds = bounds
        self.max_quilt_size = max_quilt_size
        self.max_work = max_work
        self.secure = secure
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        # Checked with the parameters, before any data is read.
        if (self.network is None) == (self.transition is None):
            raise InvalidParameterError(
                "MarkovQuiltMechanism needs the law of the entries: either "
                "network=<a ParameterNetwork> with one node per entry (row), "
                "or transition=<a k x k matrix> for a Markov chain as long as "
                "the data (not both).")
        if self.transition is not None:
            # Validates the chain's matrix and initial law now, not at release
            # (a matrix that is not square is refused by markov_chain).
            ParameterNetwork.markov_chain(*self._chain_law(), 2)

    def _fit_theta(self, frame: pd.DataFrame, secrets) -> None:
        super()._fit_theta(frame, secrets)
        # b_max per (length, epsilon, max_quilt_size), filled by plans.
        self._entry_scales = {}

    def _chain_law(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the initial law and the transition matrix (initial: uniform)."""
        transition = np.asarray(self.transition, dtype=np.float64)
        k = transition.shape[0] if transition.ndim == 2 else 0
        initial = (np.full(k, 1.0 / max(k, 1)) if self.initial is None
                   else np.asarray(self.initial, dtype=np.float64))
        return initial, transition

    def _entry_scale(self, network: ParameterNetwork | None, n: int) -> float:
        """b_max of Algorithm 5 for the law of n entries and the epsilon (cached).

        ``network`` is None for a chain given by ``transition``.
        """
        eps = float(self.epsilon)
        cache = self._entry_scales
        T = n if network is None else len(network.nodes)
        key = (id(self.network), T, eps, self.max_quilt_size, self.max_work)
        if key in cache:
            return cache[key]
        if network is None:
            # A chain given by its transition matrix: searched without
            # building a network of T nodes.
            initial, transition = self._chain_law()
            scale = float(chain_scales(initial, transition, T, eps,
                                       work_limit=self.max_work).max())
        elif (network.is_tree and all(
                network.graph.out_degree(v) <= 1 for v in network.nodes)
                and network.graph.number_of_edges() == T - 1):
            scale = float(chain_quilt_scales(
                network, eps, work_limit=self.max_work).max())
        else:
            self._check_quilt_work(network)
            scale = 0.0
            for node in network.nodes:
                least, influence = T / eps, {}
                for quilt in network.markov_quilts(
                        node, max_size=self.max_quilt_size):
                    e = influence.get(quilt.quilt)
                    if e is None:
                        e = influence[quilt.quilt] = network.max_influence(
                            quilt.quilt, node)
                    if e < eps:
                        least = min(least, len(quilt.nearby) / (eps - e))
                scale = max(scale, least)
        cache[key] = scale
        return scale

    def _check_quilt_work(self, network: ParameterNetwork) -> None:
        """Refuse, before it starts, a quilt search over its work limit.

        Every node's quilts are all subsets of the other nodes up to
        ``max_quilt_size``; each costs a d-separation test (about T) and a
        joint table (the product of its nodes' grid sizes).
        """
        limit = NETWORK_WORK_LIMIT if self.max_work is None else self.max_work
        T = len(network.nodes)
        size = float(np.mean(list(network.sizes.values())))
        members = len(network.members)

        def work(top: int) -> float:
            # inf once it overflows a float (hundreds of nodes): no limit
            # holds it, and the message must not raise OverflowError.
            total = 0.0
            try:
                for q in range(top + 1):
                    total += float(math.comb(T - 1, q)) * (T + size ** (q + 1))
                    if total > 1e300:
                        return math.inf
            except OverflowError:
                return math.inf
            return T * members * total

        top = T - 1 if self.max_quilt_size is None else min(
            int(self.max_quilt_size), T - 1)
        needed = work(top)
        if needed <= limit:
            return
        fits = [q for q in range(top) if work(q) <= limit]
        cheaper = (f"pass max_quilt_size={fits[-1]} (quilts of at most "
                   f"{fits[-1]} nodes: about {work(fits[-1]):,.0f}; the least "
                   "noise over fewer quilts, never less than the full "
                   "search's and still certified), or " if fits else "")
        quilts = T * sum(math.comb(T - 1, q) for q in range(top + 1))
        wait = (f"to wait for it, raise max_work= to {math.ceil(needed)}"
                if math.isfinite(needed) else "no limit holds it")
        raise WorkLimitError(
            f"The quilt search over this network of {T} nodes tries "
            f"{_amount(quilts)} quilts, about {_amount(needed)} units of "
            f"work, more than the limit of {limit:,.0f} (about a minute). To "
            f"make it cheaper, {cheaper}give the chain's transition matrix "
            "if the entries form a chain (transition=...; searched in linear "
            f"time); {wait}.")

    def _plan(self, n: int) -> tuple[NoiseLaw, Certificate]:
        network = self.network
        T = n if network is None else len(network.nodes)
        if n != T:
            raise NotCertifiableError(
                f"The network has {T} entries (nodes) and the data {n} rows; "
                "MarkovQuiltMechanism protects each entry of a database whose "
                "entries are the network's nodes, one per row, in order.")
        lipschitz = float(np.sum(record_sensitivities(self.query_, n,
                                                      self.bounds)))
        b_max = self._entry_scale(network, n)
        scale = lipschitz * b_max
        k = len(self.query_.names(self.columns_))
        if not math.isfinite(scale):
            raise NotCertifiableError("No quilt certifies this epsilon.")
        return LaplaceNoise.on_each(scale, k), Certificate(
            epsilon=float(self.epsilon), delta=0.0,
            sensitivity=lipschitz,
            certified_by=Method.of("quilt.swc", lipschitz=lipschitz,
                                   b_max=b_max),
            assumed=(Assumption.of("network.entries"),
                     Assumption.of("quilt.declared-bounds")),
            guarantee="Pufferfish privacy of each entry",
            calibration="laplace",
        )


"""A parameter network as Theta of the Wasserstein mechanisms: exact count laws."""

from __future__ import annotations

import numpy as np
from scipy import stats

from skattr._certificate import Assumption
from skattr._persistence import persistable
from skattr.bayes._network import ParameterNetwork
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws import NetworkLaw

__all__ = ["NetworkTheta"]

# A secret's pair value matches a grid value within this relative tolerance.
_GRID_RTOL = 1e-12


@persistable
class NetworkTheta:
    """Theta of distributional attribute privacy from a parameter network.

    The law of a count over n records when the attribute parameters follow
    ``network`` and, given them, each record is counted independently with
    probability ``counted[...]``, a function of the parameters of the nodes
    ``reads`` (the model of Zhang et al., Sec. 5). Given the secret node's
    parameter phi_i = a, the count is a mixture of binomials Bin(n, p_c)
    with weights P(phi_reads = c | phi_i = a), computed exactly by variable
    elimination; a set of networks gives one law per network. Pass it as
    ``theta=`` to :class:`~skattr.mechanisms.WassersteinMechanism` or
    :class:`~skattr.mechanisms.ApproximateWassersteinMechanism` with
    ``privacy="distributional"`` to compare with the Markov quilt mechanism
    under the same Theta.

    Parameters
    ----------
    network : ParameterNetwork
        The law of the attribute parameters; its ``columns`` map the secret's
        column to its node.
    reads : node or list of nodes
        The nodes whose parameters the counted records' law depends on.
    counted : array-like
        P(a record is counted | phi_reads), one axis per node of ``reads``
        (in that order) over its grid. A predicate on columns that are
        independent given the parameters multiplies their probabilities.

    Examples
    --------
    >>> from skattr.bayes import NetworkTheta, ParameterNetwork
    >>> net = ParameterNetwork(
    ...     parents={"income": [], "sat": ["income"]},
    ...     grids={"income": [0.3, 0.7], "sat": [1000, 1300]},
    ...     cpts={"income": [0.5, 0.5], "sat": [[0.8, 0.2], [0.4, 0.6]]})
    >>> theta = NetworkTheta(net, reads="sat", counted=[0.1, 0.5])
    >>> support, (law,) = theta.count_laws("income", 0.7, n=2)
    >>> # 0.4 Bin(2, 0.1) + 0.6 Bin(2, 0.5)
    >>> support.tolist(), [round(float(p), 4) for p in law]
    ([0, 1, 2], [0.474, 0.372, 0.154])
    """

    #: Theta protocol (:class:`~skattr.theta.ThetaSpec`, answered without
    #: deriving from it: skattr.bayes does not import skattr.theta). The laws
    #: come from the network alone: no reference rows are read, and the
    #: accessor needs no ``reference=`` with this Theta.
    law_kinds = ("network",)
    reads_reference = False
    states_law = False
    band_confidence = None
    resampling = None

    def fit_law(self, request) -> NetworkLaw:
        """Return the count laws given each secret node's parameter.

        One count or proportion, under distributional privacy (the secret is
        a parameter of the network); each secret's column names its node.
        """
        query = request.query
        if "network" not in request.kinds:
            request.refuse("NetworkTheta(...)", "count laws under a network")
        if not request.counting():
            raise InvalidParameterError(
                "theta=NetworkTheta(...) gives the law of one count or "
                "proportion; release one such statistic.")
        if request.privacy != "distributional":
            raise InvalidParameterError(
                "theta=NetworkTheta(...) states the law of the attribute "
                "parameters, so the secret is a parameter: use "
                "privacy='distributional'.")
        net = self.network
        many = (f", worst case over {len(net.members)} networks"
                if len(net.members) > 1 else "")
        return NetworkLaw(
            theta=self, secrets=tuple(request.secrets), query=query,
            nodes=tuple(net.secret_node(s.column) for s in request.secrets),
            assumptions=tuple(self.assumptions),
            description=(f"Bayesian network of the attribute parameters "
                         f"({len(net.nodes)} nodes{many}), records counted "
                         f"given {list(self.reads)}"))

    def __init__(self, network, *, reads, counted):
        if not isinstance(network, ParameterNetwork):
            raise InvalidParameterError(
                "NetworkTheta needs a skattr.bayes.ParameterNetwork; got "
                f"{type(network).__name__}.")
        reads = tuple(reads) if isinstance(reads, (list, tuple)) else (reads,)
        if not reads or len(set(reads)) != len(reads):
            raise InvalidParameterError(
                "reads must name one or more distinct nodes of the network.")
        for v in reads:
            network._check_node(v)
        shape = tuple(network.sizes[v] for v in reads)
        try:
            counted = np.array(counted, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                "counted must be an array of probabilities.") from exc
        if counted.shape != shape:
            raise InvalidParameterError(
                f"counted has shape {counted.shape}; with reads={list(reads)} it "
                f"must be {shape}: one axis per node over its grid.")
        if not np.isfinite(counted).all() or (counted < 0).any() \
                or (counted > 1).any():
            raise InvalidParameterError(
                "counted holds a value outside [0, 1]; each entry is the "
                "probability that one record is counted.")
        counted.flags.writeable = False
        self.network = network
        self.reads = reads
        self.counted = counted

    def __repr__(self) -> str:
        return (f"NetworkTheta({self.network!r}, reads={list(self.reads)}, "
                f"counted shape {self.counted.shape})")

    @property
    def assumptions(self) -> tuple:
        """What the laws take for granted (recorded on the release)."""
        return (Assumption.of("network.counted", reads=tuple(self.reads)),)

    def grid_index(self, node, value) -> int:
        """Return the index of ``value`` on ``node``'s grid, or raise."""
        grid = self.network.grids[node]
        hit = np.flatnonzero(np.isclose(grid.astype(np.float64), float(value),
                                        rtol=_GRID_RTOL, atol=0.0))
        if hit.size != 1:
            raise NotCertifiableError(
                f"The secret's value {value:g} is not on the grid of node "
                f"{node!r} ({grid.tolist()}); a network's guarantee covers its "
                "grid values only. State pairs on the grid.")
        return int(hit[0])

    def count_laws(self, node, value, n: int) -> tuple[np.ndarray, list]:
        """Return the support 0..n and, per network, the count's law given phi_node.

        Raises
        ------
        NotCertifiableError
            ``value`` is off the grid, or has probability zero under a
            network (nothing conditions on it).
        """
        self.network._check_node(node)
        i = self.grid_index(node, value)
        others = [v for v in self.reads if v != node]
        support = np.arange(n + 1)
        laws = []
        for m in range(len(self.network.members)):
            joint = self.network.joint([node, *others], m)[i]
            total = joint.sum()
            if not total > 0:
                raise NotCertifiableError(
                    f"phi_{node} = {value:g} has probability zero under the "
                    "network; drop it from the secret's pairs.")
            # The conditional's axes follow `others`, the reads without the
            # node, as do counted's once the node's own axis is fixed.
            counted = self.counted
            if node in self.reads:
                counted = np.take(counted, i, axis=self.reads.index(node))
            p = np.atleast_1d(counted).ravel()
            w = np.atleast_1d(joint / total).ravel()
            # Mixture of binomials, one per distinct probability.
            values, inverse = np.unique(p, return_inverse=True)
            mass = np.bincount(inverse, weights=w, minlength=values.size)
            pmf = mass @ stats.binom.pmf(support[None, :], n, values[:, None])
            laws.append(pmf / pmf.sum())
        return support, laws

"""Exact count laws under a parameter network (distributional attribute privacy).

Given the secret node's parameter, the count of n records is a mixture of
binomials over the network's other parameters
(:meth:`skattr.bayes.NetworkTheta.count_laws`, by variable elimination);
:class:`NetworkLaw` compares those laws across every pair and network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from skattr._certificate import MethodStep
from skattr._persistence import persistable
from skattr.laws._base import Bound, StatisticLaw, secret_pairs
from skattr.wasserstein import w_infinity, wd_closeness

__all__ = ["NetworkLaw"]

#: The laws the W bounds read.
_NETWORK_COUNTS = MethodStep.of("laws.network")


@persistable
@dataclass(frozen=True, eq=False)
class NetworkLaw(StatisticLaw):
    """The law of a count given the secret node's parameter, under a network.

    Attributes
    ----------
    theta : NetworkTheta
        The network, the nodes the counted records read and the counting
        probabilities (``count_laws``).
    nodes : tuple
        Per secret, its node of the network.
    secrets : tuple of Secret
    query : Query
        The released count or proportion.
    """

    kind: ClassVar[str] = "network"

    theta: object
    nodes: tuple
    secrets: tuple
    query: object
    description: str = ""
    assumptions: tuple = ()
    reads_reference: bool = False
    states_law: bool = False
    reference_sizes: tuple | None = None
    source: object = field(default=None, repr=False, compare=False)

    def _laws(self, n: int, privacy: str):
        """Yield (support, law | a, law | b) for every pair and network."""
        for s, node in zip(self.secrets, self.nodes, strict=True):
            for a, b in secret_pairs(s, n, privacy):
                support, given_a = self.theta.count_laws(node, a, n)
                _, given_b = self.theta.count_laws(node, b, n)
                for pa, pb in zip(given_a, given_b, strict=True):
                    yield support, pa, pb

    def w_infinity(self, n: int, privacy: str) -> Bound:
        worst = max(w_infinity(x, x, pa, pb) for x, pa, pb in self._laws(n, privacy))
        return Bound(worst * self.query.weight(n),
                     MethodStep.of("w-inf.largest", laws=_NETWORK_COUNTS),
                     tuple(self.theta.assumptions))

    def closeness(self, n: int, privacy: str, delta: float, *,
                  progress=False, label: str = "") -> Bound:
        worst = max(wd_closeness(x, x, delta, pa, pb)
                    for x, pa, pb in self._laws(n, privacy))
        return Bound(worst * self.query.weight(n),
                     MethodStep.of("closeness.exact", laws=_NETWORK_COUNTS),
                     tuple(self.theta.assumptions))

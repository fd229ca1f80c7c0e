"""Quilt search and max-influence: a 1,000-node tree and a 20-node general DAG.

Targets: under 2 s on the tree, under 10 s on the DAG, for the
search Algorithm 2 runs (``least_influence_covers``) plus a max-influence.
The baseline, run in the same process, is one pass over every CPT of the
network (a sum of each table): the least any exact inference must touch.
Run: ``python benchmarks/bench_markov_quilt.py``.
"""

import numpy as np
from _timing import best_times

from skattr.bayes import ParameterNetwork


def random_network(m, grid, rng, tree):
    parents = {}
    for v in range(m):
        if tree:
            parents[v] = [int(rng.integers(v))] if v else []
        else:
            parents[v] = [u for u in range(max(0, v - 6), v)
                          if rng.random() < 0.35][:3]
    return ParameterNetwork(
        parents=parents, grids={v: np.arange(grid) for v in range(m)},
        cpts={v: rng.dirichlet(np.ones(grid) * 2,
                               size=tuple(grid for _ in parents[v]))
              for v in range(m)})


def main():
    rng = np.random.default_rng(0)
    cases = {
        "tree, 1000 nodes": (random_network(1000, 3, rng, tree=True), 500,
                             [3, 250, 720, 999]),
        "DAG, 20 nodes": (random_network(20, 3, rng, tree=False), 4,
                          [11, 17, 19]),
    }
    for name, (net, node, targets) in cases.items():
        def search(net=net, node=node, targets=targets):
            net.least_influence_covers(node, targets, epsilon=1.0)
            net.max_influence(targets, node)

        def baseline(net=net):
            sum(float(t.sum()) for t in net.members[0].values())
        times = best_times({"search": search, "baseline": baseline}, repeats=3)
        print(f"{name}: quilt search + max-influence {times['search']:.3f} s "
              f"({times['search'] / times['baseline']:.0f}x one pass over "
              f"the CPTs, {times['baseline'] * 1e3:.2f} ms)")


if __name__ == "__main__":
    main()

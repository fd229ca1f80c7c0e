"""Draw a parameter network with a Markov quilt: the node, Q, N and R."""

from __future__ import annotations

import networkx as nx

from skattr.exceptions import MissingDependencyError

__all__ = ["plot_network"]

# Role -> (face colour, legend label), in legend order.
_ROLES = {
    "node": ("#d62728", "sensitive node"),
    "quilt": ("#ff7f0e", "quilt Q"),
    "nearby": ("#ffd966", "nearby N"),
    "remote": ("#b6d7a8", "remote R (no noise)"),
    "plain": ("#dddddd", "node"),
}


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingDependencyError(
            "Plotting needs matplotlib: pip install 'skattr[plot]'.") from exc
    return plt


def plot_network(network, *, quilt=None, targets=(), ax=None, title=None):
    """Draw ``network`` top-down, colouring a Markov quilt's parts.

    See :meth:`skattr.bayes.ParameterNetwork.plot`.
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    graph = network.graph.copy()
    for depth, layer in enumerate(nx.topological_generations(graph)):
        for v in layer:
            graph.nodes[v]["layer"] = depth
    pos = nx.multipartite_layout(graph, subset_key="layer", align="horizontal")
    # Parents above their children.
    pos = {v: (x, -y) for v, (x, y) in pos.items()}
    role = dict.fromkeys(network.nodes, "plain")
    if quilt is not None:
        role.update(dict.fromkeys(quilt.remote, "remote"))
        role.update(dict.fromkeys(quilt.nearby, "nearby"))
        role.update(dict.fromkeys(quilt.quilt, "quilt"))
        role[quilt.node] = "node"
    targets = set(targets)
    nodes = list(network.nodes)
    nx.draw_networkx_edges(graph, pos, ax=ax, arrows=True, arrowsize=14,
                           node_size=1800, edge_color="#555555")
    nx.draw_networkx_nodes(
        graph, pos, nodelist=nodes, ax=ax, node_size=1800,
        node_color=[_ROLES[role[v]][0] for v in nodes],
        edgecolors=["black" if v in targets else "#777777" for v in nodes],
        linewidths=[3.0 if v in targets else 1.0 for v in nodes])
    nx.draw_networkx_labels(graph, pos, ax=ax, font_size=9)
    from matplotlib.lines import Line2D

    shown = [r for r in _ROLES if r in role.values()]
    handles = [Line2D([], [], marker="o", linestyle="", markersize=11,
                      markerfacecolor=_ROLES[r][0], markeredgecolor="#777777",
                      label=_ROLES[r][1]) for r in shown]
    if targets:
        handles.append(Line2D([], [], marker="o", linestyle="", markersize=11,
                              markerfacecolor="white", markeredgecolor="black",
                              markeredgewidth=3, label="queried"))
    ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5),
              frameon=False)
    if title is not None:
        ax.set_title(title)
    ax.margins(0.15)
    ax.set_axis_off()
    return ax

"""The fabric picture draws every cable once, coloured and sized by the simulated utilisation."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import LineCollection

from nvcourse.fabric import fat_tree, simulate
from nvcourse.fabric.collectives import node_order, ring_flows
from nvcourse.fabric.draw import cable_utilisation, draw_fabric


def _draw(nodes=64, oversubscription=2.0, routing="ecmp"):  # 2 leaves per rail: traffic crosses spines
    fab = fat_tree(nodes, rails=8, port_GBps_dir=50.0, oversubscription=oversubscription)
    sim = simulate(fab, *ring_flows(fab, node_order(fab, "random", seed=3)), routing=routing, seed=3)
    fig, ax = plt.subplots()
    draw_fabric(fab, ax, sim, hottest=8)
    return fab, sim, fig, ax


def test_every_cable_drawn_once_in_its_utilisation_level():
    fab, sim, fig, ax = _draw()
    util = cable_utilisation(sim)[3]
    levels = [c for c in ax.collections if isinstance(c, LineCollection) and c.get_zorder() == 1]
    assert sum(len(c.get_segments()) for c in levels) == len(util)  # each cable once, no cable lost
    # one colour and one width per level; busier levels are wider and more opaque
    busy = [c for c in levels if c.get_linewidth()[0] > 0.25]
    widths = [float(c.get_linewidth()[0]) for c in busy]
    alphas = [float(c.get_edgecolor()[0][3]) for c in busy]
    assert widths == sorted(widths) and alphas == sorted(alphas) and len(set(widths)) == len(busy)
    # the widest level holds exactly the cables at the highest utilisation (to the 5 % step)
    top_level = 1 + np.round(20 * np.clip(util, 0, 1))
    assert len(busy[-1].get_segments()) == int(np.sum(top_level == top_level.max()))
    plt.close(fig)


def test_hottest_switch_cables_are_drawn_on_top():
    fab, sim, fig, ax = _draw()
    hot = [c for c in ax.collections if isinstance(c, LineCollection) and c.get_zorder() == 3]
    assert len(hot) == 1 and 1 <= len(hot[0].get_segments()) <= 8
    # none of them is a host cable (host cables sit between rows 0 and 1), and the busiest switch cable is one
    assert all(min(seg[0][1], seg[1][1]) >= 1 for seg in hot[0].get_segments())
    tier, _a, _b, util, _flows = cable_utilisation(sim)
    assert util[tier > 0].max() > 0
    levels = [c for c in ax.collections if isinstance(c, LineCollection) and c.get_zorder() == 1]
    top_switch = {tuple(map(tuple, s)) for c in levels[-1:] for s in c.get_segments()}
    assert top_switch & {tuple(map(tuple, s)) for s in hot[0].get_segments()}
    plt.close(fig)

"""The fabric picture draws every cable once, coloured and sized by the simulated utilisation."""
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import LineCollection, PathCollection

from nvcourse.fabric import fat_tree, simulate
from nvcourse.fabric.collectives import node_order, ring_flows
from nvcourse.fabric.draw import _X_MIN, cable_segments, cable_utilisation, draw_fabric


def _draw(nodes=64, oversubscription=2.0, routing="ecmp"):  # 2 leaves per rail: traffic crosses spines
    fab = fat_tree(nodes, rails=8, port_GBps_dir=50.0, oversubscription=oversubscription)
    sim = simulate(fab, *ring_flows(fab, node_order(fab, "random", seed=3)), routing=routing, seed=3)
    fig, ax = plt.subplots()
    draw_fabric(fab, ax, sim, hottest=8, merge_px=0)  # exact: only parallel cables share a line
    return fab, sim, fig, ax


def _levels(ax):
    return [c for c in ax.collections if isinstance(c, PathCollection) and c.get_zorder() == 1]


def _bundles(sim):
    """Distinct cable positions (tier, lower end, upper end) -> the busiest utilisation among their cables."""
    tier, a, b, util, _ = cable_utilisation(sim)
    out = {}
    for key, u in zip(zip(tier.tolist(), a.tolist(), b.tolist()), util.tolist()):
        out[key] = max(u, out.get(key, 0.0))
    return out


def test_every_cable_drawn_once_in_its_utilisation_level():
    fab, sim, fig, ax = _draw()
    bundles = _bundles(sim)
    util = np.array(list(bundles.values()))
    levels = _levels(ax)
    segs = np.concatenate([cable_segments(c) for c in levels])
    assert len(segs) == len(bundles)  # each cable position once (parallel cables share one line), none lost
    assert len({tuple(s.ravel()) for s in segs}) == len(segs)
    # one colour and one width per level; busier levels are wider and more opaque
    busy = [c for c in levels if c.get_linewidth()[0] > 0.25]
    widths = [float(c.get_linewidth()[0]) for c in busy]
    alphas = [float(c.get_edgecolor()[0][3]) for c in busy]
    assert widths == sorted(widths) and alphas == sorted(alphas) and len(set(widths)) == len(busy)
    # the widest level holds exactly the cables at the highest utilisation (to the 5 % step)
    top_level = 1 + np.round(20 * np.clip(util, 0, 1))
    assert len(cable_segments(busy[-1])) == int(np.sum(top_level == top_level.max()))
    plt.close(fig)


def test_hottest_switch_cables_are_drawn_on_top():
    fab, sim, fig, ax = _draw()
    hot = [c for c in ax.collections if isinstance(c, LineCollection) and c.get_zorder() == 3]
    assert len(hot) == 1 and 1 <= len(hot[0].get_segments()) <= 8
    # none of them is a host cable (host cables sit between rows 0 and 1), and the busiest switch cable is one
    assert all(min(seg[0][1], seg[1][1]) >= 1 for seg in hot[0].get_segments())
    tier, _a, _b, util, _flows = cable_utilisation(sim)
    assert util[tier > 0].max() > 0
    levels = _levels(ax)
    top_switch = {tuple(map(tuple, s)) for c in levels[-1:] for s in cable_segments(c)}
    assert top_switch & {tuple(map(tuple, s)) for s in hot[0].get_segments()}
    plt.close(fig)


def test_parallel_cables_are_one_line_with_the_busiest_ones_load():
    from nvcourse.fabric.draw import _distinct_cables

    tier, a, b, util, flows = (
        np.array(x) for x in ([1, 1, 1, 0], [0, 0, 1, 0], [2, 2, 2, 0], [0.3, 0.9, 0.5, 1.0], [1, 3, 2, 1])
    )
    out = {(t, x, y): (u, f) for t, x, y, u, f in zip(*(v.tolist() for v in _distinct_cables(tier, a, b, util, flows)))}
    assert out == {(1, 0, 2): (0.9, 3), (1, 1, 2): (0.5, 2), (0, 0, 0): (1.0, 1)}


def test_a_fabric_with_parallel_cables_draws_each_bundle_once():
    # 128 nodes, 1:1: 1024 leaf-spine cables over 512 leaf-spine pairs (two cables each)
    fab = fat_tree(128, rails=8, port_GBps_dir=50.0)
    sim = simulate(fab, *ring_flows(fab, node_order(fab, "random", seed=1)), routing="ecmp", seed=1)
    tier = cable_utilisation(sim)[0]
    fig, ax = plt.subplots()
    draw_fabric(fab, ax, sim, merge_px=0)
    segs = np.concatenate([cable_segments(c) for c in _levels(ax)])
    assert np.sum(tier == 1) == 1024 and len(segs) == np.sum(tier == 0) + 512
    plt.close(fig)


def test_dense_tiers_merge_cables_within_a_few_pixels_keeping_the_busiest():
    """512 nodes in the chapter-06 figure: hosts ~1.5 px apart. Every cable is stood for by a drawn line of its
    tier whose ends lie within merge_px of its own, at a utilisation level at least its own."""
    fab = fat_tree(512, rails=8, port_GBps_dir=50.0)
    sim = simulate(fab, *ring_flows(fab, node_order(fab, "random", seed=1)), routing="ecmp", seed=1)
    tier, a, b, util, _ = cable_utilisation(sim)
    fig, ax = plt.subplots(figsize=(10.0, 4.4))
    assert draw_fabric(fab, ax, sim, merge_px=4.0, max_switch_lines=None) == 4.0
    px_per_x = ax.get_position().width * 10.0 * fig.dpi / (1.0 - _X_MIN)  # x runs from _X_MIN to 1
    drawn = []  # (tier, x_low, x_high, line width: grows with the utilisation level)
    for c in _levels(ax):
        for seg in cable_segments(c):
            drawn.append((round(min(seg[0][1], seg[1][1])), seg[0][0], seg[1][0], float(c.get_linewidth()[0])))
    drawn = np.array(drawn)
    assert 4096 + 4096 < len(tier) and len(drawn) < 0.6 * len(tier)  # far fewer lines than 12,288 cables
    counts = np.array([fab.nodes, fab.n_leaves, fab.n_spines, fab.n_cores], dtype=float)
    x0, x1 = (a + 0.5) / counts[tier], (b + 0.5) / counts[tier + 1]
    width = np.where(util > 0, 0.4 + np.round(20 * np.clip(util, 0, 1)) / 20, 0.25)  # draw_fabric's widths
    for k in np.random.default_rng(0).choice(len(tier), 400, replace=False):
        same = drawn[drawn[:, 0] == tier[k]]
        near = same[(np.abs(same[:, 1] - x0[k]) * px_per_x < 4.0) & (np.abs(same[:, 2] - x1[k]) * px_per_x < 4.0)]
        assert len(near) and near[:, 3].max() >= width[k] - 1e-9
    plt.close(fig)


def test_line_budget_widens_the_switch_tiers_only_as_far_as_needed():
    """Same 512-node picture with the default budget: at most 1,500 lines between switches, their columns at most
    four times as wide, host cables still merged at 4 px only; every cable stood for by a line of its tier within
    its tier's column width at a level at least its own."""
    fab = fat_tree(512, rails=8, port_GBps_dir=50.0)
    sim = simulate(fab, *ring_flows(fab, node_order(fab, "random", seed=1)), routing="ecmp", seed=1)
    tier, a, b, util, _ = cable_utilisation(sim)
    fig, ax = plt.subplots(figsize=(10.0, 4.4))
    used = draw_fabric(fab, ax, sim)
    px_per_x = ax.get_position().width * 10.0 * fig.dpi / (1.0 - _X_MIN)
    drawn = np.array([(round(min(s[0][1], s[1][1])), s[0][0], s[1][0], float(c.get_linewidth()[0]))
                      for c in _levels(ax) for s in cable_segments(c)])
    assert 4.0 < used <= 16.0 and np.count_nonzero(drawn[:, 0] > 0) <= 1500
    hosts_exact = plt.figure(figsize=(10.0, 4.4)).subplots()
    draw_fabric(fab, hosts_exact, sim, max_switch_lines=None)
    exact = np.array([round(min(s[0][1], s[1][1])) for c in _levels(hosts_exact) for s in cable_segments(c)])
    assert np.count_nonzero(drawn[:, 0] == 0) == np.count_nonzero(exact == 0)  # host tier untouched by the budget
    counts = np.array([fab.nodes, fab.n_leaves, fab.n_spines, fab.n_cores], dtype=float)
    x0, x1 = (a + 0.5) / counts[tier], (b + 0.5) / counts[tier + 1]
    width = np.where(util > 0, 0.4 + np.round(20 * np.clip(util, 0, 1)) / 20, 0.25)
    for k in np.random.default_rng(2).choice(len(tier), 400, replace=False):
        same = drawn[drawn[:, 0] == tier[k]]
        w_px = 4.0 if tier[k] == 0 else used
        near = same[(np.abs(same[:, 1] - x0[k]) * px_per_x < w_px) & (np.abs(same[:, 2] - x1[k]) * px_per_x < w_px)]
        assert len(near) and near[:, 3].max() >= width[k] - 1e-9
    plt.close("all")
    # a 64-node fabric is far below the budget: the columns stay at merge_px
    fig, ax = plt.subplots(figsize=(10.0, 4.4))
    assert draw_fabric(fat_tree(64, rails=8, port_GBps_dir=50.0), ax) == 4.0
    plt.close(fig)


def test_dashboard_view_puts_the_fabric_description_in_the_readout_not_on_the_figure():
    import html

    from nvcourse.chapters.ch06_fabrics import allreduce_view

    fig, text = allreduce_view(64, "ib-ndr", 2.0, "ecmp")
    desc = fat_tree(64, rails=8, port_GBps_dir=50.0, oversubscription=2.0).describe()
    assert html.escape(desc) in text and "2:1" in desc
    assert [t.get_text() for t in fig.texts] == [] and fig.axes[0].get_title() == ""


def test_cable_paths_match_paths_built_the_public_way(monkeypatch):
    from matplotlib.path import Path

    from nvcourse.fabric import draw

    segs = np.random.default_rng(0).uniform(0, 1, (11, 2, 2))  # 11 cables: two full paths of 4 and one of 3
    codes = [Path.MOVETO, Path.LINETO] * 4
    refs = [Path(segs[i : i + 4].reshape(-1, 2), codes[: 2 * len(segs[i : i + 4])]) for i in range(0, 11, 4)]
    fast = draw._cable_paths(segs)
    monkeypatch.setattr(draw, "_fast_path", None)  # matplotlib without the private helper: public constructor
    slow = draw._cable_paths(segs)
    for paths in (fast, slow):
        assert len(paths) == len(refs)
        for p, ref in zip(paths, refs):
            assert np.array_equal(p.vertices, ref.vertices) and np.array_equal(p.codes, ref.codes)
            assert p.codes.dtype == ref.codes.dtype and p.should_simplify == ref.should_simplify
            assert p.simplify_threshold == ref.simplify_threshold
        assert np.array_equal(cable_segments(PathCollection(paths)), segs)

"""Chapter 06c — Ethernet & RoCE for AI, and a real multi-node lab on network namespaces.

Everything notebook ``06c_multinode_lab.ipynb`` shows: the sourced facts table, the Llama 3 RoCE case
study, the multi-QP ECMP figure and dashboard (closed form vs seeded simulation), and the lab's
measured-vs-model figure, tables and dashboard (recorded run in ``nvcourse/data/cluster_run.json``,
or a live run as root).
"""

from __future__ import annotations

import html
import statistics

import ipywidgets as w
import numpy as np

from .. import _data
from ..cluster import model as cm
from ..cluster import record
from ..fabric import ecmp_qp
from ..plots import bytes_axis, new_figure, time_axis
from ..tables import table_html
from ..units import format_rate, format_size, format_time
from ..widgets import Dashboard


def _esc(text: str) -> str:
    return html.escape(str(text)).replace("$", "&#36;")


def facts() -> dict:
    """The sourced facts of ``ethernet_ai.toml`` (cached by ``_data.load``: treat it as read-only)."""
    return _data.load("ethernet_ai")


def facts_table(topics: list[str] | None = None) -> str:
    """HTML table: topic, statement, linked sources."""
    d = facts()
    rows = []
    for f in d["facts"]:
        if topics and f["topic"] not in topics:
            continue
        links = ", ".join(f'<a href="{_esc(d["sources"][s]["url"])}" target="_blank">{_esc(s)}</a>' for s in f["src"])
        rows.append([f"<b>{_esc(f['topic'])}</b>", _esc(f["fact"]), links])
    return table_html(["topic", "what to know", "source"], rows)


def llama3_case() -> str:
    """The Llama 3 RoCE fabric in numbers (from the paper), with the counts derived from them."""
    d = facts()
    c, src = d["llama3_roce"], d["sources"]["llama3"]
    racks = c["racks_per_pod"] * c["pods"]
    items = [
        f"{c['gpus_per_rack']} GPUs per rack ({c['servers_per_rack']} servers) under one top-of-rack switch, "
        f"{c['link_Gbps']} Gb/s per GPU",
        f"{c['racks_per_pod']} racks form a pod of {c['gpus_per_pod']:,} GPUs with full bisection bandwidth",
        f"{c['pods']} pods joined by aggregation switches oversubscribed {c['aggregation_oversubscription']} "
        f"({c['pods'] * c['gpus_per_pod']:,} GPUs, {racks:,} racks — derived); pre-training used up to "
        f"{c['pretraining_gpus_max']:,}",
        f"load balancing: {c['flows_per_gpu_pair']} flows between two GPUs, hashed by Enhanced-ECMP on more "
        "RoCE header fields",
        "congestion: deep-buffer spine switches and E-ECMP; no DCQCN",
    ]
    return (f"<b>{_esc(c['name'])}</b><ul>" + "".join(f"<li>{_esc(i)}</li>" for i in items)
            + f"</ul>Source: <a href='{_esc(src['url'])}' target='_blank'>{_esc(src['title'])}</a>")


# -- multi-QP ECMP ----------------------------------------------------------------------------------
def ecmp_qp_rows(connections: int, links: int, qps=(1, 2, 4, 8, 16), *, trials: int = 2000, seed: int = 0):
    """Closed form vs seeded simulation of the step slowdown for each QP count."""
    rows = []
    for q in qps:
        mean, se = ecmp_qp.simulate_slowdown(connections, links, q, trials=trials, seed=seed)
        rows.append({"qps": q, "model": ecmp_qp.expected_slowdown(connections, links, q), "sim": mean, "sim_se": se})
    return rows


def ecmp_qp_figure(connections: int = 32, links: int = 32, qps=(1, 2, 4, 8, 16), *, seed: int = 0):
    """Slowdown vs QPs per connection: exact curve and simulated points (±2 standard errors)."""
    rows = ecmp_qp_rows(connections, links, qps, seed=seed)
    fig, ax = new_figure(7.0, 3.6)
    q = [r["qps"] for r in rows]
    ax.plot(q, [r["model"] for r in rows], "-", color="#1f77b4", label="closed form (balls into bins)")
    ax.errorbar(q, [r["sim"] for r in rows], yerr=[2 * r["sim_se"] for r in rows], fmt="o", color="#d62728",
                label=f"simulation (seed {seed}, 2,000 draws)")
    ax.axhline(1.0, color="#555555", lw=0.8, ls="--", label="perfectly balanced")
    ax.set_xscale("log", base=2)
    ax.set_xticks(q, [str(v) for v in q])
    ax.set_xlabel("queue pairs (flows) per connection")
    ax.set_ylabel("step time / balanced")
    ax.set_title(f"{connections} connections hashed onto {links} uplinks")
    ax.legend(fontsize=8)
    return fig, rows


def ecmp_qp_dashboard() -> Dashboard:
    """Connections, uplinks and QPs per connection -> distribution of the hot link's load and the slowdown."""

    def render(connections: int, links: int, qps: int):
        if connections * qps > 1024:
            raise ValueError(f"connections x QPs must be at most 1024 here; got {connections * qps}")
        fig, ax = new_figure(7.0, 3.4)
        for q, colour in ((1, "#999999"), (qps, "#1f77b4")):
            pmf = ecmp_qp.max_load_pmf(connections * q, links)
            x = np.arange(pmf.size) / q
            keep = pmf > 1e-4
            ax.plot(x[keep], pmf[keep], "o-" if q == qps else "s--", color=colour, ms=3,
                    label=f"{q} QP{'s' if q > 1 else ''} per connection")
        ax.axvline(max(1.0, connections / links), color="#2ca02c", lw=1, label="balanced load")
        ax.set_xlabel("load of the busiest uplink (connections' worth of bytes)")
        ax.set_ylabel("probability")
        ax.legend(fontsize=8)
        s1, sq = ecmp_qp.expected_slowdown(connections, links, 1), ecmp_qp.expected_slowdown(connections, links, qps)
        sim, se = ecmp_qp.simulate_slowdown(connections, links, qps, trials=500, seed=1)
        text = (f"step slowdown vs a balanced fabric: <b>{s1:.2f}×</b> with 1 QP, <b>{sq:.2f}×</b> with {qps} "
                f"(simulated {sim:.2f} ± {2 * se:.2f}). <i>Assumes every sub-flow hashed uniformly and "
                "independently onto the uplinks, equal bytes per connection; adaptive routing or packet spraying "
                "removes the hot link.</i>")
        return fig, text

    return Dashboard({
        "connections": w.SelectionSlider(options=[4, 8, 16, 32, 64], value=32, description="connections"),
        "links": w.SelectionSlider(options=[4, 8, 16, 32, 64], value=32, description="uplinks"),
        "qps": w.SelectionSlider(options=[1, 2, 4, 8, 16], value=4, description="QPs/conn."),
    }, render)


# -- the lab ----------------------------------------------------------------------------------------
def recorded() -> dict:
    """The run kept in ``nvcourse/data/cluster_run.json``."""
    return record.load()


def lab_figure(rec: dict, key: str = "hier"):
    """Measured vs model: time per call (flat ring, hierarchical network phase) and flat bus bandwidth."""
    rows = record.compare_hier(rec, key)
    h = rec[key]
    s = np.array([r["bytes"] for r in rows], dtype=float)
    fig, (a, b) = new_figure(9.0, 3.6, ncols=2)
    a.plot(s, [r["flat_s"] for r in rows], "o", color="#d62728", label="flat ring, measured")
    a.plot(s, [r["flat_model_s"] for r in rows], "-", color="#d62728", alpha=0.6, label="flat ring, model")
    a.plot(s, [r["hier_network_s"] for r in rows], "s", color="#1f77b4", label="hierarchical network phase, measured")
    a.plot(s, [r["hier_network_model_s"] for r in rows], "-", color="#1f77b4", alpha=0.6, label="… model")
    a.plot(s, [r["hier_s"] for r in rows], "^", color="#7f7f7f", label="hierarchical total, measured")
    bytes_axis(a)
    time_axis(a)
    a.legend(fontsize=7)
    a.set_title(f"{h['nodes']} nodes × {h['ranks_per_node']} ranks, NIC {h['nic']}", fontsize=9)
    beta = cm.payload_Bps(h["nic_Bps"])
    b.plot(s, [r["flat_busbw_GBps"] * 1e3 for r in rows], "o", color="#d62728", label="flat ring, measured")
    b.plot(s, [r["flat_model_busbw_GBps"] * 1e3 for r in rows], "-", color="#d62728", alpha=0.6, label="model")
    b.axhline(beta / 1e6, color="#555555", ls="--", lw=0.8, label="NIC payload rate β")
    bytes_axis(b)
    b.set_ylim(0, 1.15 * beta / 1e6)
    b.set_ylabel("bus bandwidth (MB/s)")
    b.legend(fontsize=7)
    return fig


def lab_table(rec: dict, key: str = "hier") -> str:
    """HTML table of measured vs model per size, with the median |error|."""
    rows = record.compare_hier(rec, key)
    cells = [[format_size(r["bytes"]), format_time(r["flat_s"]), format_time(r["flat_model_s"]), f"{r['flat_err']:.0%}",
              format_time(r["hier_network_s"]), format_time(r["hier_network_model_s"]), f"{r['hier_err']:.0%}",
              format_time(r["hier_local_s"]), format_time(r["hier_s"])] for r in rows]
    errs = [r["flat_err"] for r in rows] + [r["hier_err"] for r in rows]
    head = ["size", "flat", "model", "|err|", "hier. network", "model", "|err|", "hier. in-node", "hier. total"]
    return (table_html(head, cells)
            + f"<p>median |error| over both columns: <b>{statistics.median(errs):.0%}</b> "
            f"(α measured = {format_time(rec[key]['alpha_s'])}; β = tc rate × 1448/1514)</p>")


def hier_verdict(rec: dict, key: str = "hier") -> dict:
    """Did the hierarchical total beat the flat ring in this run? Per size and overall, from the measurements.

    Returns ``wins`` (sizes where the hierarchical total was shorter), ``sizes``, ``gain`` (flat / hierarchical total
    per size) and ``local_share`` (the in-node phases' share of the network time saved, per size; above 1 they cost
    more than the network phase saved)."""
    rows = record.compare_hier(rec, key)
    gain = [r["flat_s"] / r["hier_s"] for r in rows]
    saved = [r["flat_s"] - r["hier_network_s"] for r in rows]
    share = [r["hier_local_s"] / sv if sv > 0 else float("inf") for r, sv in zip(rows, saved, strict=True)]
    return {"sizes": [r["bytes"] for r in rows], "wins": [r["bytes"] for r, g in zip(rows, gain, strict=True) if g > 1],
            "gain": gain, "local_share": share}


def lab_reading(rec: dict, key: str = "hier") -> str:
    """One paragraph that says, from the run shown (recorded or live), whether hierarchical beat flat and why."""
    v = hier_verdict(rec, key)
    n, won = len(v["sizes"]), len(v["wins"])
    lo, hi = min(v["gain"]), max(v["gain"])
    share = statistics.median(v["local_share"])
    kept = ("most of the gain survived" if share < 0.5 else "they ate much of the gain" if share < 1
            else "they ate all of the gain, or more")
    why = f"the in-node phases took a median {share:.0%} of the network time the hierarchy saved: {kept}."
    if won == n:
        verdict = f"the hierarchical total <b>beats the flat ring at every size</b> ({lo:.2f}–{hi:.2f}× faster)"
    elif won == 0:
        verdict = f"the hierarchical total <b>never beats the flat ring</b> ({lo:.2f}–{hi:.2f}× its speed)"
    else:
        verdict = (f"the hierarchical total beats the flat ring at <b>{won} of {n} sizes</b> "
                   f"({', '.join(format_size(b) for b in v['wins'])}) and not at the others "
                   f"({lo:.2f}–{hi:.2f}× the flat ring's speed)")
    return f"<p>In this run {verdict}; {why}</p>"


def contention_html(rec: dict) -> str:
    c = rec["contention"]
    beta = cm.payload_Bps(c["nic_Bps"])
    share = min(beta, cm.shared_rate_Bps(cm.payload_Bps(c["uplink_Bps"]), 2))
    got = ", ".join(format_rate(v * 1e9) for v in c["together_busbw_GBps"])
    return (f"Two 2-rank jobs, each ring crossing leaf 0's uplink ({format_rate(c['uplink_Bps'], bits=True)}, 2:1), "
            f"{format_size(c['bytes'])} all-reduce. Alone: measured {format_rate(c['alone_busbw_GBps'] * 1e9)}, "
            f"model {format_rate(beta)}. Together: measured {got}, model {format_rate(share)} each (max-min share).")


def straggler_html(rec: dict) -> str:
    s = rec["straggler"]
    return (f"2 × 2 ranks: every NIC {s['nic']}: measured {format_rate(s['normal_busbw_GBps'] * 1e9)} "
            f"(model {format_rate(cm.payload_Bps(s['nic_Bps']))}); node 1's NIC at {s['slow']}: measured "
            f"{format_rate(s['straggler_busbw_GBps'] * 1e9)} (model {format_rate(cm.payload_Bps(s['slow_Bps']))}: "
            "a ring runs at its slowest edge).")


def lab_dashboard(rec: dict | None = None) -> Dashboard:
    """Nodes, ranks per node, NIC rate and α → the model's flat and hierarchical network time over sizes,
    with the recorded 2 × 2 run at 1 Gb/s as points for reference."""
    rec = rec or recorded()
    ref = record.compare_hier(rec)
    sizes = np.logspace(20, 28, 17, base=2)

    def render(nodes: int, ranks: int, nic_Gbps: float, alpha_us: float):
        beta = cm.payload_Bps(nic_Gbps * 1e9 / 8)
        a = alpha_us * 1e-6
        flat = np.array([cm.flat_ring_s(s, nodes, ranks, a, beta) for s in sizes])
        net = np.array([cm.hier_network_s(s, nodes, a, beta) for s in sizes])
        fig, ax = new_figure(7.0, 3.6)
        ax.plot(sizes, flat, "-", color="#d62728", label="flat ring (model)")
        ax.plot(sizes, net, "-", color="#1f77b4", label="hierarchical network phase (model)")
        ax.plot([r["bytes"] for r in ref], [r["flat_s"] for r in ref], "o", color="#d62728", ms=4,
                label="recorded flat, 2×2 @ 1 Gb/s")
        ax.plot([r["bytes"] for r in ref], [r["hier_network_s"] for r in ref], "s", color="#1f77b4", ms=4,
                label="recorded hier., 2×2 @ 1 Gb/s")
        bytes_axis(ax)
        time_axis(ax)
        ax.set_ylim(1e-4, 1e3)
        ax.legend(fontsize=7)
        p = nodes * ranks
        text = (f"per NIC: flat ring moves 2(P−1)/P = <b>{2 * (p - 1) / p:.2f}</b>·S, hierarchical 2(N−1)/N = "
                f"<b>{2 * (nodes - 1) / nodes:.2f}</b>·S; 64 MiB: flat {format_time(flat[12])}, "
                f"hierarchical network {format_time(net[12])}. <i>Model only (α-β, the NIC's TCP payload rate); "
                "the in-node phases are not drawn. The lab is TCP over rate-shaped links: it checks the α-β model, "
                "not RoCE's lossless behaviour (no RDMA, PFC or ECN).</i>")
        return fig, text

    return Dashboard({
        "nodes": w.SelectionSlider(options=[2, 4, 8, 16], value=2, description="nodes"),
        "ranks": w.SelectionSlider(options=[1, 2, 4, 8], value=2, description="ranks/node"),
        "nic_Gbps": w.SelectionSlider(options=[0.25, 1.0, 10.0, 100.0, 400.0], value=1.0, description="NIC Gb/s"),
        "alpha_us": w.SelectionSlider(options=[5, 50, 250, 1000], value=250, description="α (µs)"),
    }, render)

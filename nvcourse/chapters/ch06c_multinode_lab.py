"""Chapter 06c — Ethernet & RoCE for AI, and a real multi-node lab on network namespaces.

Everything notebook ``06c_multinode_lab.ipynb`` shows: the sourced facts table, the Llama 3 RoCE case
study, the multi-QP ECMP figure and dashboard (closed form vs seeded simulation), and the lab's
measured-vs-model figure, tables and dashboard (recorded run in ``nvcourse/data/cluster_run.json``,
or a live run as root).
"""

from __future__ import annotations

import html
import re
import statistics

import ipywidgets as w
import numpy as np

from .. import _data, catalog
from ..cluster import model as cm
from ..cluster import record
from ..fabric import ecmp_qp
from ..i18n import data_text, language, localize_numbers, ngettext, number, whole
from ..i18n import translate as _
from ..plots import bytes_axis, new_figure, time_axis
from ..tables import table_html
from ..units import format_rate, format_size, format_time
from ..widgets import Dashboard


def _esc(text: str) -> str:
    return html.escape(str(text)).replace("$", "&#36;")


def _time(seconds: float) -> str:
    return localize_numbers(format_time(seconds))


def _size(nbytes: float) -> str:
    return localize_numbers(format_size(nbytes))


def _rate(Bps: float, **kw) -> str:
    return localize_numbers(format_rate(Bps, **kw))


def _pct(fraction: float) -> str:
    """``0.12`` as ``12%`` (English, as Python writes it) or ``12 %`` (French)."""
    return f"{fraction:.0%}" if language() != "fr" else number(100 * fraction, ".0f") + "\u00a0%"


def facts() -> dict:
    """The sourced facts of ``ethernet_ai.toml`` (cached by ``_data.load``: treat it as read-only)."""
    return _data.load("ethernet_ai")


def _short_title(title: str) -> str:
    """A short citation for link text: 'Zhu et al., 2015' for a paper, else the title up to its first , : or (."""
    if m := re.match(r"(\w[\w-]* et al\.)", title):
        year = re.search(r"\b(19|20)\d\d\b", title)
        return f"{m.group(1)}, {year.group(0)}" if year else m.group(1)
    return re.split(r"[,:(]", title, maxsplit=1)[0].strip()


def _source_link(src: dict) -> str:
    """A source as a link whose text is its short citation and whose tooltip is its full title."""
    return (f'<a href="{_esc(src["url"])}" title="{_esc(src["title"])}" target="_blank">'
            f'{_esc(_short_title(src["title"]))}</a>')


def facts_table(topics: list[str] | None = None, *, collapsed: bool = False) -> str:
    """HTML table: topic, statement, linked sources.

    ``collapsed`` puts the table behind a closed ``<details>`` whose summary names the topics: the section's prose
    already teaches them, and the table keeps the fine print and the sources one click away."""
    d = facts()
    rows, names = [], []
    for f in d["facts"]:
        if topics and f["topic"] not in topics:
            continue
        f = _data.shown("ethernet_ai", "facts", f)  # its texts in the reader's language (the topic filters in English)
        links = ", ".join(_source_link(d["sources"][s]) for s in f["src"])
        rows.append([f"<b>{_esc(f['topic'])}</b>", _esc(f["fact"]), links])
        names.append(_esc(f["topic"]))
    table = table_html([_("topic"), _("what to know"), _("source")], rows)
    if not collapsed:
        return table
    summary = _("Details and sources: {topics}").format(topics=", ".join(names))
    return f"<details><summary>{summary}</summary>{table}</details>"


def qp_lines(rows: list[dict]) -> str:
    """Per QP count, the busiest-link slowdown of :func:`ecmp_qp_figure`'s rows (× a balanced fabric): the closed
    form, then the simulation with its 95 % interval (two standard errors)."""
    return "\n".join(localize_numbers(_("{qps} QPs: closed form {model}x   simulation {sim}x ± {interval}").format(
        qps=f"{r['qps']:>2}", model=f"{r['model']:.3f}", sim=f"{r['sim']:.3f}", interval=f"{2 * r['sim_se']:.3f}"))
        for r in rows)


def recorded_line(rec: dict, live: bool = False) -> str:
    """Which run the lab shows: a live one, or the recorded one (its date and the recording machine's note)."""
    if live:
        return _("live run")
    return _("recorded run of {date} ({note}); set LIVE = True as root to rerun").format(
        date=rec["recorded"], note=machine_note(rec["machine"]["note"]))


def machine_note(note: str) -> str:
    """The recording machine's note (``nvcourse.cluster.record`` writes it in English, the recorded data keeps it)
    in the current language; a note the course does not know, as written."""
    known = {"2 shared vCPUs; rate shaped with tbf; this kernel has no sch_netem, so no delay":
             _("2 shared vCPUs; rate shaped with tbf; this kernel has no sch_netem, so no delay")}
    return known.get(note, note)


def nvlink_vs_nic(system_id: str = "dgx-h100") -> str:
    """One line: a system's NVLink against its NIC per GPU, per direction, achievable first, then line rate (GB/s).

    Achievable is the rate chapters 01 and 02 use (about 8x on a DGX H100); the line rates give 9x."""
    s = catalog.get_system(system_id)
    nvl = catalog.get_link(s.scale_up_link).achievable_GBps_dir * s.links_per_gpu
    nic = catalog.get_link(s.nic_link).achievable_GBps_dir
    return _("{name} per GPU, per direction: NVLink {nvl} vs NIC {nic} GB/s achievable, about {ratio}x "
             "({ratio_line}x at line rate: {nvl_line} vs {nic_line} GB/s)").format(
        name=data_text(s.name), nvl=_rounded(nvl), nic=_rounded(nic), ratio=number(nvl / nic, ".0f"),
        ratio_line=number(s.scaleup_GBps_dir / s.scaleout_GBps_dir_per_gpu, ".0f"),
        nvl_line=_rounded(s.scaleup_GBps_dir), nic_line=_rounded(s.scaleout_GBps_dir_per_gpu))


def _rounded(value: float) -> str:
    """A rate rounded to a whole number as running text writes it (English ``1800``, French ``1 800``)."""
    return whole(int(round(value)))


def llama3_case() -> str:
    """The Llama 3 RoCE fabric in numbers (from the paper), with the counts derived from them."""
    d = facts()
    c, src = d["llama3_roce"], d["sources"]["llama3"]
    racks = c["racks_per_pod"] * c["pods"]
    items = [
        _("{gpus} GPUs per rack ({servers} servers) under one top-of-rack switch, {rate} Gb/s per GPU").format(
            gpus=c["gpus_per_rack"], servers=c["servers_per_rack"], rate=number(c["link_Gbps"])),
        _("{racks} racks form a pod of {gpus} GPUs with full bisection bandwidth").format(
            racks=c["racks_per_pod"], gpus=number(c["gpus_per_pod"], ",")),
        _("{pods} pods joined by aggregation switches oversubscribed {over} ({gpus} GPUs, {racks} racks — derived); "
          "pre-training used up to {used}").format(
            pods=c["pods"], over=c["aggregation_oversubscription"], gpus=number(c["pods"] * c["gpus_per_pod"], ","),
            racks=number(racks, ","), used=number(c["pretraining_gpus_max"], ",")),
        _("load balancing: {flows} flows between two GPUs, hashed by Enhanced-ECMP on more RoCE header "
          "fields").format(flows=c["flows_per_gpu_pair"]),
        _("congestion: deep-buffer spine switches and E-ECMP; no DCQCN"),
    ]
    name = _data.shown("ethernet_ai", "llama3_roce", c)["name"]
    return (f"<b>{_esc(name)}</b><ul>" + "".join(f"<li>{_esc(i)}</li>" for i in items)
            + "</ul>" + _("Source:") + f" <a href='{_esc(src['url'])}' target='_blank'>{_esc(src['title'])}</a>")


# -- multi-QP ECMP ----------------------------------------------------------------------------------
#: Draws and seed of the QP simulation, the figure's and the dashboard's alike: at the figure's setting the
#: dashboard shows the figure's numbers, so the sentence on the error bars reads the same from both.
QP_DRAWS, QP_SEED = 2000, 0


def ecmp_qp_rows(connections: int, links: int, qps=(1, 2, 4, 8, 16), *, trials: int = QP_DRAWS,
                 seed: int = QP_SEED):
    """Closed form vs seeded simulation of the step slowdown for each QP count."""
    rows = []
    for q in qps:
        mean, se = ecmp_qp.simulate_slowdown(connections, links, q, trials=trials, seed=seed)
        rows.append({"qps": q, "model": ecmp_qp.expected_slowdown(connections, links, q), "sim": mean, "sim_se": se})
    return rows


def ecmp_qp_figure(connections: int = 32, links: int = 32, qps=(1, 2, 4, 8, 16), *, seed: int = QP_SEED):
    """Slowdown vs QPs per connection: exact curve and simulated points (±2 standard errors)."""
    rows = ecmp_qp_rows(connections, links, qps, seed=seed)
    fig, ax = new_figure(7.0, 3.6)
    q = [r["qps"] for r in rows]
    ax.plot(q, [r["model"] for r in rows], "-", color="#1f77b4", label=_("closed form (balls into bins)"))
    # the points as a named series of their own (the alt text lists it), their error bars drawn under them unnamed
    sims = [r["sim"] for r in rows]
    ax.errorbar(q, sims, yerr=[2 * r["sim_se"] for r in rows], fmt="none", color="#d62728")
    ax.plot(q, sims, "o", color="#d62728",
            label=_("simulated points, error bars ±2 standard errors (seed {seed}, {draws} draws)").format(
                seed=seed, draws=number(QP_DRAWS, ",")))
    ax.axhline(1.0, color="#555555", lw=0.8, ls="--", label=_("perfectly balanced"))
    ax.set_xscale("log", base=2)
    ax.set_xticks(q, [str(v) for v in q])
    ax.set_xlabel(_("queue pairs (flows) per connection"))
    ax.set_ylabel(_("step time / balanced"))
    ax.set_title(_("{connections} connections hashed onto {links} uplinks").format(connections=connections,
                                                                                   links=links))
    ax.legend(fontsize=8)
    return fig, rows


def ecmp_qp_dashboard() -> Dashboard:
    """Connections, uplinks and QPs per connection -> distribution of the hot link's load and the slowdown."""

    def render(connections: int, links: int, qps: int):
        if connections * qps > 1024:
            raise ValueError(_("connections x QPs must be at most 1024 here; got {product}").format(
                product=connections * qps))
        fig, ax = new_figure(7.0, 3.4)
        for q, colour in ((1, "#999999"), (qps, "#1f77b4")):
            pmf = ecmp_qp.max_load_pmf(connections * q, links)
            x = np.arange(pmf.size) / q
            keep = pmf > 1e-4
            ax.plot(x[keep], pmf[keep], "o-" if q == qps else "s--", color=colour, ms=3,
                    label=ngettext("{q} QP per connection", "{q} QPs per connection", q).format(q=q))
        ax.axvline(max(1.0, connections / links), color="#2ca02c", lw=1, label=_("balanced load"))
        ax.set_xlabel(_("load of the busiest uplink (connections' worth of bytes)"))
        ax.set_ylabel(_("probability"))
        ax.legend(fontsize=8)
        s1, sq = ecmp_qp.expected_slowdown(connections, links, 1), ecmp_qp.expected_slowdown(connections, links, qps)
        sim, se = ecmp_qp.simulate_slowdown(connections, links, qps, trials=QP_DRAWS, seed=QP_SEED)
        if qps == 1:  # one slowdown to give, not the same one twice
            text = _("step slowdown vs a balanced fabric: <b>{one}×</b> with 1 QP (simulated {sim} ± {err}, 2 standard "
                     "errors). <i>Assumes every sub-flow hashed uniformly and independently onto the uplinks, equal "
                     "bytes per connection; adaptive routing or packet spraying removes the hot link.</i>")
        else:
            text = _("step slowdown vs a balanced fabric: <b>{one}×</b> with 1 QP, <b>{many}×</b> with {qps} "
                     "(simulated {sim} ± {err}, 2 standard errors). <i>Assumes every sub-flow hashed uniformly and "
                     "independently onto the uplinks, equal bytes per connection; adaptive routing or packet "
                     "spraying removes the hot link.</i>")
        text = text.format(one=number(s1, ".2f"), many=number(sq, ".2f"), qps=qps, sim=number(sim, ".2f"),
                           err=number(2 * se, ".2f"))
        return fig, text

    return Dashboard({
        "connections": w.SelectionSlider(options=[4, 8, 16, 32, 64], value=32, description=_("connections")),
        "links": w.SelectionSlider(options=[4, 8, 16, 32, 64], value=32, description=_("uplinks")),
        "qps": w.SelectionSlider(options=[1, 2, 4, 8, 16], value=4, description=_("QPs/conn.")),
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
    a.plot(s, [r["flat_s"] for r in rows], "o", color="#d62728", label=_("flat ring, measured"))
    a.plot(s, [r["flat_model_s"] for r in rows], "-", color="#d62728", alpha=0.6, label=_("flat ring, model"))
    a.plot(s, [r["hier_network_s"] for r in rows], "s", color="#1f77b4",
           label=_("hierarchical network phase, measured"))
    a.plot(s, [r["hier_network_model_s"] for r in rows], "-", color="#1f77b4", alpha=0.6,
           label=_("hierarchical network phase, model"))
    a.plot(s, [r["hier_s"] for r in rows], "^", color="#7f7f7f", label=_("hierarchical total, measured"))
    bytes_axis(a, label=_("message size"))
    time_axis(a, label=_("time"))
    a.legend(fontsize=7)
    a.set_title(_("{nodes} nodes × {ranks} ranks, NIC {nic}").format(nodes=h["nodes"], ranks=h["ranks_per_node"],
                                                                     nic=localize_numbers(h["nic"])), fontsize=9)
    beta = cm.payload_Bps(h["nic_Bps"])
    b.plot(s, [r["flat_busbw_GBps"] * 1e3 for r in rows], "o", color="#d62728", label=_("flat ring, measured"))
    b.plot(s, [r["flat_model_busbw_GBps"] * 1e3 for r in rows], "-", color="#d62728", alpha=0.6, label=_("model"))
    b.axhline(beta / 1e6, color="#555555", ls="--", lw=0.8, label=_("NIC payload rate β"))
    bytes_axis(b, label=_("message size"))
    b.set_ylim(0, 1.15 * beta / 1e6)
    b.set_ylabel(_("bus bandwidth (MB/s)"))
    b.legend(fontsize=7)
    return fig


def lab_table(rec: dict, key: str = "hier") -> str:
    """HTML table of measured vs model per size, with the median |error|."""
    rows = record.compare_hier(rec, key)
    cells = [[_size(r["bytes"]), _time(r["flat_s"]), _time(r["flat_model_s"]), _pct(r["flat_err"]),
              _time(r["hier_network_s"]), _time(r["hier_network_model_s"]), _pct(r["hier_err"]),
              _time(r["hier_local_s"]), _time(r["hier_s"])] for r in rows]
    errs = [r["flat_err"] for r in rows] + [r["hier_err"] for r in rows]
    head = [_("size"), _("flat"), _("model"), "|err|", _("hier. network"), _("model"), "|err|", _("hier. in-node"),
            _("hier. total")]
    return (table_html(head, cells)
            + _("<p>median |error| over both columns: <b>{median}</b> (α measured = {alpha}; β = tc rate × "
                "1448/1514)</p>").format(median=_pct(statistics.median(errs)), alpha=_time(rec[key]["alpha_s"])))


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
    # in the mixed case the range describes the sizes where hierarchical lost, as the sentence says
    lost = [g for g in v["gain"] if g <= 1] if 0 < len(v["wins"]) < n else v["gain"]
    lo, hi = min(lost or v["gain"]), max(lost or v["gain"])
    share = statistics.median(v["local_share"])
    kept = (_("most of the gain survived") if share < 0.5 else _("they ate much of the gain") if share < 1
            else _("they ate all of the gain, or more"))
    why = _("the in-node phases took a median {share} of the network time the hierarchy saved: {kept}.").format(
        share=_pct(share), kept=kept)
    lo, hi = number(lo, ".2f"), number(hi, ".2f")
    if won == n:
        verdict = _("the hierarchical total <b>beats the flat ring at every size</b> ({lo}–{hi}× faster)")
    elif won == 0:
        verdict = _("the hierarchical total <b>never beats the flat ring</b> ({lo}–{hi}× its speed)")
    else:
        verdict = _("the hierarchical total beats the flat ring at <b>{won} of {n} sizes</b> ({sizes}) and not at "
                    "the others ({lo}–{hi}× the flat ring's speed)")
    verdict = verdict.format(lo=lo, hi=hi, won=won, n=n, sizes=", ".join(_size(b) for b in v["wins"]))
    return _("<p>In this run {verdict}; {why}</p>").format(verdict=verdict, why=why)


def contention_html(rec: dict) -> str:
    c = rec["contention"]
    beta = cm.payload_Bps(c["nic_Bps"])
    share = min(beta, cm.shared_rate_Bps(cm.payload_Bps(c["uplink_Bps"]), 2))
    got = ", ".join(_rate(v * 1e9) for v in c["together_busbw_GBps"])
    return _("Two 2-rank jobs, each ring crossing leaf 0's uplink ({uplink}, 2:1), {size} all-reduce. Alone: "
             "measured {alone}, model {model}. Together: measured {got}, model {share} each (max-min share).").format(
        uplink=_rate(c["uplink_Bps"], bits=True), size=_size(c["bytes"]), alone=_rate(c["alone_busbw_GBps"] * 1e9),
        model=_rate(beta), got=got, share=_rate(share))


def straggler_html(rec: dict) -> str:
    s = rec["straggler"]
    return _("2 × 2 ranks: every NIC {nic}: measured {normal} (model {normal_model}); node 1's NIC at {slow}: "
             "measured {straggler} (model {straggler_model}: a ring runs at its slowest edge).").format(
        nic=localize_numbers(s["nic"]), normal=_rate(s["normal_busbw_GBps"] * 1e9),
        normal_model=_rate(cm.payload_Bps(s["nic_Bps"])), slow=localize_numbers(s["slow"]),
        straggler=_rate(s["straggler_busbw_GBps"] * 1e9), straggler_model=_rate(cm.payload_Bps(s["slow_Bps"])))


def latency_half_bytes(nodes: int, ranks: int, alpha_s: float, beta_Bps: float) -> float:
    """Message size (bytes) at which the α terms are half the flat ring's time (:func:`cm.flat_ring_s`): below
    it latency is the larger part. From the model itself: its time at zero bytes over its time per byte."""
    latency = cm.flat_ring_s(0.0, nodes, ranks, alpha_s, beta_Bps)
    per_byte = cm.flat_ring_s(1.0, nodes, ranks, alpha_s, beta_Bps) - latency
    return latency / per_byte


#: The lab dashboard's NIC rates (Gb/s).
LAB_NIC_GBPS = (0.25, 1.0, 10.0, 100.0, 400.0)


def _nic_options() -> list:
    """The NIC slider's options: in English the rates themselves (the slider prints ``1.0``, ``0.25``), in French
    ``(label, rate)`` pairs written the French way (``1``, ``0,25``), which the slider's own readout would not do."""
    if language() != "fr":
        return list(LAB_NIC_GBPS)
    return [(number(gbps, "g"), gbps) for gbps in LAB_NIC_GBPS]


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
        ax.plot(sizes, flat, "-", color="#d62728", label=_("flat ring (model)"))
        ax.plot(sizes, net, "-", color="#1f77b4", label=_("hierarchical network phase (model)"))
        ax.plot([r["bytes"] for r in ref], [r["flat_s"] for r in ref], "o", color="#d62728", ms=4,
                label=_("recorded flat, 2×2 @ 1 Gb/s"))
        ax.plot([r["bytes"] for r in ref], [r["hier_network_s"] for r in ref], "s", color="#1f77b4", ms=4,
                label=_("recorded hier., 2×2 @ 1 Gb/s"))
        bytes_axis(ax, label=_("message size"))
        time_axis(ax, label=_("time"))
        ax.set_ylim(1e-4, 1e3)
        ax.legend(fontsize=7)
        p = nodes * ranks
        text = _("per NIC: flat ring moves 2(P−1)/P = <b>{flat_share}</b>·S, hierarchical 2(N−1)/N = "
                 "<b>{hier_share}</b>·S; 64 MiB: flat {flat}, hierarchical network {hier}. <i>Model only (α-β, the "
                 "NIC's TCP payload rate); the in-node phases are not drawn. The lab is TCP over rate-shaped links: "
                 "it checks the α-β model, not RoCE's lossless behaviour (no RDMA, PFC or ECN).</i>").format(
            flat_share=number(2 * (p - 1) / p, ".2f"), hier_share=number(2 * (nodes - 1) / nodes, ".2f"),
            flat=_time(flat[12]), hier=_time(net[12]))
        text += " " + _("Latency starts to matter below <b>{size}</b>: there the α terms are over half the flat "
                        "ring's time.").format(size=_size(latency_half_bytes(nodes, ranks, a, beta)))
        return fig, text

    return Dashboard({
        "nodes": w.SelectionSlider(options=[2, 4, 8, 16], value=2, description=_("nodes")),
        "ranks": w.SelectionSlider(options=[1, 2, 4, 8], value=2, description=_("ranks/node")),
        "nic_Gbps": w.SelectionSlider(options=_nic_options(), value=1.0, description=_("NIC Gb/s")),
        "alpha_us": w.SelectionSlider(options=[5, 50, 250, 1000], value=250, description=_("α (µs)")),
    }, render)

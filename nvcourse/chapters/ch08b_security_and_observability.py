"""Chapter 08b — security and observability of GPU fabrics: tables, figures and dashboards.

The models live in :mod:`nvcourse.isolation` and :mod:`nvcourse.observability`; this module only shows them.
"""

from __future__ import annotations

import html
import os

import ipywidgets as widgets
import numpy as np
from IPython.display import HTML

from .. import catalog, isolation
from ..i18n import data_text, language, localize_numbers, number, pgettext
from ..i18n import translate as _
from ..markup import details_html
from ..observability import counters, drill
from ..observability.sockets import Listener, listeners_of
from ..plots import new_figure, time_axis
from ..tables import table_html
from ..units import format_size
from ..widgets import Dashboard, size_slider

__all__ = [
    "table",
    "tenancy_dashboard", "noisy_neighbour_dashboard",
    "exposure_table",
    "ethernet_ids_table",
    "cc_table",
    "cc_ratio",
    "signals_table",
    "thresholds_dashboard",
    "thresholds_readout",
    "diag_levels_text",
    "drill_view",
    "drill_dashboard",
    "partition_table",
    "rack_split_lines",
    "pkey_lines",
    "noisy_neighbour_lines",
    "listening_line",
]

_E = html.escape


def _cell(x: object) -> str:
    """Plain text as a table cell: escaped, ``$`` too so Markdown renderers leave it alone."""
    return _E(str(x)).replace("$", "&#36;")


def _text_table(header: list[str], rows: list[list[object]] | list[tuple[object, ...]]) -> str:
    # every cell here is plain text from the models or the data files; table_html takes cells as HTML
    return table_html(header, [[_cell(c) for c in r] for r in rows])


def _pct(fraction: float, spec: str = ".0") -> str:
    """``0.5`` as ``50%`` (English, as Python writes it) or ``50 %`` (French); ``spec`` the decimals (``.1``)."""
    if language() != "fr":
        return format(fraction, spec + "%")
    return number(100 * fraction, spec + "f") + "\u00a0%"


def table(header: list[str], rows: list[list[object]]) -> HTML:
    """A plain HTML table (the course's :func:`nvcourse.tables.table_html`; cells escaped, ``$`` too)."""
    return HTML(_text_table(header, rows))


def ethernet_ids_table() -> HTML:
    """How many tenants Ethernet's tags can tell apart, and how many traffic classes it has (bits and counts from
    the data file, each with its standard linked)."""
    d = isolation.raw()
    eth, srcs = d["ethernet"], d["sources"]

    def src(field: str) -> str:
        s = srcs[eth["src"][field]]
        return f'<a href="{_E(s["url"])}" target="_blank">{_E(s["title"].split(":")[0])}</a>'

    rows = [["VLAN ID", _E(_("{bits} bits: {tags} usable tags").format(
                bits=eth["vlan_id_bits"], tags=number(eth["vlan_ids_usable"], ","))), src("vlan_id_bits")],
            [_("VXLAN network identifier (VNI)"), _E(_("{bits} bits: about {millions} million segments").format(
                bits=eth["vxlan_vni_bits"], millions=number(2 ** eth["vxlan_vni_bits"] / 1e6, ".0f"))),
             src("vxlan_vni_bits")],
            [_("priority code point (PCP)"), _E(_("{bits} bits: {n} priorities, PFC and ETS per priority").format(
                bits=eth["pcp_bits"], n=eth["priorities"])), src("pcp_bits")]]
    return HTML(table_html([_("tag"), _("size"), _("standard")], rows, align_numbers=False))


# ------------------------------------------------------------------------------------------ tenancy
#: Within this factor of the whole rack's time a tenant reads "about the same" (the model's own rounding).
SAME_WITHIN = 0.03


def tenant_vs_rack(name: str, t: isolation.TenantShare, whole: isolation.TenantShare) -> str:
    """One tenant's all-reduce against the whole rack's, in words the model supports in this state."""
    ratio = t.time_s / whole.time_s
    head = _("{name} {time} µs ({algo}, {ratio}× the rack's time").format(
        name=name, time=number(t.time_s * 1e6, ",.0f"), algo=t.algo, ratio=number(ratio, ".2f"))
    if ratio < 1 - SAME_WITHIN:
        why = (_("fewer GPUs, fewer ring steps") if t.algo == "ring" and whole.algo != "ring"
               else _("fewer GPUs, less latency per call"))
        return _("{head}: faster, {why})").format(head=head, why=why)
    if ratio > 1 + SAME_WITHIN:
        why = (_("its {algo} against the rack's {rack}").format(algo=t.algo, rack=whole.algo)
               if t.algo != whole.algo else _("each of fewer GPUs moves a larger share of the buffer"))
        return _("{head}: slower, {why})").format(head=head, why=why)
    return _("{head}: about the same)").format(head=head)


def tenancy_dashboard() -> Dashboard:
    """Split an NVL72 rack between two tenants; each tenant's all-reduce bus bandwidth (course model)."""
    trays = widgets.IntSlider(
        value=9,
        min=1,
        max=17,
        description=_("tenant A trays"),
        continuous_update=False,
        style={"description_width": "initial"},
    )
    size = size_slider(_("all-reduce size"), min_exp=16, max_exp=32, value_exp=26)

    def render(trays_a: int, nbytes: int):
        total = int(isolation.partition_sizes("gb200-nvl72")["trays"])
        a, b = isolation.nvl72_split([trays_a, total - trays_a], nbytes)
        whole = isolation.nvl72_split([total], nbytes)[0]
        fig, ax = new_figure(6.5, 3.0)
        names = [_("A: {gpus} GPUs").format(gpus=a.gpus), _("B: {gpus} GPUs").format(gpus=b.gpus),
                 _("whole rack: {gpus}").format(gpus=whole.gpus)]
        vals = [a.busbw_GBps, b.busbw_GBps, whole.busbw_GBps]
        ax.barh(names, vals, color=["#0072B2", "#E69F00", "#999999"])
        ax.set_xlabel(_("all-reduce bus bandwidth (GB/s, model)"))
        ax.invert_yaxis()
        text = (
            _("<b>{size} all-reduce</b>").format(size=localize_numbers(format_size(nbytes))) + "<ul><li>"
            + _("whole rack ({gpus} GPUs): {time} µs ({algo})").format(
                gpus=whole.gpus, time=number(whole.time_s * 1e6, ",.0f"), algo=whole.algo) + "</li>"
            + "<li>" + _E(tenant_vs_rack(_("tenant A ({gpus} GPUs):").format(gpus=a.gpus), a, whole)) + "</li>"
            + "<li>" + _E(tenant_vs_rack(_("tenant B ({gpus} GPUs):").format(gpus=b.gpus), b, whole)) + "</li></ul>"
            + _("Each tenant keeps its GPUs' full NVLink bandwidth; what it always loses is reach (no NVLink to the "
                "other tenant's GPUs).")
        )
        return fig, text

    return Dashboard({"trays_a": trays, "nbytes": size}, render)


def nic_efficiency(system: str = "dgx-h100") -> float:
    """Achievable / line rate of ``system``'s NIC (0-1), the factor the all-reduce time applies to a flow's rate."""
    return catalog.get_link(catalog.get_system(system).nic_link).efficiency


def noisy_neighbour_dashboard() -> Dashboard:
    """The victim's all-reduce next to an all-to-all neighbour on a 2:1 fat-tree, by QoS policy."""
    qos = widgets.Dropdown(
        options=[(_("no QoS (one class)"), "none"), (_("ETS shares"), "ets"), (_("strict priority"), "strict")],
        value="none",
        description="QoS",
    )
    share = widgets.FloatSlider(
        value=0.5, min=0.1, max=0.9, step=0.1, description=_("victim share"), continuous_update=False
    )
    duty = widgets.FloatSlider(
        value=1.0, min=0.0, max=1.0, step=0.1, description=_("neighbour duty"), continuous_update=False
    )
    size = size_slider(_("all-reduce size"), min_exp=20, max_exp=32, value_exp=28)

    def render(qos: str, share: float, duty: float, nbytes: int):
        r = isolation.noisy_neighbour(nbytes, qos=qos, victim_share=share, duty=duty)
        eff = nic_efficiency()  # the all-reduce time uses the achievable rate; both columns scale alike
        fig, ax = new_figure(6.5, 2.6)
        avg = r.alone_s * r.slowdown
        ax.barh([_("alone"), _("next to the neighbour")], [r.alone_s * 1e3, avg * 1e3], color=["#009E73", "#D55E00"])
        ax.set_xlabel(_("victim all-reduce time (ms, average over the neighbour's duty cycle)"))
        ax.invert_yaxis()
        # an idle neighbour (duty 0) never sends: its row says so and gives the victim's rate alone
        busy = (_("while the neighbour sends"), r.shared_rate_GBps) if duty > 0 else (
            _("while the neighbour is idle"), r.alone_rate_GBps)
        text = (
            _("<p>Victim all-reduce: <b>×{slowdown}</b> its time alone, on average (the neighbour sends {duty} of "
              "the time).</p>").format(slowdown=number(r.slowdown, ".2f"), duty=_pct(duty))
            + _text_table([_("network rate per victim flow"), _("GB/s, line rate"), _("GB/s, achievable")], [
                [_("alone"), number(r.alone_rate_GBps, ".1f"), number(r.alone_rate_GBps * eff, ".1f")],
                [busy[0], number(busy[1], ".2f"), number(busy[1] * eff, ".2f")]])
        )
        why, span = _why_less_than_flows(r), ""
        if qos == "none":  # the fairness the model assumes, and the other fabric as a range
            port = isolation.noisy_neighbour(nbytes, qos="ets", victim_share=0.5, duty=duty)
            span = _("<p>Range under the two sharing rules: ×{low}–×{high}. The upper end assumes per-flow max-min "
                      "fairness: Ethernet with RoCE and DCQCN (per-QP rate control), or TCP. The lower end, ×{low}, "
                      "is InfiniBand without congestion control: a switch port arbitrates per input port, roughly "
                      "half the link to each job (head-of-line blocking and congestion trees can add to it).</p>"
                      ).format(low=number(port.slowdown, ".2f"), high=number(r.slowdown, ".2f"))
        text += _neighbour_details(why, span)
        if qos == "ets" and duty > 0:  # a share helps only above what per-flow fairness already gives
            fair = isolation.noisy_neighbour(nbytes, qos="none", duty=duty)
            k = fair.alone_rate_GBps / fair.shared_rate_GBps
            verdict = (_("better than") if r.slowdown < fair.slowdown - 1e-9
                       else _("worse than") if r.slowdown > fair.slowdown + 1e-9 else _("the same as"))
            text += _("<p>With no QoS the victim would run ×{none}: this share is {verdict} no QoS. Per-flow "
                      "fairness already gives each victim flow 1/{k} of the link; an ETS share helps only above "
                      "it.</p>").format(none=number(fair.slowdown, ".2f"), verdict=verdict, k=number(k, ".0f"))
        if qos != "ets":  # say why the share slider changes nothing here
            why = (_("with no QoS every flow gets a fair share") if qos == "none"
                   else _("strict priority gives the victim all it needs"))
            text += _("<p>(The victim share, {share}, only applies to ETS: {why}.)</p>").format(share=_pct(share),
                                                                                             why=why)
        return fig, text

    return Dashboard({"qos": qos, "share": share, "duty": duty, "nbytes": size}, render)


def _neighbour_details(why: str, span: str) -> str:
    """The readout's explanations behind one toggle, so that its first lines stay the slowdown and the two rates:
    why the all-reduce slows less than its flows, and the range under InfiniBand's per-port sharing (either may be
    empty)."""
    if not (why or span):
        return ""
    summary = (_("Why the all-reduce slows less than its flows, and the range under InfiniBand's sharing")
               if why and span else _("Why the all-reduce slows less than its flows") if why
               else _("The range under InfiniBand's sharing"))
    return details_html(summary, why + span)


def _why_less_than_flows(r: isolation.NoisyNeighbour) -> str:
    """Why the all-reduce slows less than its network flows: it is hierarchical, and its NVLink steps inside each
    node do not share the neighbour's links. Empty when the flows are not slowed."""
    k = r.alone_rate_GBps / r.shared_rate_GBps
    if k < 1.01 or r.duty == 0:
        return ""
    return _("<p>The victim's network flows run {k}× slower while the neighbour sends, its all-reduce less: "
             "the all-reduce is hierarchical, and its NVLink steps inside each node share nothing with the "
             "neighbour. Only the network part stretches; at small sizes latency and NVLink are most of the "
             "time.</p>").format(k=number(k, ".1f"))


def cc_ratio(m: dict) -> str:
    """A measurement's CC-on / CC-off throughput ratio, low to high, one value when both ends agree (2 decimals,
    3 where the source gives 3)."""
    lo, hi = sorted((m["throughput_ratio_low"], m["throughput_ratio_high"]))
    d = 3 if any(round(x, 2) != x for x in (lo, hi)) else 2
    return number(lo, f".{d}f") if lo == hi else number(lo, f".{d}f") + "–" + number(hi, f".{d}f")


def exposure_table(
    addresses: tuple[str, ...] = ("127.0.0.1", "0.0.0.0", "10.20.0.5", "192.168.1.10", "203.0.113.7"),
) -> HTML:
    """Who can reach a TCPStore / NCCL bootstrap socket bound to each address."""
    return table([_("bind address / MASTER_ADDR"), _("reachable from")],
                 [[a, isolation.exposure_words(isolation.exposure(a))] for a in addresses])


def cc_table() -> HTML:
    """Published confidential-computing throughput ratios, one setup each: architecture, workload and ratio first;
    how each ratio was derived and its source behind a toggle."""
    src = isolation.raw()["sources"]
    ms = isolation.cc_measurements()
    head = _("throughput with CC ÷ without, whole workload")
    short = _text_table([_("architecture"), _("workload (one published setup)"), head],
                        [[m["arch"], data_text(m["what"]), cc_ratio(m)] for m in ms])
    full = _text_table([_("architecture"), _("workload"), head, _("what it is"), _("source")],
                       [[m["arch"], data_text(m["what"]), cc_ratio(m), data_text(m["label"]), src[m["src"]]["url"]]
                        for m in ms])
    return HTML(short + details_html(_("How each ratio was derived, and its source"), full))


# ------------------------------------------------------------------------------------------ observability
def _first(items: object) -> str:
    """The first of a ``;``- or ``,``-separated list (the counter or tool to reach for first)."""
    return str(items).split(";")[0].split(",")[0].strip()


def signals_table(layer: str | None = None) -> HTML:
    """Fault class → the counter to watch first and the tool that reads it; every counter, tool and how to read
    them behind a toggle."""
    sig = counters.signals(layer)

    # Counter names and sysfs paths are long unbreakable words (DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL): let
    # them break anywhere, and fold layer and kind into the fault, so that "how to read it" keeps a readable width
    # (with six columns it was squeezed to one letter per line and cut at the notebook's edge)
    def long(text: object) -> str:
        return f'<span style="overflow-wrap:anywhere">{_cell(text)}</span>'

    short = table_html([_("fault"), _("where"), _("watch first"), _("read it with")],
                       [[_cell(s["fault"]), _cell(s["layer"]), long(_first(s["counter"])), long(_first(s["tool"]))]
                        for s in sig])
    rows = [[f"{_cell(s['fault'])} <i>({_cell(s['layer'])}, {_cell(s['kind'])})</i>", long(s["counter"]),
             long(s["tool"]), _cell(s["reading"])] for s in sig]
    full = table_html([_("fault (layer, kind)"), _("counters"), _("tool"), _("how to read it")], rows)
    return HTML(short + details_html(_("Every counter and tool, and how to read them ({n} fault classes)").format(
        n=len(sig)), full + _signal_words_html()))


def _signal_words_html() -> str:
    """The full signals table's abbreviations, spelled out under it (the glossary has them too)."""
    words = (("GSP", _("the GPU System Processor: the processor on the GPU that runs the driver's firmware "
                       "(Xid 119/120 report that it timed out or failed)")),
             ("ECC", _("the error-correcting code on GPU memory: it corrects a single-bit error (SBE; the drill's "
                       "ecc_sbe) and only detects a double-bit error (DBE), which the GPU reports as an Xid")),
             ("RMA", _("return merchandise authorisation: sending a part back to the vendor for replacement")),
             ("ICRC/VCRC", _("the two checksums of an InfiniBand packet, invariant (end to end) and variant "
                             "(recomputed on every link); a bad one means the packet was damaged on the way")))
    items = "".join(f"<li><b>{_E(k)}</b>, {_E(v)}</li>" for k, v in words)
    return f"<p>{_E(_('Words in this table:'))}</p><ul>{items}</ul>"


def thresholds_dashboard() -> Dashboard:
    """Alert thresholds derived from the model for a job of compute + one exposed all-reduce."""
    compute = widgets.FloatLogSlider(
        value=0.05, base=10, min=-3, max=0, step=0.1, description=_("compute (s)"), continuous_update=False
    )
    size = size_slider(_("gradients"), min_exp=24, max_exp=33, value_exp=30)
    nodes = widgets.Dropdown(options=[1, 2, 4, 16, 64], value=4, description=_("DGX H100 nodes"))

    def render(compute_s: float, nbytes: int, nodes: int):
        c = counters.bandwidth_fraction("dgx-h100", 8, nbytes, compute_s, nodes=nodes)
        t = counters.alert_thresholds(c)
        # far enough to show where the curve crosses the target (a tolerable loss of ~70 % was off the plot)
        f = np.linspace(0, min(0.95, max(0.6, 1.15 * t.tolerable_loss)), 121)
        fig, ax = new_figure(6.5, 3.0)
        ax.plot(f * 100, (c / (1 - f) + 1 - c - 1) * 100, color="#0072B2", label=_("step slowdown (model)"))
        ax.axhline(10, color="#D55E00", ls="--", lw=1, label=_("10 % target"))
        ax.axvline(t.tolerable_loss * 100, color="#D55E00", lw=1, label=_("tolerable loss"))
        ax.axvline(100 * (1 - t.busbw_ratio_warn), color="#E69F00", lw=1, label=_("warn"))
        ax.set_xlabel(_("bandwidth lost on the slowest link (%)"))
        ax.set_ylabel(_("step slowdown (%)"))
        ax.set_ylim(0, 40)
        ax.legend(fontsize=8)
        return fig, thresholds_readout(c, t)

    return Dashboard({"compute_s": compute, "nbytes": size, "nodes": nodes}, render)


def thresholds_readout(c: float, t: counters.Thresholds) -> str:
    """The thresholds dashboard's text: the share, the tolerable loss and the two alert levels that follow from it
    (a short table), then every alert rule with its reason behind a toggle. ``c`` is a fraction of the step."""
    key = _text_table([_("alert on"), _("warn"), _("critical")], [
        [_("busbw / baseline"), "< " + number(t.busbw_ratio_warn, ".3f"),
         "< " + number(t.busbw_ratio_critical, ".3f")],
        [_("step time / baseline"), "> " + number(t.step_ratio_warn, ".3f"),
         "> " + number(t.step_ratio_critical, ".3f")],
    ])
    # one rounding for the tolerable loss everywhere (0.1 %, as the busbw rule's reason), and enough digits that a
    # tiny share c does not read as 0.0 % (1 node, 16 MiB, 1 s of compute: c = 0.01 %)
    loss_whole, loss = number(t.tolerable_loss, ".0%"), number(t.tolerable_loss, ".1%")
    rows = [tuple(cell.replace(f"({loss_whole})", f"({loss})") for cell in row) for row in t.rows()]
    return (
        _("<p>Bandwidth-bound share of the step c = <b>{c}</b>, so a link may lose up to <b>{loss}</b> of its "
          "bandwidth before the step slows by the target.</p>").format(c=_pct(c, ".1" if c >= 0.0005 else ".2"),
                                                                       loss=_pct(t.tolerable_loss, ".1"))
        + key
        + _("<p>Look at the busbw row: critical is the tolerable loss itself, warn is half of it.</p>")
        + details_html(_("All {n} alert rules, with the reason for each").format(n=len(rows)),
                   _text_table([_("metric"), _("warn"), _("critical"), _("why")], rows))
    )


def counter_delta_text(d: counters.CounterDelta, label: str = "LinkDowned") -> str:
    """How much a counter grew, in the learner's language; a saturated read is only a lower bound."""
    if d.saturated:
        return _("{label} grew by {delta} or more (saturated: reset and read again)").format(label=label,
                                                                                            delta=d.delta)
    return _("{label} grew by {delta}").format(label=label, delta=d.delta)


def diag_levels_text() -> str:
    """``dcgmi diag`` run levels and their approximate durations, in words (the data file's seconds)."""
    words = [_("-r {level} about {minutes} min").format(level=k, minutes=number(v / 60, "g")) if v >= 60
             else _("-r {level} about {seconds} s").format(level=k, seconds=number(v, "g")) if np.isfinite(v)
             else _("-r {level} (no published duration)").format(level=k)
             for k, v in counters.dcgm_diag_levels().items()]
    return _("dcgmi diag run levels: ") + _("; ").join(words)


# ------------------------------------------------------------------------------------------ drill
def _rows(d: dict[str, dict[str, float]], skip_small_wait: float = 3.0, top: int = 8) -> list[list[object]]:
    """Components whose counters moved, sorted by how much (background hidden: PortXmitWait under a few %, the raw
    pre-FEC bit error rate every port shows below ``drill.RAW_BER_SHOWN``)."""
    out = []
    for comp, row in d.items():
        shown = {
            k: v
            for k, v in row.items()
            if not (k == "xmit_wait_pct" and v < skip_small_wait) and not (k == "raw_ber" and v < drill.RAW_BER_SHOWN)
        }
        if shown:
            out.append([comp, ", ".join(f"{k} {v:g}" for k, v in shown.items())])
    out.sort(key=lambda r: -max(float(x.split()[-1]) for x in r[1].split(", ")))
    return out[:top]


def drill_view(run: drill.DrillRun):
    """What the operator sees: step times (figure) and counters + logs (HTML)."""
    fig, ax = new_figure(7.0, 2.8)
    steps = np.arange(run.step_s.size)
    if np.isfinite(run.step_s).any():
        ax.plot(steps, run.step_s, ".-", color="#0072B2", lw=1, ms=3, label=_("step time"))
    else:
        ax.text(0.5, 0.5, _("no step completed"), ha="center", va="center", transform=ax.transAxes)
    ax.axhline(run.baseline_s, color="#999999", ls="--", lw=1, label=_("healthy baseline"))
    ax.set_xlabel(pgettext("training", "step"))  # a training step: "pas", not an algorithm's "étape"
    time_axis(ax, "y", _("step time"))  # ms/s labels, at least three of them even when the times stay close
    # above the axes: inside, wherever it sat, some incident's step times or the baseline ran under it
    ax.legend(fontsize=8, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=2, frameon=False)

    def block(title: str, rows: list[list[object]]) -> str:
        return f"<b>{_E(title)}</b>" + _text_table([_("component"), _("counters")], rows or [["—", ""]])

    # every line: the verdict cites the log lines at the spiking steps, so none of them may be cut off (13 at most)
    logs = "<br>".join(_E(line) for line in run.logs)
    text = (
        block(_("IB ports (host side; counters grown over the window; raw_ber: pre-FEC bit error rate)"),
              _rows(run.ports))
        + block(_("leaf switches (uplinks)"), _rows(run.leaves))
        + block(_("GPUs (DCGM)"), _rows(run.gpus))
        + "<b>" + _("logs") + f"</b><div style='font-family:monospace;font-size:0.85em'>{logs}</div>"
    )
    return fig, text


def drill_dashboard(seed: int = 0) -> Dashboard:
    """Pick an incident, read the evidence, name the fault and the component; the verdict says what the evidence was."""
    comps = drill.components()
    incident = widgets.Dropdown(options=list(drill.INCIDENTS), value="A", description=_("incident"))
    choose = (_("(choose)"), "(choose)")  # the label in the learner's language; the value the code compares
    labels = drill.fault_labels()  # the learner's language on screen; the English key is the value
    fault = widgets.Dropdown(options=[choose, *((labels[f], f) for f in drill.FAULTS)], value="(choose)",
                             description=_("fault"))
    comp = widgets.Dropdown(
        options=[choose, *((c, c) for c in (*comps["node"], *comps["leaf"], *comps["port"], *comps["gpu"]))],
        value="(choose)",
        description=_("component"),
    )

    def render(incident: str, fault: str, component: str):
        run = drill.incident(incident, seed)
        fig, text = drill_view(run)
        if fault != "(choose)" and component != "(choose)":
            v = drill.verdict(run, fault, component)
            colour = "#2e7d32" if v.passed else "#c62828"
            head = _("Correct") if v.passed else (_("Right fault, wrong component") if v.fault_ok
                                                  else _("Not this fault"))
            ev = "".join(f"<li>{_E(e)}</li>" for e in v.evidence) if v.passed else ""
            tip = f"<div>{_E(v.mistake)}</div>" if v.mistake else ""
            text = f"<div style='color:{colour}'><b>{head}</b>{tip}<ul>{ev}</ul></div>" + text
        elif fault != "(choose)" or component != "(choose)":  # half an answer: say what is still missing
            missing = _("the component") if fault != "(choose)" else _("the fault")
            shown = {"(choose)": choose[0], **labels}
            text = _("<div><b>Your answer so far:</b> fault {fault}, component {component}. Pick {missing} too to "
                     "check it.</div>").format(fault=_E(shown.get(fault, fault)),
                                               component=_E(shown.get(component, component)), missing=missing) + text
        return fig, text

    return Dashboard({"incident": incident, "fault": fault, "component": comp}, render, columns=3)



# ------------------------------------------------------------------------ printed lines, each built with _()
def partition_table(systems: tuple[str, ...] = ("hgx-h100", "gb200-nvl72")) -> HTML:
    """§1: each system's NVLink partition sizes (GPUs) and who programs its switches, from the data file."""
    recs = {system: isolation.partition_sizes(system) for system in systems}
    rows = [[system, ", ".join(map(str, rec.get("partition_sizes_gpus") or [])) or _(
        "whole trays of {gpus} GPUs ({trays} trays)").format(gpus=rec["gpus_per_tray"], trays=rec["trays"]),
             data_text(rec["manager"])] for system, rec in recs.items()]
    return table([_("system"), _("partition sizes (GPUs)"), _("who programs the switches")], rows)


def rack_split_lines(tenant_trays: tuple[int, ...] = (9, 9), nbytes: float = 2**30) -> str:
    """§1: a ``nbytes`` all-reduce on the whole NVL72, then on each tenant's trays: GPUs, algorithm, ms, GB/s."""
    shares = isolation.nvl72_split([sum(tenant_trays)], nbytes) + isolation.nvl72_split(list(tenant_trays), nbytes)
    names = [_("whole rack")] + [_("tenant {name}").format(name=chr(65 + i)) for i in range(len(tenant_trays))]
    return "\n".join(localize_numbers(_("{name}: {gpus} GPUs, {algo} {time} ms, busbw {busbw} GB/s").format(
        name=f"{name:>10}", gpus=f"{t.gpus:2d}", algo=f"{t.algo:5s}", time=f"{t.time_s * 1e3:.3f}",
        busbw=f"{t.busbw_GBps:,.0f}")) for name, t in zip(names, shares, strict=True))


def pkey_lines(pairs: tuple[tuple[int, int], ...] = ((0x8001, 0x8001), (0x8001, 1), (1, 1), (0x8001, 0x8002))) -> str:
    """§2: for each pair of P_Keys, whether two ports holding them can talk or their packets are dropped."""
    verdict = {True: _("can talk"), False: _("dropped")}
    return "\n".join(_("{a} ↔ {b}: {verdict}").format(a=f"0x{a:04X}", b=f"0x{b:04X}",
                      verdict=verdict[isolation.pkeys_can_talk(a, b)]) for a, b in pairs)


def noisy_neighbour_lines(nbytes: float = 2**28) -> str:
    """§3: per QoS mode, the victim's flow (GB/s of line rate) with the neighbour, alone, and its slowdown (×)."""
    rs = {q: isolation.noisy_neighbour(nbytes, qos=q) for q in isolation.QOS_MODES}
    return "\n".join(localize_numbers(_("{qos}: victim flow {rate} GB/s line rate (alone {alone}), all-reduce "
                                        "×{slowdown}").format(qos=f"{q:>6}", rate=f"{r.shared_rate_GBps:6.2f}",
                                                              alone=f"{r.alone_rate_GBps:.0f}",
                                                              slowdown=f"{r.slowdown:.2f}")) for q, r in rs.items())


def listening_line(listeners: list[Listener] | None = None) -> str:
    """§4: the TCP sockets ``listeners`` (default: this kernel's and its children's; none off Linux), each marked."""
    mine = listeners if listeners is not None else (
        listeners_of(os.getpid()) if os.path.exists("/proc/net/tcp") else [])
    loopback, exposed = _("loopback"), _("EXPOSED")
    return _("this kernel listens on:") + " " + str([f"{s} ({loopback if s.loopback else exposed})" for s in mine]
                                                    or _("nothing visible"))

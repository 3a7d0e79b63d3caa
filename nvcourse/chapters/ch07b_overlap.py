"""Chapter 07b — hiding communication behind compute: step timelines, bucket sweeps, rooflines, the dashboard.

The models are :mod:`nvcourse.overlap` and :mod:`nvcourse.rooflines`; this module draws them and wires
controls to them.
"""

from __future__ import annotations

import html

import ipywidgets as w
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .. import catalog, costmodel, overlap, rooflines, training
from ..i18n import language, localize_numbers, ngettext, number, whole
from ..i18n import translate as _
from ..plots import new_figure
from ..tables import table_html
from ..units import format_size, format_time
from ..widgets import Dashboard

__all__ = [
    "STREAM_COLOURS",
    "BUCKET_CHOICES_MIB",
    "timeline_axes",
    "timeline_figure",
    "bucket_sweep_figure",
    "roofline_table_html",
    "fsdp_case",
    "tp_case",
    "tp_split_details_html",
    "smallest_keeping_up",
    "bucket_hint",
    "bucket_bound",
    "overlap_dashboard",
    "toy_line",
    "bucket_cases",
    "bucket_lines",
    "deepseek_sm_line",
    "prefetch_lines",
    "tp_setting",
    "pp_cp_lines",
    "roofline_lines",
]

STREAM_COLOURS = {"compute": "#999999", "comm": "#0072B2", "exposed": "#D55E00"}
EXPOSED_HATCH = "///"  # the exposed band's mark besides its colour
#: Bucket sizes offered by the dashboard (MiB): DDP's 25 among powers of two. Below 4 MiB a 16 GB gradient
#: makes thousands of buckets; the sweep figure covers 1 MiB.
BUCKET_CHOICES_MIB = [4, 8, 16, 25, 32, 64, 128, 256, 512, 1024]


def timeline_axes(ax: Axes, tl: overlap.Timeline, *, unit: float = 1e-3, unit_label: str = "ms") -> None:
    """Draw ``tl`` as two lanes (compute on top, communication below), the spans in which the GPU waits as a hatched
    orange band across both lanes (the hatch tells them apart in greyscale too). The SM slowdown, the rest of the
    exposed time, lengthens the compute bars and is not hatched."""
    for row, stream in ((1, "compute"), (0, "comm")):
        spans = [((i.start) / unit, i.duration / unit) for i in tl.intervals if i.stream == stream]
        ax.broken_barh(spans, (row - 0.35, 0.7), facecolors=STREAM_COLOURS[stream], edgecolors="white",
                       linewidth=0.3 if len(spans) < 200 else 0)
    exp = [(a / unit, (b - a) / unit) for a, b in tl.exposed_intervals()]
    if exp:
        ax.broken_barh(exp, (-0.5, 2.0), facecolors=(*to_rgb(STREAM_COLOURS["exposed"]), 0.25),
                       edgecolors=STREAM_COLOURS["exposed"], linewidth=0, hatch=EXPOSED_HATCH)
    ax.set_yticks([0, 1], [_("communication"), _("compute")])
    ax.set_ylim(-0.6, 1.6)
    ax.set_xlim(0, tl.total_s / unit * 1.02)
    ax.set_xlabel(_("time ({unit})").format(unit=unit_label))
    ax.grid(axis="y", visible=False)


def _legend(ax: Axes) -> None:
    handles = [Patch(color=STREAM_COLOURS["compute"], label=_("compute")),
               Patch(color=STREAM_COLOURS["comm"], label=_("collective")),
               Patch(facecolor=(*to_rgb(STREAM_COLOURS["exposed"]), 0.35), edgecolor=STREAM_COLOURS["exposed"],
                     linewidth=0, hatch=EXPOSED_HATCH, label=_("GPU waits"))]
    ax.legend(handles=handles, fontsize=7, ncols=3, loc="upper center", bbox_to_anchor=(0.5, 1.32), frameon=False)


def timeline_figure(tl: overlap.Timeline, *, width: float = 8.0, unit: float = 1e-3, unit_label: str = "ms",
                    setting: str = "") -> Figure:
    """A Gantt chart of one timeline; ``setting`` (e.g. the SM share it was drawn at) follows the time axis' label."""
    fig, ax = new_figure(width, 2.0)
    timeline_axes(ax, tl, unit=unit, unit_label=unit_label)
    if setting:
        ax.set_xlabel(_("time ({unit})").format(unit=unit_label) + "; " + setting)
    _legend(ax)
    return fig


def bucket_sweep_figure(scenarios: dict[str, overlap.DPScenario], sizes_mib: list[float]) -> Figure:
    """Exposed DP time against bucket size, one line per scenario; DDP's default marked."""
    fig, ax = new_figure(7.5, 3.4)
    for (label, sc), colour in zip(scenarios.items(), ("#0072B2", "#D55E00", "#009E73"), strict=False):
        exp = [sc.timeline(m * 2**20).exposed_s for m in sizes_mib]
        ax.plot(sizes_mib, np.maximum(exp, 1e-5) * 1e3, "o-", color=colour, label=label, ms=4)
    ax.axvline(overlap.default_bucket_bytes() / 2**20, color="#555555", ls="--", lw=1)
    ax.text(overlap.default_bucket_bytes() / 2**20 * 1.05, 0.98, _("DDP default"), transform=ax.get_xaxis_transform(),
            fontsize=8, va="top")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(_("bucket size (MiB)"))
    ax.set_ylabel(_("exposed DP time per step (ms)"))
    ax.legend(fontsize=8)
    return fig


def roofline_table_html(systems: tuple[str, ...] = ("dgx-h100", "dgx-b200", "gb200-nvl72")) -> str:
    """C/W (tokens per GPU) per system over NVLink and over the NIC, the tokens per GPU above which DP/FSDP can hide
    their traffic (at peak), in a short table with one sentence under it; C (TFLOP/s) and W (GB/s) of each row
    behind a collapsed block (nothing dropped)."""
    worked = rooflines.worked_table(systems)
    ratio = {(r["system"], r["link"]): r["C_over_W"] for r in worked}
    short = table_html([_("system"), _("C/W over NVLink (tokens per GPU)"), _("C/W over the NIC (tokens per GPU)")],
                       [[html.escape(x), number(ratio[x, "nvlink"], ",.0f"), number(ratio[x, "nic"], ",.0f")]
                        for x in systems])
    note = _("<p>Compare the two columns: over the NIC a GPU needs about 8 to 15 times more tokens to hide its traffic "
             "than over NVLink.</p>")
    rows = [[html.escape(r["system"]), html.escape(r["link"]), number(r["C_TFLOPS"], ",.0f"),
             number(r["W_GBps"], ",.1f"), number(r["C_over_W"], ",.0f")] for r in worked]
    full = table_html([_("system"), _("link"), _("C (TFLOP/s, BF16 dense)"), _("W (GB/s, achievable)"),
                       _("C/W (tokens per GPU)")], rows)
    summary = _("C and W behind each ratio")
    return short + note + f"<details><summary>{html.escape(summary)}</summary>{full}</details>"


# ------------------------------------------------------------------------------------------------
# FSDP and TP cases built from the reference models


def fsdp_case(model: str, system: str, nodes: int, *, prefetch: int, sm_fraction: float = 0.0) -> overlap.Timeline:
    """FSDP of ``model`` over all GPUs of ``nodes`` nodes, one sequence per GPU: per-layer gathers of P/L·2 bytes."""
    spec = training.get_model(model)
    s = catalog.get_system(system)
    eff = training.data()["defaults"]["compute_efficiency"]
    per_node = max(s.gpus_per_host, s.gpus_per_domain)
    layer_bytes = spec.params / spec.layers * 2
    layer_fwd = 2 * spec.params / spec.layers * spec.seq / (s.gpu_spec.bf16_TFLOPS * 1e12 * eff)
    ag = costmodel.predict("allgather", system, per_node, layer_bytes, nodes=nodes, algo="nccl").time_s
    rs = costmodel.predict("reducescatter", system, per_node, layer_bytes, nodes=nodes, algo="nccl").time_s
    return overlap.fsdp_timeline(spec.layers, layer_fwd, 2 * layer_fwd, ag, rs, prefetch=prefetch,
                                 sm_fraction=sm_fraction)


def tp_case(model: str, system: str, tp: int, *, chunks: int, sm_fraction: float = 0.0) -> overlap.Timeline:
    """The second MLP GEMM of one layer (F → h) and its sequence-parallel reduce-scatter, for one sequence."""
    spec = training.get_model(model)
    s = catalog.get_system(system)
    eff = training.data()["defaults"]["compute_efficiency"]
    ffn = spec.ffn_hidden or 4 * spec.hidden
    gemm = 2 * spec.seq * ffn * spec.hidden / tp / (s.gpu_spec.bf16_TFLOPS * 1e12 * eff)
    nbytes = spec.seq * spec.hidden * 2
    return overlap.tp_overlap_timeline(gemm, overlap.collective_fn("reducescatter", system, tp), nbytes, chunks=chunks,
                                       sm_fraction=sm_fraction)


def tp_sm_limit(model: str, system: str, tp: int, *, chunks: int, exposed_share: float = 1.0) -> float:
    """The largest share of the SMs (0..1) the communication kernels may take while ``chunks`` chunks leave at most
    ``exposed_share`` × the unsplit case's exposed time exposed (1.0: the split still beats no split); 0.0 when not
    even free SMs do. Bisection on the share: the split's exposed time only grows with it (its GEMM runs
    1/(1 - share) slower), while the unsplit GEMM holds no communication kernel and does not change."""
    target = exposed_share * tp_case(model, system, tp, chunks=1).exposed_s

    def fits(share: float) -> bool:
        return tp_case(model, system, tp, chunks=chunks, sm_fraction=share).exposed_s <= target

    if not fits(0.0):
        return 0.0
    lo, hi = 0.0, 0.99
    if fits(hi):
        return hi
    for _step in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def smallest_keeping_up(sc: overlap.DPScenario, sizes_mib: list[int] = BUCKET_CHOICES_MIB) -> int | None:
    """The smallest offered bucket size (MiB) from which every larger offered size keeps up with the backward:
    the communication stream's busy time (no SMs taken) is at most the backward's. None if no offered size does."""
    fits = [sc.timeline(m * 2**20).comm_s <= sc.backward_s for m in sizes_mib]
    for i, m in enumerate(sizes_mib):
        if all(fits[i:]):
            return m
    return None


def bucket_hint(sc: overlap.DPScenario) -> str:
    """The DDP readout's sentence on bucket size, read off the simulated timeline with no SMs taken (§2's α–β bound,
    a straight-line fit of the all-reduce, is :func:`bucket_bound`, behind the readout's details)."""
    if sc.gpus_per_node * sc.nodes == 1:
        return _("With one data-parallel replica there is no gradient all-reduce to hide.")
    first = smallest_keeping_up(sc)
    if first is None:
        return _("Even with no SMs taken, no offered bucket size keeps up with the backward.")
    return _("Of the offered sizes, buckets ≥ {first} MiB keep up with the backward when no SMs are taken.").format(
        first=first)


def bucket_bound(sc: overlap.DPScenario) -> str:
    """§2's α–β bound on the bucket size (bytes, formatted) for the DDP readout's details, and why it can differ from
    the timeline's answer: the bound fits the all-reduce with a straight line, the timeline uses the cost model at
    each size."""
    mb = sc.min_bucket()
    says = (_("The α–β bound of §2 says no bucket size hides it.") if mb == float("inf") else
            _("The α–β bound of §2 asks for buckets ≥ {bound}.").format(bound=localize_numbers(format_size(mb))))
    return says + " " + _("It fits the all-reduce with a straight line, so it can differ from the timeline by one "
                          "bucket size.")


# ------------------------------------------------------------------------------------------------
# the dashboard

_SCENARIOS = ("DDP gradient buckets", "FSDP prefetch", "TP + SP overlap")


def _scenario_label(scenario: str) -> str:
    """A scenario's name (a key of :data:`_SCENARIOS`) as the dropdown shows it, in the current language."""
    return {"DDP gradient buckets": _("DDP gradient buckets"), "FSDP prefetch": _("FSDP prefetch"),
            "TP + SP overlap": _("TP + SP overlap")}[scenario]


def _t(x: float) -> str:
    return localize_numbers(format_time(x if x > 1e-12 else 0.0))  # rounding noise of the simulation reads as 0


def _pct(fraction: float, spec: str) -> str:
    """A share as a percentage: Python's ``%`` format in English, the French style (``12,5 %``) in French."""
    if language() != "fr":
        return format(fraction, spec + "%")
    return number(100 * fraction, spec + "f") + "\u00a0%"


def _vs_unsplit(exposed_s: float, unsplit_s: float) -> str:
    """A split's exposed time against no split's (both in s), the measure the chapter's key point uses: chunking
    lengthens the communication, so the overlapped share alone flatters the split."""
    if unsplit_s <= 0:
        return ""
    change = exposed_s / unsplit_s - 1
    if change <= 0:
        return _(" · exposed time {share} below no split's").format(share=_pct(-change, ".0"))
    return _(" · exposed time {share} above no split's").format(share=_pct(change, ".0"))


def _readout(tl: overlap.Timeline, extra: str, sm_fraction: float = 0.0, versus: str = "", more: str = "") -> str:
    """The dashboard's readout: first the answer (the exposed time, split into waiting for communication and the SM
    slowdown, so a number quoted with no SMs taken, the chapter's §2, and the dashboard's default, 15 % taken, can
    be told apart), then the step's totals (``versus``: a split's exposed time against no split's), then the setting
    in short sentences of small grey text (``extra``, HTML), and ``more`` (HTML) behind a collapsed block."""
    slow = max(tl.slowdown_s, 0.0)
    wait = max(tl.exposed_s - slow, 0.0)
    answer = _("<b>exposed {exposed}</b> = waiting for communication {wait} + SM slowdown {slow}").format(
        exposed=_t(tl.exposed_s), wait=_t(wait), slow=_t(slow))
    totals = (_("step {step} · compute work {work} · communication {comm}").format(
        step=_t(tl.total_s), work=_t(tl.work_s), comm=_t(tl.comm_s))
              + (_(", {share} of it overlapped with compute").format(share=_pct(tl.hidden_fraction, ".1"))
                 if tl.comm_s > 0 else _(" · no communication"))
              + versus)
    sm = (_("Communication kernels hold {share} of the SMs while they run; set “SMs taken by comm” to 0 for the "
            "exposed time without that cost. ").format(share=_pct(sm_fraction, ".0")) if sm_fraction > 0 else "")
    summary = _("more on this setting")
    folded = f"<details><summary>{html.escape(summary)}</summary>{more}</details>" if more else ""
    return f"{answer}<br>{totals}<br><span style=\"color:#555;font-size:90%\">{sm}{extra}{folded}</span>"


def _ddp_notes(sc: overlap.DPScenario, tl: overlap.Timeline, model: str, nodes: int) -> tuple[str, str]:
    """The DDP scenario's grey sentences (the setting, the bucket count, :func:`bucket_hint`) and its details (what
    the backward is, §2's bound, the controls of the other scenarios), both plain text."""
    gpus = sc.gpus_per_node * sc.tp
    shown = " ".join((
        _("{model}, TP {tp}: {nodes} node(s) of {gpus} GPUs, {total} GPUs in all.").format(
            model=model, tp=sc.tp, nodes=nodes, gpus=gpus, total=number(nodes * gpus, ",d")),
        _("Gradient {grad} per GPU, in {buckets} buckets.").format(
            grad=localize_numbers(format_size(sc.grad_bytes, binary=False)), buckets=tl.notes["buckets"]),
        bucket_hint(sc)))
    bound = bucket_bound(sc) if sc.gpus_per_node * sc.nodes > 1 else ""  # one replica: no all-reduce to bound
    more = " ".join(x for x in (
        _("A node is one NVLink domain. The buckets overlap the last micro-batch's backward."), bound,
        _("FSDP prefetch and TP chunks belong to the other scenarios.")) if x)
    return shown, more


def _tp_notes(model: str, chunks: int, unsplit_s: float | None, others: tuple[int, int, int]) -> tuple[str, str]:
    """The TP scenario's grey sentences and details (plain text); ``unsplit_s``: no split's exposed time (s), None
    with one chunk; ``others``: the nodes, DDP bucket (MiB) and FSDP prefetch the other scenarios use, echoed in
    view so that moving them visibly says they change nothing here."""
    nodes, bucket_mib, prefetch = others
    shown = _("{model}: one MLP GEMM and its reduce-scatter over TP 8, in {chunks} chunk(s).").format(
        model=model, chunks=chunks) + " " + _(
        "Nodes ({nodes}), DDP bucket ({bucket} MiB) and FSDP prefetch ({prefetch}) do not change it.").format(
        nodes=nodes, bucket=bucket_mib, prefetch=prefetch)
    more = _("TP stays inside one NVLink domain.")
    if unsplit_s is not None:  # chunking lengthens the communication, so its overlapped share flatters the split
        shown += " " + _("Judge the split by its exposed time against the unsplit {unsplit}, not by the overlapped "
                         "share.").format(unsplit=_t(unsplit_s))
        more = _("Each chunk pays its own latency, so the communication grows with the chunks.") + " " + more
    return shown, more


def overlap_dashboard(*, models: tuple[str, ...] = ("llama3-8b", "llama3-70b"),
                      systems: tuple[str, ...] = ("dgx-h100", "dgx-b200", "gb200-nvl72")) -> Dashboard:
    """Scenario, model, system, nodes, bucket size, prefetch depth, TP chunks and SM share → a step timeline."""
    style = {"description_width": "initial"}
    ctl = {
        # the shown names are the values (plain options, as before); render reads them back to the scenario
        "scenario": w.Dropdown(options=[_scenario_label(s) for s in _SCENARIOS], value=_scenario_label(_SCENARIOS[0]),
                               description=_("scenario"), style=style),
        "model": w.Dropdown(options=list(models), value=models[0], description=_("model"), style=style),
        "system": w.Dropdown(options=list(systems), value=systems[0], description=_("system"), style=style),
        "nodes": w.SelectionSlider(options=[1, 2, 4, 8, 16, 32, 64, 128, 256], value=64, description=_("nodes"),
                                   style=style, continuous_update=False),
        "bucket_mib": w.SelectionSlider(options=BUCKET_CHOICES_MIB, value=25, description=_("DDP bucket (MiB)"),
                                        style=style, continuous_update=False),
        "prefetch": w.IntSlider(value=1, min=0, max=3, description=_("FSDP prefetch (layers)"), style=style,
                                continuous_update=False),
        "chunks": w.IntSlider(value=overlap.data()["defaults"]["tp_overlap_chunks"], min=1, max=8,
                              description=_("TP overlap chunks"), style=style, continuous_update=False),
        "sm_fraction": w.FloatSlider(value=overlap.data()["defaults"]["comm_sm_fraction"], min=0.0, max=0.3,
                                     step=0.05, description=_("SMs taken by comm"), style=style,
                                     continuous_update=False),
    }

    def render(scenario, model, system, nodes, bucket_mib, prefetch, chunks, sm_fraction):
        scenario = {_scenario_label(s): s for s in _SCENARIOS}.get(scenario, scenario)
        versus = ""  # the TP scenario's split against no split
        if scenario == _SCENARIOS[0]:
            sc = overlap.dp_scenario(model, system, nodes, tp=1 if model == "llama3-8b" else 8)
            tl = sc.timeline(bucket_mib * 2**20, sm_fraction)
            extra, more = _ddp_notes(sc, tl, model, nodes)
        elif scenario == _SCENARIOS[1]:
            tl = fsdp_case(model, system, nodes, prefetch=prefetch, sm_fraction=sm_fraction)
            extra = _("{model}: FSDP over {nodes} node(s), each all-gather issued {prefetch} layer(s) ahead.").format(
                model=model, nodes=nodes, prefetch=prefetch)
            more = _("DDP bucket and TP chunks belong to the other scenarios.")
        else:
            tl = tp_case(model, system, 8, chunks=chunks, sm_fraction=sm_fraction)
            unsplit = tp_case(model, system, 8, chunks=1, sm_fraction=sm_fraction).exposed_s if chunks > 1 else None
            versus = "" if unsplit is None else _vs_unsplit(tl.exposed_s, unsplit)
            extra, more = _tp_notes(model, chunks, unsplit, (nodes, bucket_mib, prefetch))
        unit, label = (1e-3, "ms") if tl.total_s > 2e-3 else (1e-6, "µs")
        return timeline_figure(tl, unit=unit, unit_label=label), _readout(tl, html.escape(extra), sm_fraction,
                                                                          versus, html.escape(more))

    return Dashboard(ctl, render, columns=2, freeze_layout=True)


def sm_cost_html(sc: overlap.DPScenario, fractions: tuple[float, ...] = (0.0, 0.05, 0.15, 0.3),
                 buckets_mib: tuple[int, ...] = (4, 25, 256), short: tuple[tuple[float, ...], tuple[int, ...]] = (
                     (0.0, 0.15), (25, 256))) -> str:
    """§3's answer: exposed time (s, formatted) at no SMs and at the dashboard's 15 % (rows) for DDP's 25 MiB and a
    large bucket (columns), in a short table with one sentence under it; every share of SMs taken and bucket size,
    with each case's SM slowdown and communication stream busy time, behind a collapsed block (nothing dropped)."""
    tls = {(f, m): sc.timeline(m * 2**20, sm_fraction=f) for f in fractions for m in buckets_mib}
    for f in short[0]:
        for m in short[1]:
            tls.setdefault((f, m), sc.timeline(m * 2**20, sm_fraction=f))
    rows = [[_pct(f, ".0")] + [_t(tls[f, m].exposed_s) for m in short[1]] for f in short[0]]
    table = table_html([_("SMs taken")] + [_("exposed, {size} buckets").format(size=f"{m} MiB") for m in short[1]],
                       rows, escape=True)
    note = _("<p>Read down a column: taking SMs never lowers the exposed time, and it costs the 25 MiB buckets "
             "more than the 256 MiB ones.</p>")
    full = "<br>".join(html.escape(_("SMs taken {f}, bucket {m} MiB: exposed {e} (SM slowdown {s}, comm stream busy "
                                     "{c})").format(f=_pct(f, ".0"), m=m, e=_t(t.exposed_s),
                                                    s=_t(max(t.slowdown_s, 0.0)), c=_t(t.comm_s)))
                       for (f, m), t in tls.items() if f in fractions and m in buckets_mib)
    summary = _("Every share of SMs taken (0 to 30 %) and bucket size (4 to 256 MiB): exposed time, SM slowdown and "
                "busy time")
    return (table + note + f"<details><summary>{html.escape(summary)}</summary>"
            f"<div style='margin-top:6px'>{full}</div></details>")


def tp_split_details_html(model: str = "llama3-70b", system: str = "dgx-h100", tp: int = 8,
                          fractions: tuple[float, ...] = (0.0, 0.15), chunks: tuple[int, ...] = (1, 2, 4, 8)) -> str:
    """§5's full printout behind a collapsed block: the bytes per GPU of a plain all-reduce against sequence
    parallelism's pair, then for each SM share and chunk count the fused GEMM + reduce-scatter time and its exposed
    time (s, formatted) against no split, and the SM shares (%) up to which 4 and 8 chunks halve or beat no split."""
    spec = training.get_model(model)
    sp = overlap.sp_bytes(spec.seq * spec.hidden * 2, tp)
    lines = [_("bytes per GPU: all-reduce {ar}, reduce-scatter + all-gather {sp}").format(
        ar=format_size(sp["allreduce"]), sp=format_size(sp["sp_total"]))]
    for f in fractions:
        unsplit = tp_case(model, system, tp, chunks=1, sm_fraction=f).exposed_s
        for c in chunks:
            t = tp_case(model, system, tp, chunks=c, sm_fraction=f)
            lines.append(_("{f} of SMs taken, {c} chunk(s): GEMM + reduce-scatter {total}, exposed {e} ({less} less "
                           "than no split)").format(f=_pct(f, ".0"), c=c, total=_t(t.total_s), e=_t(t.exposed_s),
                                                    less=_pct(1 - t.exposed_s / unsplit, ".0")))
    for c in (4, 8):
        half, even = (tp_sm_limit(model, system, tp, chunks=c, exposed_share=x) for x in (0.5, 1.0))
        lines.append(_("{c} chunks halve the unsplit exposed time up to {half} of SMs taken, beat no split up to "
                       "{even}").format(c=c, half=_pct(half, ".0"), even=_pct(even, ".0")))
    body = "<br>".join(html.escape(line) for line in lines)
    summary = _("Every chunk count at 0 % and 15 % of the SMs, and the SM shares up to which a split halves or beats "
                "no split")
    return f"<details><summary>{html.escape(summary)}</summary><div style='margin-top:6px'>{body}</div></details>"


# --- the lines the chapter's cells print (each built with _() so the French edition reads them in French) ---

def toy_line(tl: overlap.Timeline) -> str:
    """§1's toy step: its total, compute and exposed time (s, two decimals) and the share of its communication
    hidden behind compute."""
    return localize_numbers(_("step {total} s, compute {work} s, exposed {exposed} s, {hidden} of the communication "
                              "hidden").format(total=f"{tl.total_s:.2f}", work=f"{tl.work_s:.2f}",
                                               exposed=f"{tl.exposed_s:.2f}", hidden=_pct(tl.hidden_fraction, ".0")))


def bucket_cases() -> dict[str, overlap.DPScenario]:
    """§2's two data-parallel cases on DGX H100 (64 nodes), keyed by their label in the learner's language: Llama 3 8B
    with ZeRO-1 DP first, then Llama 3 70B with TP 8 inside each node."""
    return {_("Llama 3 8B, ZeRO-1 DP over 512 GPUs"): overlap.dp_scenario("llama3-8b", "dgx-h100", 64),
            _("Llama 3 70B, TP 8 + DDP over 64 nodes"): overlap.dp_scenario("llama3-70b", "dgx-h100", 64, tp=8)}


def bucket_lines(cases: dict[str, overlap.DPScenario]) -> str:
    """One line per case: gradient bytes per GPU, backward time, the smallest bucket whose all-reduces keep up with
    the backward pass (none when no size does) and the exposed time (s, formatted) with DDP's 25 MiB default."""
    lines = []
    for label, sc in cases.items():
        mb = sc.min_bucket()
        need = _("none hides it") if mb == float("inf") else f"≥ {format_size(mb)}"
        t25 = sc.timeline(overlap.default_bucket_bytes())
        lines.append(localize_numbers(_("{label}: gradient {grad} per GPU, backward {backward}; buckets that fit: "
                                        "{need}; with 25 MiB: exposed {exposed}").format(
            label=label, grad=format_size(sc.grad_bytes, binary=False), backward=format_time(sc.backward_s),
            need=need, exposed=format_time(t25.exposed_s))))
    return "\n".join(lines)


def deepseek_sm_line() -> str:
    """DeepSeek-V3's share of a Hopper GPU's SMs given to communication (SMs, then %)."""
    sm = overlap.data()["sm"]
    return localize_numbers(_("DeepSeek-V3's share: {comm}/{total} = {share}").format(
        comm=sm["deepseek_comm_sms"], total=sm["h100_sms"], share=_pct(sm["deepseek_comm_sms"] / sm["h100_sms"], ".0")))


def prefetch_lines(model: str = "llama3-8b", system: str = "dgx-h100", nodes: int = 8,
                   depths: tuple[int, ...] = (0, 1, 2)) -> str:
    """§4: for each FSDP prefetch depth (layers), the step, its exposed time and its compute (s, formatted)."""
    lines = []
    for d in depths:
        t = fsdp_case(model, system, nodes, prefetch=d)
        lines.append(localize_numbers(_("prefetch {depth}: step {step}, exposed {exposed} (compute {compute})").format(
            depth=d, step=format_time(t.total_s), exposed=format_time(t.exposed_s), compute=format_time(t.work_s))))
    return "\n".join(lines)


def tp_setting(chunks: int, sm_fraction: float) -> str:
    """The setting a TP timeline was drawn at, for its time axis: the chunk count and the share of SMs (%) taken."""
    return ngettext("{n} chunk, {share} % of the SMs taken by communication",
                    "{n} chunks, {share} % of the SMs taken by communication", chunks).format(
        n=chunks, share=number(sm_fraction * 100, "g"))


def pp_cp_lines(system: str = "dgx-h100", seqs: tuple[int, ...] = (8192, 32768)) -> str:
    """§6: one pipeline hand-off (8K tokens × 8192 hidden, BF16, TP 8, across nodes), then Llama 3 70B's ring
    attention with CP 8 over NVLink and over the NIC: tokens per GPU against the threshold that hides the KV
    exchange, and the time (s, formatted) left exposed per layer."""
    lines = [localize_numbers(_("one PP hand-off (8K x 8192 BF16, TP 8, across nodes): {time}").format(
        time=format_time(overlap.pp_p2p_time(system, 8192 * 8192 * 2, tp=8))))]
    for link in ("nvlink", "nic"):
        flops, rate = rooflines.gpu_rates(system, link=link, efficiency=0.55)
        for s in seqs:
            r = overlap.cp_ring_attention(seq=s, cp=8, hidden=8192, kv_hidden=1024, flops_per_s=flops, link_Bps=rate)
            lines.append(_("Llama 3 70B, CP 8 over {link}, {seq} tokens: {per_gpu} tokens/GPU vs threshold "
                           "{threshold}: exposed per layer {exposed}").format(
                link=f"{link:6s}", seq=whole(s).rjust(6), per_gpu=whole(round(r["tokens_per_gpu"])).rjust(6),
                threshold=whole(round(r["threshold_tokens_per_gpu"])).rjust(5),
                exposed=localize_numbers(format_time(r["exposed_s"]))))
    return "\n".join(lines)


def roofline_lines(system: str = "dgx-h100") -> str:
    """§7: three cases over the NIC, each its value against the roofline threshold (tokens per GPU, or the
    expert's F_e) and whether it can hide its communication; then the Llama 3 70B MLP's F on TP 8 over NVLink
    against its threshold."""
    flops, rate = rooflines.gpu_rates(system, link="nic")
    cases = [(_("Llama 3 8B ZeRO-1 DP, 8,192 tokens/GPU, 8 ranks per node"),
              rooflines.dp_roofline(8192, flops, rate, per_node=8)),
             (_("Llama 3 70B TP8+DDP, 8,192 tokens/GPU, 1 rank per node"),
              rooflines.dp_roofline(8192, flops, rate, per_node=1)),
             (_("DeepSeek-V3 experts (F_e 2048) over IB, 7/8 remote"),
              rooflines.ep_roofline(2048, flops, rate, remote_fraction=7 / 8))]
    lines = [_("{label}: {value} vs threshold {threshold} -> {verdict}").format(
        label=label, value=number(r.value, ",.0f"), threshold=number(r.threshold, ",.0f"),
        verdict=_("COMMUNICATION-bound") if r.comm_bound else _("can hide")) for label, r in cases]
    flops_n, rate_n = rooflines.gpu_rates(system, link="nvlink")
    lines.append(_("Llama 3 70B MLP on TP 8 over NVLink: F = {f} vs {threshold}").format(
        f=number(28672, ",d"), threshold=number(rooflines.tp_roofline(28672, 8, flops_n, rate_n).threshold, ",.0f")))
    return "\n".join(lines)

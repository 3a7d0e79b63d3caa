"""Chapter 05 (NVL72, rack scale): the ring vs in-switch (NVLS) all-reduce figure, the MoE all-to-all figure and
the dashboard renderer.

``moe_view`` takes the dashboard's control values and returns ``(Figure, html)``; the models are
:mod:`nvcourse.costmodel` (NCCL's protocols) and :mod:`nvcourse.fabric.moe`.
"""

from __future__ import annotations

import html as _html

import ipywidgets as w
import numpy as np
from matplotlib.figure import Figure

from .. import catalog
from ..costmodel import factors, predict, predict_sweep, validation
from ..fabric.moe import MoEConfig, domain_allreduce_time, moe_alltoall_time, moe_layer_time
from ..i18n import data_text, localize_numbers, number, whole
from ..i18n import translate as _
from ..plots import KIND_COLOURS, bytes_axis, new_figure, time_axis
from ..tables import table_html
from ..units import format_size, format_time
from ..widgets import Dashboard

__all__ = ["NVLS_SIZES", "PUBLISHED_RUNS", "SUMMARY_CASES", "nvls_vs_ring", "published_runs_text",
           "ring_vs_nvls_figure", "ring_vs_nvls_summary", "moe_figure", "moe_view", "system_name", "domain_text",
           "tp_allreduce_lines", "moe_alltoall_lines", "moe_dashboard"]

#: Bytes per GPU of the ring vs NVLS figure: 64 KiB .. 4 GiB.
NVLS_SIZES = 2.0 ** np.arange(16, 33)
#: The curves of :func:`ring_vs_nvls_figure`: (algorithm, colour of its link kind).
_RING_AND_NVLS = (("ring", "pcie"), ("nvls", "nvlink"))


def system_name(system: str) -> str:
    """The catalog's name of ``system`` (an id such as ``"dgx-b200"``) in the current language."""
    return data_text(catalog.get_system(system).name)


def _rounded(value: float) -> str:
    """``value`` rounded to a whole number as running text writes it (English ``1800``, French ``1 800``)."""
    return whole(int(round(value)))


def _domain_lines(system: str) -> list[str]:
    """§1's four lines on one system: its NVLink domain, its links per GPU against its scale-out NIC (GB/s per
    direction, at line rate and achievable) and its switch wiring."""
    s = catalog.get_system(system)
    trays = s.gpus_per_domain // s.gpus_per_host
    domain = _("  NVLink domain {gpus} GPUs = {trays} x {per_host} GPUs per host/compute tray; {chips} NVLink switch "
               "chips").format(gpus=s.gpus_per_domain, trays=trays, per_host=s.gpus_per_host, chips=s.nvswitch_count)
    if s.switch_trays:
        domain += _(" in {trays} switch trays").format(trays=s.switch_trays)
    nvl, nic = s.link.achievable_GBps_dir * s.links_per_gpu, catalog.get_link(s.nic_link).achievable_GBps_dir
    per_gpu = _("  per GPU: {links} x {link}: {nvlink} GB/s per direction; scale-out NIC {nic} GB/s per direction -> "
                "NVLink/NIC = {ratio}x at line rate, {achievable}x achievable ({nvl} vs {nic_achievable} GB/s)").format(
        links=s.links_per_gpu, link=data_text(s.link.name), nvlink=_rounded(s.scaleup_GBps_dir),
        nic=_rounded(s.scaleout_GBps_dir_per_gpu), ratio=_rounded(s.scaleup_GBps_dir / s.scaleout_GBps_dir_per_gpu),
        achievable=_rounded(nvl / nic), nvl=_rounded(nvl), nic_achievable=_rounded(nic))
    wiring = _("  links from each GPU to each switch chip: {links}; in-switch reduction: {reduction}").format(
        links=sorted(set(s.switch_links_per_gpu)), reduction=_("True") if s.in_switch_reduction else _("False"))
    return [system_name(system), domain, per_gpu, wiring]


def domain_text(systems: tuple[str, ...] = ("dgx-b200", "gb200-nvl72")) -> str:
    """§1's readout: each system's NVLink domain (:func:`_domain_lines`, a blank line after each), then the NVL72's
    total GPU NVLink bandwidth (TB/s, both directions) beside NVIDIA's rounded figure."""
    blocks = ["\n".join(_domain_lines(s)) + "\n" for s in systems]
    nvl = catalog.get_system("gb200-nvl72")
    total = _("NVL72 total GPU NVLink bandwidth: {gpus} x {per_gpu} TB/s (bidirectional) = {total} TB/s  (NVIDIA's "
              "'130 TB/s')").format(gpus=nvl.gpus_per_domain, per_gpu=number(2 * nvl.scaleup_GBps_dir / 1000, ".1f"),
                                    total=number(nvl.gpus_per_domain * 2 * nvl.scaleup_GBps_dir / 1000, ".1f"))
    return "\n".join([*blocks, total])


def tp_allreduce_lines(nbytes: float = 4096 * 8192 * 2,
                       cases: tuple[tuple[str, int], ...] = (("dgx-b200", 8), ("gb200-nvl72", 8),
                                                             ("gb200-nvl72", 16))) -> str:
    """§2's lines: one tensor-parallel all-reduce of ``nbytes`` per GPU for each (system, TP size) of ``cases``,
    NCCL's ring with its best protocol against NVLS (:func:`nvls_vs_ring`), times and their ratio."""
    lines = []
    for system, gpus in cases:
        ring, nvls, gain = nvls_vs_ring(nbytes, gpus, system)
        lines.append(_("{system} TP={tp} {size}: ring/{proto} {ring}, in-switch {nvls} ({gain}x)").format(
            system=f"{system:<12}", tp=f"{gpus:<3}", size=localize_numbers(format_size(nbytes)), proto=ring.proto,
            ring=_time(ring.time_s), nvls=_time(nvls.time_s), gain=number(gain, ".2f")))
    return "\n".join(lines)


def moe_alltoall_lines(cfg: MoEConfig, ep: int = 64, systems: tuple[str, ...] = ("dgx-b200", "gb200-nvl72")) -> str:
    """§3's lines: per system, the bytes one GPU sends over NVLink and over the network in one MoE dispatch
    all-to-all over ``ep`` GPUs, its time and bottleneck, and the time of all MoE layers of one training step."""
    lines = []
    for system in systems:
        t = moe_alltoall_time(cfg, ep, system)
        bound = _("network-bound") if t.bottleneck == "network" else _("NVLink-bound")
        lines.append(_("{system} EP={ep}: NVLink {nvlink}, network {network} per GPU -> {time} per all-to-all "
                       "({bound}); per step {step}").format(
            system=f"{system:<12}", ep=ep, nvlink=localize_numbers(format_size(t.nvlink_bytes)),
            network=localize_numbers(format_size(t.network_bytes)), time=_time(t.time_s), bound=bound,
            step=_time(moe_layer_time(cfg, ep, system)["per_step_s"])))
    return "\n".join(lines)


def _algo_label(algo: str) -> str:
    """The legend's name of ``algo`` (``"ring"`` or ``"nvls"``) in the current language."""
    return _("ring (NCCL's best protocol)") if algo == "ring" else _("in-switch (NVLS)")


def nvls_vs_ring(nbytes: float = 2**30, gpus: int = 72, system: str = "gb200-nvl72"):
    """NCCL's model (chapter 04b: protocols, NVLS pipeline) for one all-reduce of ``nbytes`` per GPU: the ring with
    its best protocol and NVLS. Returns ``(ring, nvls, ring_time / nvls_time)``; times in seconds on the predictions.
    The one place the course's "1 GiB over 72 GPUs" ring-vs-NVLS figures come from (chapters 05 and 08b)."""
    ring, nvls = (predict("allreduce", system, gpus, nbytes, algo=a) for a in ("ring", "nvls"))
    return ring, nvls, ring.time_s / nvls.time_s


def ring_vs_nvls_figure(sizes=NVLS_SIZES) -> tuple[Figure, str]:
    """All-reduce time (s) against ``sizes`` (bytes per GPU) on a GB200 NVL72: NCCL's ring with its best protocol
    and NVLS, on 8 and 72 GPUs, and the ring with a Simple-only α (the chapter's formula). Returns the figure and
    the lines the chapter prints under it: NVLS's latency and efficiency, the ring/NVLS byte ratio, and times at
    1 GiB and 256 KiB."""
    system = "gb200-nvl72"
    fig, ax = new_figure(8, 3.6)
    # the protocol-aware model (chapter 04b): NCCL's ring with its best protocol (LL/LL128/Simple) vs NVLS (Simple only)
    for g, ls in ((8, "--"), (72, "-")):
        for algo, colour in _RING_AND_NVLS:
            times = predict_sweep("allreduce", system, g, sizes, algo=algo).time_s
            ax.plot(sizes, times, ls, color=KIND_COLOURS[colour],
                    label=_("{what}, {g} GPUs").format(what=_algo_label(algo), g=g))
    ax.plot(
        sizes,
        [domain_allreduce_time(system, n, 72) for n in sizes],
        ":",
        color=KIND_COLOURS["pcie"],
        lw=1,
        label=_("ring, 72 GPUs, Simple α only (the formula above)"),
    )
    bytes_axis(ax, "x", _("bytes per GPU"))
    time_axis(ax, "y", _("all-reduce time (NVL72)"))
    ax.legend(fontsize=8)

    eta = factors.NVLS_EFFICIENCY
    lines = [
        _("NVLS latency α_NVLS = {lat} µs; η = {hopper} (Hopper), {blackwell} (Blackwell)").format(
            lat=number(factors.NVLS_LATENCY_US, ".0f"), hopper=number(eta["hopper"]),
            blackwell=number(eta["blackwell"])),
        _("On an NVL72 or a B200, where the Simple-only formula says NVLS starts to pay: {min_gpus} GPUs; on an "
          "H100: {h100} (the course's estimates, from published runs; NCCL itself enables NVLS from 2)").format(
            min_gpus=catalog.get_system(system).nvls_min_gpus, h100=catalog.get_system("dgx-h100").nvls_min_gpus),
    ]
    for g in (8, 72):
        lines.append(_("g = {g}: bytes per GPU ring / NVLS = 2(g-1)/(g+1) = {ratio}; with η (Blackwell) the "
                       "bandwidth term shrinks {gain}x; ring latencies 2(g-1) = {steps}").format(
            g=f"{g:>2}", ratio=number(2 * (g - 1) / (g + 1), ".2f"),
            gain=number(2 * (g - 1) * eta["blackwell"] / (g + 1), ".2f"), steps=2 * (g - 1)))
    ring, insw, gain = nvls_vs_ring(2**30, 72, system)
    lines.append(_("1 GiB over 72 GPUs (NCCL's model): ring/{proto} {ring}, in-switch (NVLS) {nvls}: {gain}x").format(
        proto=ring.proto, ring=_time(ring.time_s), nvls=_time(insw.time_s), gain=number(gain, ".2f")))
    # small buffers: the ring runs LL (0.6 µs per NVLink step), not the Simple α of the formula
    small = 256 * 2**10
    r72, v72 = (predict("allreduce", system, 72, small, algo=a) for a in ("ring", "nvls"))
    simple = domain_allreduce_time(system, small, 72)
    lines.append(_("256 KiB over 72 GPUs: ring/{proto} {ring}, NVLS {nvls}: {gain}x (with a Simple-only α the ring "
                   "would take {simple}, {simple_gain}x)").format(
        proto=r72.proto, ring=_time(r72.time_s), nvls=_time(v72.time_s), gain=number(r72.time_s / v72.time_s, ".1f"),
        simple=_time(simple), simple_gain=number(simple / v72.time_s, ".1f")))
    r8, v8 = (predict("allreduce", system, 8, small, algo=a) for a in ("ring", "nvls"))
    lines.append(_("256 KiB over 8 GPUs: ring/{proto} {ring}, NVLS {nvls}").format(
        proto=r8.proto, ring=_time(r8.time_s), nvls=_time(v8.time_s)))
    return fig, "\n".join(lines)


#: The three all-reduces the short table of :func:`ring_vs_nvls_summary` compares: (bytes per GPU, GPUs).
SUMMARY_CASES = ((2**30, 72), (256 * 2**10, 72), (256 * 2**10, 8))


def ring_vs_nvls_summary() -> tuple[Figure, str]:
    """The ring vs NVLS figure and, under it, a short HTML table: three all-reduces on a GB200 NVL72 (NCCL's model),
    the ring's time with its protocol, NVLS's time and their ratio, one sentence on what to look at, and the lines
    of :func:`ring_vs_nvls_figure` (the model's constants, the byte ratios, the Simple-only ring) behind
    ``<details>``."""
    fig, lines = ring_vs_nvls_figure()
    rows = []
    for nbytes, gpus in SUMMARY_CASES:
        ring, nvls, gain = nvls_vs_ring(nbytes, gpus)
        rows.append([_("{size} over {gpus} GPUs").format(size=localize_numbers(format_size(nbytes)), gpus=gpus),
                     _("{time} ({proto})").format(time=_time(ring.time_s), proto=ring.proto), _time(nvls.time_s),
                     f"<b>{number(gain, '.2f')}×</b>"])
    return fig, (
        table_html([_("all-reduce (NCCL's model)"), _("ring (its protocol)"), _("in-switch (NVLS)"),
                    _("ring / NVLS")], rows)
        + _("<p>Look at the last column: above 1, NVLS is the faster. On 72 GPUs it wins at both sizes; on 8 GPUs "
            "the ring keeps the small buffer.</p>")
        + _("<details><summary>the model's constants, the byte ratios and the Simple-only ring</summary>")
        + "<pre>" + _html.escape(lines) + "</pre></details>"
    )


#: The published all-reduce runs §6 of chapter 05 compares with NCCL's model: (ring run, NVLS run) of the costmodel's
#: validation data for each system, and the system's name in words.
PUBLISHED_RUNS = (("h100-8gpu-allreduce-ring", "h100-8gpu-allreduce-nvls", "8 x H100"),
                  ("nvl72-allreduce-ring", "nvl72-allreduce-nvls", "NVL72"))


def published_runs_text() -> str:
    """Four published nccl-tests all-reduce runs (bus bandwidth in GB/s) against NCCL's model, each named in words
    (system, GPUs, algorithm, bytes per GPU), then the NVLS / ring ratio of the model and of the published runs."""
    ids = [i for ring_id, nvls_id, _name in PUBLISHED_RUNS for i in (ring_id, nvls_id)]
    rows = {r.case.id: r for r in validation.compare([k for k in validation.cases() if k.id in ids])}
    lines = []
    for ring_id, nvls_id, name in PUBLISHED_RUNS:
        for run_id in (ring_id, nvls_id):
            r = rows[run_id]
            algo = _("ring") if r.predicted_algo == "ring" else "NVLS"
            lines.append(_("{name}, {algo}, {size}: bus bandwidth model {model} GB/s, published {published} GB/s "
                           "({error})").format(
                name=name, algo=algo, size=localize_numbers(format_size(r.case.bytes)),
                model=number(r.predicted_busbw_GBps, ".0f"), published=number(r.case.busbw_GBps, ".0f"),
                error=number(100 * r.error, "+.1f") + " %"))
    for ring_id, nvls_id, name in PUBLISHED_RUNS:
        model = rows[nvls_id].predicted_busbw_GBps / rows[ring_id].predicted_busbw_GBps
        published = rows[nvls_id].case.busbw_GBps / rows[ring_id].case.busbw_GBps
        lines.append(_("{name}: NVLS / ring  model {model}x, published {published}x").format(
            name=name, model=number(model, ".2f"), published=number(published, ".2f")))
    return "\n".join(lines)


def _time(seconds: float) -> str:
    """A time in the unit :func:`format_time` picks, written the current language's way."""
    return localize_numbers(format_time(seconds))


def moe_figure(
    cfg: MoEConfig, eps=(8, 16, 32, 64), systems=("dgx-b200", "gb200-nvl72"), *, width: float = 8.0
) -> Figure:
    """Time of one MoE all-to-all (dispatch) vs EP size on an 8-GPU domain + InfiniBand and on NVL72."""
    fig, ax = new_figure(width, 3.6)
    styles = {"dgx-b200": KIND_COLOURS["infiniband"], "gb200-nvl72": KIND_COLOURS["nvlink"]}
    for s in systems:
        t = [moe_alltoall_time(cfg, e, s).time_s for e in eps]
        ax.plot(eps, t, "o-", color=styles.get(s, "#555555"), label=system_name(s))
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(eps), [str(e) for e in eps])
    ax.set_xlabel(_("expert-parallel GPUs (EP)"))
    time_axis(ax, "y", _("one dispatch all-to-all"))
    ax.legend(fontsize=8)
    return fig


def moe_view(
    hidden: int, tokens: int, experts: int, top_k: int, ep: int = 64, moe_layers: int = 58, bytes_per_elem: float = 2.0
) -> tuple[Figure, str]:
    """Dashboard of chapter 05: the MoE all-to-all on an 8-GPU domain + InfiniBand vs one NVL72 domain."""
    cfg = MoEConfig(
        hidden=int(hidden),
        tokens=int(tokens),
        experts=int(experts),
        top_k=int(top_k),
        bytes_per_elem=bytes_per_elem,
        moe_layers=int(moe_layers),
    )
    asked = int(ep)
    ep = min(asked, cfg.experts)  # each EP GPU holds at least one expert
    rows = []
    fig, (ax1, ax2) = new_figure(9.0, 3.6, ncols=2)
    names, per_layer, per_step, colours = [], [], [], []
    for s, colour in (("dgx-b200", KIND_COLOURS["infiniband"]), ("gb200-nvl72", KIND_COLOURS["nvlink"])):
        one = moe_alltoall_time(cfg, ep, s)
        layer = 4 * one.time_s
        names.append(_("8-GPU domain\n+ InfiniBand") if s == "dgx-b200" else _("72-GPU domain\n(NVL72)"))
        per_layer.append(layer)
        per_step.append(layer * cfg.moe_layers)
        colours.append(colour)
        rows.append([_html.escape(system_name(s)), localize_numbers(format_size(one.nvlink_bytes)),
                     localize_numbers(format_size(one.network_bytes)), _time(one.time_s), _time(layer),
                     _time(layer * cfg.moe_layers), _("network") if one.bottleneck == "network" else one.bottleneck])
    ax1.bar(names, np.array(per_layer) * 1e3, color=colours)
    ax1.set_ylabel(_("ms per MoE layer (4 all-to-alls)"))
    ax1.set_ylim(bottom=0)
    ax2.bar(names, per_step, color=colours)
    ax2.set_ylabel(_("seconds per step (all MoE layers)"))
    ax2.set_ylim(bottom=0)
    # The configuration heads the readout rather than the figure: matplotlib lays out and rasterises text glyph by
    # glyph, and the figure is redrawn on every slider change.
    table = (
        _("<p><b>EP = {ep} GPUs</b>").format(ep=ep)
        + (_(" (the slider's {asked}, capped at the number of experts)").format(asked=asked) if ep < asked else "")
        + (_(" ({experts} experts do not split evenly over {ep} GPUs: some hold {more}, some {fewer}; the model "
             "assumes an even load)").format(experts=cfg.experts, ep=ep, more=-(-cfg.experts // ep),
                                             fewer=cfg.experts // ep)
           if cfg.experts % ep else "")
        + _(", {tokens} tokens/GPU, hidden {hidden}, top-{k} of {experts} experts, {layers} MoE layers</p>").format(
            tokens=whole(cfg.tokens), hidden=whole(cfg.hidden), k=cfg.top_k, experts=cfg.experts, layers=cfg.moe_layers)
        + table_html([_("system"), _("NVLink bytes/GPU"), _("network bytes/GPU"), _("one all-to-all"),
                      _("per layer (4)"), _("per step"), _("bound by")], rows)
        + _("<p>The NVL72 domain is <b>{gain}×</b> faster for this layer.</p>").format(
            gain=number(per_layer[0] / per_layer[1], ".1f"))
        + _("<p><i>Assumes uniform routing and one copy per (token, expert) pair. Dispatchers that send one copy "
            "per destination GPU or node (chapter 07c) move fewer bytes, so the network bytes here are an upper "
            "bound; no overlap with compute.</i></p>")
    )
    return fig, table


#: The MoE dashboard's controls: name -> (its values, the default). Hidden sizes of published models, tokens per
#: GPU, expert counts and top-k of Mixtral/DeepSeek-class models, EP up to one NVL72 rack.
MOE_CONTROLS: dict[str, tuple[list[int], int]] = {
    "hidden": ([2048, 4096, 5120, 7168, 8192, 12288, 16384], 7168),
    "tokens": ([512, 1024, 2048, 4096, 8192, 16384], 4096),
    "experts": ([8, 16, 32, 64, 128, 256], 256),
    "top_k": ([1, 2, 4, 6, 8], 8),
    "ep": ([8, 16, 32, 64, 72], 64),
    "moe_layers": ([8, 16, 24, 32, 48, 58, 64], 58),
}


def moe_dashboard() -> Dashboard:
    """§5's dashboard: :func:`moe_view` driven by sliders over :data:`MOE_CONTROLS`, labelled in the reader's
    language."""
    labels = {"hidden": _("hidden"), "tokens": _("tokens/GPU"), "experts": _("experts"), "top_k": _("top-k"),
              "ep": _("EP GPUs"), "moe_layers": _("MoE layers")}
    return Dashboard({name: w.SelectionSlider(options=values, value=value, description=labels[name],
                                              continuous_update=False)
                      for name, (values, value) in MOE_CONTROLS.items()}, moe_view)

"""Chapter 05 (NVL72, rack scale): the ring vs in-switch (NVLS) all-reduce figure, the MoE all-to-all figure and
the dashboard renderer.

``moe_view`` takes the dashboard's control values and returns ``(Figure, html)``; the models are
:mod:`nvcourse.costmodel` (NCCL's protocols) and :mod:`nvcourse.fabric.moe`.
"""

from __future__ import annotations

import html as _html

import numpy as np
from matplotlib.figure import Figure

from .. import catalog
from ..costmodel import factors, predict, predict_sweep
from ..fabric.moe import MoEConfig, domain_allreduce_time, moe_alltoall_time
from ..plots import KIND_COLOURS, bytes_axis, new_figure, time_axis
from ..tables import table_html
from ..units import format_size, format_time

__all__ = ["NVLS_SIZES", "nvls_vs_ring", "ring_vs_nvls_figure", "moe_figure", "moe_view"]

#: Bytes per GPU of the ring vs NVLS figure: 64 KiB .. 4 GiB.
NVLS_SIZES = 2.0 ** np.arange(16, 33)
#: The curves of :func:`ring_vs_nvls_figure`: (algorithm, colour of its link kind, label).
_RING_AND_NVLS = (("ring", "pcie", "ring (NCCL's best protocol)"), ("nvls", "nvlink", "in-switch (NVLS)"))


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
        for algo, colour, what in _RING_AND_NVLS:
            times = predict_sweep("allreduce", system, g, sizes, algo=algo).time_s
            ax.plot(sizes, times, ls, color=KIND_COLOURS[colour], label=f"{what}, {g} GPUs")
    ax.plot(
        sizes,
        [domain_allreduce_time(system, n, 72) for n in sizes],
        ":",
        color=KIND_COLOURS["pcie"],
        lw=1,
        label="ring, 72 GPUs, Simple α only (the formula above)",
    )
    bytes_axis(ax, "x", "bytes per GPU")
    time_axis(ax, "y", "all-reduce time (NVL72)")
    ax.legend(fontsize=8)

    eta = factors.NVLS_EFFICIENCY
    lines = [
        f"NVLS latency L = {factors.NVLS_LATENCY_US:.0f} µs; η = {eta['hopper']} (Hopper), "
        f"{eta['blackwell']} (Blackwell); the course's NVL72 nvls_min_gpus = "
        f"{catalog.get_system(system).nvls_min_gpus} (an estimate; NCCL enables NVLS from 2 GPUs)",
        # which source each system's estimate has: the learner met nccl#1455's H100 run in the prose
        f"  (used only by the Simple-α formula; NVL72 and B200: {catalog.get_system(system).nvls_min_gpus}, from a "
        f"B200 report with AWS's tuner plugin; H100: {catalog.get_system('dgx-h100').nvls_min_gpus}, "
        "from nccl#1455's run)",
    ]
    for g in (8, 72):
        lines.append(
            f"g = {g:>2}: bytes per GPU ring / NVLS = 2(g-1)/(g+1) = {2 * (g - 1) / (g + 1):.2f}; with η "
            f"(Blackwell) the bandwidth term shrinks {2 * (g - 1) * eta['blackwell'] / (g + 1):.2f}x; "
            f"ring latencies 2(g-1) = {2 * (g - 1)}"
        )
    ring, insw, gain = nvls_vs_ring(2**30, 72, system)
    lines.append(
        f"1 GiB over 72 GPUs (NCCL's model): ring/{ring.proto} {format_time(ring.time_s)}, in-switch (NVLS) "
        f"{format_time(insw.time_s)}: {gain:.2f}x"
    )
    # small buffers: the ring runs LL (0.6 µs per NVLink step), not the Simple α of the formula
    small = 256 * 2**10
    r72, v72 = (predict("allreduce", system, 72, small, algo=a) for a in ("ring", "nvls"))
    lines.append(
        f"256 KiB over 72 GPUs: ring/{r72.proto} {format_time(r72.time_s)}, NVLS {format_time(v72.time_s)}: "
        f"{r72.time_s / v72.time_s:.1f}x (with a Simple-only α the ring would take "
        f"{format_time(domain_allreduce_time(system, small, 72))}, "
        f"{domain_allreduce_time(system, small, 72) / v72.time_s:.1f}x)"
    )
    r8, v8 = (predict("allreduce", system, 8, small, algo=a) for a in ("ring", "nvls"))
    lines.append(f"256 KiB over 8 GPUs: ring/{r8.proto} {format_time(r8.time_s)}, NVLS {format_time(v8.time_s)}")
    return fig, "\n".join(lines)


def moe_figure(
    cfg: MoEConfig, eps=(8, 16, 32, 64), systems=("dgx-b200", "gb200-nvl72"), *, width: float = 8.0
) -> Figure:
    """Time of one MoE all-to-all (dispatch) vs EP size on an 8-GPU domain + InfiniBand and on NVL72."""
    fig, ax = new_figure(width, 3.6)
    styles = {"dgx-b200": KIND_COLOURS["infiniband"], "gb200-nvl72": KIND_COLOURS["nvlink"]}
    for s in systems:
        t = [moe_alltoall_time(cfg, e, s).time_s for e in eps]
        ax.plot(eps, t, "o-", color=styles.get(s, "#555555"), label=catalog.get_system(s).name)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(eps), [str(e) for e in eps])
    ax.set_xlabel("expert-parallel GPUs (EP)")
    time_axis(ax, "y", "one dispatch all-to-all")
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
        names.append("8-GPU domain\n+ InfiniBand" if s == "dgx-b200" else "72-GPU domain\n(NVL72)")
        per_layer.append(layer)
        per_step.append(layer * cfg.moe_layers)
        colours.append(colour)
        rows.append([_html.escape(catalog.get_system(s).name), format_size(one.nvlink_bytes),
                     format_size(one.network_bytes), format_time(one.time_s), format_time(layer),
                     format_time(layer * cfg.moe_layers), one.bottleneck])
    ax1.bar(names, np.array(per_layer) * 1e3, color=colours)
    ax1.set_ylabel("ms per MoE layer (4 all-to-alls)")
    ax1.set_ylim(bottom=0)
    ax2.bar(names, per_step, color=colours)
    ax2.set_ylabel("seconds per step (all MoE layers)")
    ax2.set_ylim(bottom=0)
    # The configuration heads the readout rather than the figure: matplotlib lays out and rasterises text glyph by
    # glyph, and the figure is redrawn on every slider change.
    table = (
        f"<p><b>EP = {ep} GPUs</b>"
        + (f" (the slider's {asked}, capped at the number of experts)" if ep < asked else "")
        + (f" ({cfg.experts} experts do not split evenly over {ep} GPUs: some hold "
           f"{-(-cfg.experts // ep)}, some {cfg.experts // ep}; the model assumes an even load)"
           if cfg.experts % ep else "")
        + f", {cfg.tokens} tokens/GPU, hidden {cfg.hidden}, top-{cfg.top_k} of "
        f"{cfg.experts} experts, {cfg.moe_layers} MoE layers</p>"
        + table_html(["system", "NVLink bytes/GPU", "network bytes/GPU", "one all-to-all", "per layer (4)",
                      "per step", "bound by"], rows)
        +
        f"<p>The NVL72 domain is <b>{per_layer[0] / per_layer[1]:.1f}×</b> faster for this layer.</p>"
        "<p><i>Assumes uniform routing and one copy per (token, expert) pair. Dispatchers that send one copy per "
        "destination GPU or node (chapter 07c) move fewer bytes, so the network bytes here are an upper bound; "
        "no overlap with compute.</i></p>"
    )
    return fig, table

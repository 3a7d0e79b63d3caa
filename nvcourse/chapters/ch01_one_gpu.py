"""Chapter 01 — why one GPU is not enough: the chapter's figures, table and memory dashboard.

The arithmetic is in :mod:`nvcourse.training` (reference models, memory per GPU, GPUs needed, traffic per
step) and :func:`nvcourse.linkmodel.time_to_move`; ``get_model`` and ``gpus_needed`` are re-exported because
the notebook calls them through this module.
"""

from __future__ import annotations

import math

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from .. import catalog, training
from ..i18n import glossary_href, localize_numbers, ngettext, number
from ..i18n import translate as _
from ..linkmodel import time_to_move
from ..plots import new_figure
from ..tables import table_html
from ..training import get_model, gpus_needed
from ..units import format_size, format_time
from ..widgets import Dashboard

#: Sequence length (tokens) of the dashboard's activation and traffic figures.
SEQ = 4096
#: The network link of the "one NIC" column (a catalog link id).
NIC = "ib-ndr"

__all__ = [
    "get_model",
    "nvlink_domain",
    "gpus_needed",
    "plot_gpus_needed",
    "plot_memory_breakdown",
    "memory_dashboard",
    "zero_traffic_note",
    "memory_lines",
    "one_gpu_years",
    "traffic_lines",
]

def plot_gpus_needed(gpu_ids: tuple[str, ...] = ("v100", "a100", "h100", "h200", "b200")) -> Figure:
    """GPUs needed just to hold the training state (16 B/param, fully sharded) vs model size."""
    params = np.logspace(9, 12.3, 200)
    fig, ax = new_figure(8.0, 4.0)
    by_memory: dict[float, list[str]] = {}
    for gid in gpu_ids:  # GPUs with the same HBM size share one line (A100 80 GB and H100 80 GB)
        by_memory.setdefault(catalog.get_gpu(gid).memory_GB, []).append(gid)
    for memory_GB, ids in by_memory.items():
        need = [gpus_needed(p, ids[0]) for p in params]
        label = " / ".join(i.upper() for i in ids) + f" ({memory_GB:g} GB)"
        ax.step(params, need, where="post", lw=2, label=label)
    for m in training.models().values():
        ax.axvline(m.params, color="#999999", lw=0.8, ls=":")
        ax.text(m.params * 1.05, 1.15, m.name, rotation=90, fontsize=8, color="#555555", va="bottom")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(_("parameters"))
    ax.set_ylabel(_("GPUs needed (model states only)"))
    ax.set_title(_("16 bytes per parameter, 90 % of HBM usable, fully sharded"))
    ax.legend(fontsize=8)
    return fig


def plot_memory_breakdown(mem: training.MemoryBreakdown, gpu_id: str) -> Figure:
    """One stacked bar of a GPU's memory use against its HBM capacity."""
    gpu = catalog.get_gpu(gpu_id)
    parts = [(_("weights"), mem.weights, "#0072B2"), (_("gradients"), mem.grads, "#56B4E9"),
             (_("optimizer states"), mem.optimizer, "#E69F00"), (_("activations"), mem.activations, "#CC79A7")]
    fig, ax = new_figure(8.0, 2.6)
    left = 0.0
    for label, value, colour in parts:
        ax.barh([0], [value / 1e9], left=left, color=colour, label=label)
        left += value / 1e9
    ax.axvline(gpu.memory_GB, color="#D55E00", lw=2, label=f"{gpu.name}: {gpu.memory_GB:g} GB")
    # the fit test is against this line, not the HBM size (the rest: fragmentation, buffers, the CUDA context)
    usable = training.HEADROOM * gpu.memory_GB
    ax.axvline(usable, color="#000000", lw=1.5, ls="--",
               label=_("usable ({pct} %): {usable} GB").format(pct=number(100 * training.HEADROOM, "g"),
                                                              usable=number(usable, "g")))
    ax.set_yticks([])
    ax.set_xlabel(_("GB per GPU (10⁹ bytes)"))
    ax.set_xlim(0, max(left, gpu.memory_GB) * 1.1)
    # a figure legend "outside" is part of constrained layout: it gets its own room below the axes (an axes
    # legend anchored below them was cut off at the bottom of the PNG, and wider GPU names ran past both sides)
    handles, labels = ax.get_legend_handles_labels()  # the two lines (listed first) go last
    fig.legend(handles[2:] + handles[:2], labels[2:] + labels[:2], fontsize=8, ncols=3, loc="outside lower center")
    return fig


def _render(model: str, gpu: str, tp: int, pp: int, dp: int, zero_stage: int) -> tuple[Figure, str]:
    m = get_model(model)
    act = training.activation_memory_bytes(layers=m.layers, hidden=m.hidden, seq=SEQ, micro_batch=1,
                                           heads=m.heads, tp=tp, pp=pp)
    mem = training.training_memory_bytes(m.params, zero_stage=zero_stage, dp=dp, tp=tp, pp=pp, activations=act)
    traffic = training.per_step_traffic_bytes(m.params, dp=dp, tp=tp, pp=pp, layers=m.layers, hidden=m.hidden,
                                              seq=SEQ, micro_batch=1, micro_batches=max(pp, 1) * 2,
                                              zero_stage=zero_stage)
    fig = plot_memory_breakdown(mem, gpu)
    spec = catalog.get_gpu(gpu)
    fits = mem.fits(spec.memory_GB)
    verdict = "<b style='color:{}'>{}</b>".format(*(("#009E73", _("fits")) if fits else ("#D55E00", _("does not fit"))))
    nvlink = (spec.nvlink, spec.nvlink_links) if spec.nvlink else (spec.pcie, 1)
    rows = [
        [kind, _size(b), localize_numbers(format_time(time_to_move(b, *nvlink))) if b else "—",
         localize_numbers(format_time(time_to_move(b, NIC))) if b else "—"]
        for kind, b in ((_("data parallel (gradients)"), traffic.dp), (_("tensor parallel (activations)"), traffic.tp),
                        (_("pipeline parallel (activations)"), traffic.pp))
    ]
    link_name = catalog.get_link(nvlink[0]).name.split(" (")[0]  # "NVLink 4", "PCIe Gen4 x16"
    # the header names the rate only ("400 Gb/s"): InfiniBand and its NDR generation are taught in chapter 06
    nic = catalog.get_link(NIC).name.split(" (")[1].split(" port")[0]
    table = table_html([_("bytes sent per GPU per step"), _("volume"),
                        _("time at {n} × {link}").format(n=nvlink[1], link=link_name),
                        _("time on one {nic} NIC").format(nic=nic)], rows)
    states = mem.total - mem.activations
    need = gpus_needed(m.params, gpu)
    head = (_("{model} on {n} × {gpu} (TP {tp} × PP {pp} × DP {dp}, {zero}): <b>{total}</b> per GPU of {memory} GB "
              "({usable} GB usable) — {verdict} (model states {states}, activations {activations}). At least {need} "
              "GPUs just for the model states.") if need > 1 else
            _("{model} on {n} × {gpu} (TP {tp} × PP {pp} × DP {dp}, {zero}): <b>{total}</b> per GPU of {memory} GB "
              "({usable} GB usable) — {verdict} (model states {states}, activations {activations}). One GPU can hold "
              "the model states.")).format(
        model=m.name, n=number(tp * pp * dp, ","), gpu=spec.name, tp=tp, pp=pp, dp=dp,
        zero=f"ZeRO-{zero_stage}" if zero_stage else _("no ZeRO"), total=_size(mem.total),
        memory=number(spec.memory_GB, "g"), usable=number(training.HEADROOM * spec.memory_GB, "g"),
        verdict=verdict, states=_size(states),
        activations=_size(mem.activations), need=need)
    if tp > m.heads:  # tensor parallelism splits the attention heads: it cannot go past one head per GPU
        head += " " + _("TP {tp} is more than the model's {heads} attention heads (the independent slices of a "
                        "layer's attention, which tensor parallelism divides among GPUs): each GPU would hold less "
                        "than one head.").format(tp=tp, heads=m.heads)
    domain = nvlink_domain(gpu)
    if spec.nvlink and tp > domain:  # the NVLink column assumes every TP peer is one NVLink hop away
        head += " " + _("TP {tp} is wider than the {domain}-GPU NVLink domain of a system with this GPU: part of the "
                        "tensor-parallel traffic would cross the network, so its NVLink time is a lower "
                        "bound.").format(tp=tp, domain=domain)
    foot = _("Sequence {seq} tokens, micro-batch 1, {micro_batches} micro-batches per step; times are one bulk "
             "transfer at achievable bandwidth (the line rate × an efficiency: <a href='{glossary}#line-rate'>"
             "glossary</a>, chapter 02; chapter 04 adds the collective's structure).").format(
        seq=SEQ, micro_batches=max(pp, 1) * 2, glossary=glossary_href())
    note = zero_traffic_note(zero_stage, max(pp, 1) * 2, _zero_ratio(m, dp, tp, pp, zero_stage)) if dp > 1 else ""
    return fig, f"{head}<br>{table}<small>{foot} {note}</small>"


def nvlink_domain(gpu: str) -> int:
    """The largest NVLink domain (GPUs that reach each other over NVLink) of the catalog's systems built on ``gpu``;
    8, an HGX/DGX server's, for a GPU no catalog system uses."""
    return max((s.gpus_per_domain for s in catalog.systems().values() if s.gpu == gpu), default=8)


def _size(n_bytes: float) -> str:
    """A decimal size (``format_size``), its number in the current language's style."""
    return localize_numbers(format_size(n_bytes, binary=False))


def _zero_ratio(m: training.ModelSpec, dp: int, tp: int, pp: int, zero_stage: int) -> float:
    """Data-parallel bytes per step with this ZeRO stage over those without ZeRO (the dashboard's step)."""
    def dp_bytes(stage: int) -> float:
        return training.per_step_traffic_bytes(m.params, dp=dp, tp=tp, pp=pp, layers=m.layers, hidden=m.hidden,
                                               seq=SEQ, micro_batch=1, micro_batches=max(pp, 1) * 2,
                                               zero_stage=stage).dp
    plain = dp_bytes(0)
    return dp_bytes(zero_stage) / plain if plain else 1.0


def zero_traffic_note(zero_stage: int, micro_batches: int, ratio: float) -> str:
    """One sentence: the data-parallel bytes of this ZeRO stage against plain data parallelism (``ratio``), and
    why: ZeRO-3 gathers the weights again in the forward and the backward pass of every micro-batch."""
    if zero_stage < 3:
        return _("Data-parallel bytes: one all-reduce of the gradients per step (ZeRO-1 and -2 move the same bytes).")
    return _("Data-parallel bytes: ZeRO-3 all-gathers the weights in the forward and the backward pass of each of "
             "the {micro_batches} micro-batches and reduce-scatters the gradients once: {ratio}× the bytes without "
             "ZeRO (1.5× with a single micro-batch).").format(micro_batches=micro_batches, ratio=number(ratio, "g"))


def memory_dashboard() -> Dashboard:
    """Model, GPU and parallel degrees → memory per GPU (does it fit?) and bytes moved per step."""
    def dd(options, value, description, width="260px"):
        return widgets.Dropdown(options=options, value=value, description=description,
                                style={"description_width": "initial"}, layout=widgets.Layout(width=width))

    def degree(description, value, maximum):
        return widgets.SelectionSlider(options=[2**i for i in range(int(math.log2(maximum)) + 1)], value=value,
                                       description=description, continuous_update=False,
                                       style={"description_width": "initial"})

    return Dashboard(
        {
            "tp": degree(_("tensor parallel (TP)"), 8, 64),
            "pp": degree(_("pipeline parallel (PP)"), 1, 16),
            "dp": degree(_("data parallel (DP)"), 8, 1024),
            "zero_stage": dd([(_("none"), 0), ("ZeRO-1", 1), ("ZeRO-2", 2), ("ZeRO-3", 3)], 1, "ZeRO"),
            "model": dd([(m.name, k) for k, m in training.models().items()], "llama3-70b", _("model")),
            "gpu": dd([(g.name, k) for k, g in catalog.gpus().items() if k != "p100"], "h100", "GPU",
                      width="460px"),  # the longest name, "NVIDIA B200 in GB200 (NVL72 compute tray, ~186 GB)", fits
        },
        _render,
    )


def memory_lines(params: float = 70e9, gpu_ids: tuple[str, ...] = ("a100", "h100", "h200", "b200")) -> str:
    """The model states of a ``params``-parameter model trained in mixed precision with Adam (decimal bytes), then
    for each GPU its HBM (GB, 10⁹ bytes) and the fewest GPUs that hold those states: one line each."""
    m = training.training_memory_bytes(params)
    lines = [_("{n}B parameters: weights {weights}, gradients {grads}, optimizer {optimizer} -> {total}").format(
        n=number(params / 1e9, "g"), weights=_size(m.weights), grads=_size(m.grads), optimizer=_size(m.optimizer),
        total=_size(m.total))]
    for gid in gpu_ids:
        gpu, need = catalog.get_gpu(gid), gpus_needed(params, gid)
        lines.append(ngettext("{gpu} {memory} GB of HBM -> at least {n} GPU",
                              "{gpu} {memory} GB of HBM -> at least {n} GPUs", need).format(
            gpu=f"{gpu.name:<40}", memory=f"{number(gpu.memory_GB, 'g'):>5}", n=f"{need:>3}"))
    return "\n".join(lines)


def _eng(x: float) -> str:
    """``x`` in engineering notation as a reader types it (``405e9``, ``15.6e12``)."""
    e = int(math.floor(math.log10(abs(x)) / 3) * 3) if x else 0
    return f"{x / 10**e:g}e{e}"


def one_gpu_years(params: float = 405e9, tokens: float = 15.6e12, gpu_id: str = "h100") -> str:
    """The training compute 6 × ``params`` × ``tokens`` (FLOPs) and how many years one ``gpu_id`` takes at its dense
    BF16 peak (365.25-day years): one line."""
    gpu = catalog.get_gpu(gpu_id)
    flops = 6 * params * tokens
    years = flops / (gpu.bf16_TFLOPS * 1e12) / (365.25 * 24 * 3600)
    return _("6 x {params} x {tokens} = {flops} FLOPs; one {gpu} at {tflops} TFLOPS dense BF16 peak: "
             "{years} years").format(params=_eng(params), tokens=_eng(tokens), flops=number(flops, ".2e"),
                                     gpu=gpu_id.upper(), tflops=number(gpu.bf16_TFLOPS, "g"),
                                     years=number(years, ",.0f"))


def traffic_lines(traffic: training.TrafficBreakdown) -> str:
    """One line per kind of parallelism (and the total): the bytes one GPU sends per step, in decimal units
    (GB = 10⁹ bytes), numbers in the reader's language."""
    return "\n".join(f"{kind:>6}: {localize_numbers(format_size(b, binary=False))}"
                      for kind, b in traffic.as_dict().items())

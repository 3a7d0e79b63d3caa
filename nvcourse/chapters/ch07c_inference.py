"""Chapter 07c — communication for inference: TP decode, all-reduce kernels, KV-cache transfer, MoE dispatch.

The models are :mod:`nvcourse.inference` and :mod:`nvcourse.fabric.moe`; this module draws them and wires
controls to them.
"""

from __future__ import annotations

import html

import ipywidgets as w
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator

from .. import catalog, costmodel, inference, rooflines
from ..fabric.moe import MoEConfig, moe_alltoall_time, network_copies_per_token
from ..i18n import language, localize_numbers, number, pgettext
from ..i18n import translate as _
from ..plots import ALGO_COLOURS, bytes_axis, new_figure, time_axis
from ..tables import table_html
from ..units import format_rate, format_size, format_time
from ..widgets import Dashboard
from .ch07c_serving import details as _details
from .ch07c_serving import kv_measured_lines, serving_html, serving_rows, serving_table_html
from .ch07c_serving import size_text as _size
from .ch07c_serving import time_text as _time

__all__ = [
    "PART_COLOURS",
    "NIC_RATE",
    "KV_PATHS",
    "ALGO_COLOURS",
    "decode_tp_figure",
    "gpu_bytes",
    "fits_gpu",
    "allreduce_latency_lines",
    "kernel_ratios",
    "allreduce_vs_measured_figure",
    "kv_transfer_figure",
    "moe_dispatch_rows",
    "moe_dispatch_table_html",
    "measured_vs_model_lines",
    "serving_rows",
    "serving_table_html",
    "serving_html",
    "measured_vs_model_html",
    "tp_question_html",
    "batch_html",
    "layouts_html",
    "moe_dispatch_html",
    "inference_dashboard",
    "kv_cache_lines",
    "deepep_lines",
    "kv_measured_lines",
]

PART_COLOURS = {"weights + KV read": "#999999", "all-reduces": "#0072B2", "prefill": "#999999",
                "exposed KV transfer": "#D55E00"}
TP_DEGREES = (1, 2, 4, 8)
#: Colours per all-reduce kernel: the course palette plus NCCL's symmetric kernels (vermilion, darker in greyscale).
_COLOURS = ALGO_COLOURS  # one colour table (plots): NCCL, one-shot, two-shot and NCCL's symmetric kernels
#: The KV transfer's NIC: the DGX H100's, as its port speed reads ("400 Gb/s" for NDR), from the catalog.
NIC_RATE = format_rate(catalog.get_system("dgx-h100").nic.line_GBps_dir * 1e9, bits=True)
#: The dashboard's KV paths: label → (path, system, senders).
KV_PATHS = {f"8 × {NIC_RATE} RDMA": ("rdma", "dgx-h100", 8), f"1 × {NIC_RATE} RDMA": ("rdma", "dgx-h100", 1),
            "NVLink (NVL72)": ("nvlink", "gb200-nvl72", 8)}


def _pct(fraction: float, spec: str = ".0") -> str:
    """``0.25`` as ``25%`` (``spec`` ``"+.0"``: ``+25%``) as Python writes it in English, ``25 %`` in French."""
    if language() != "fr":
        return format(fraction, spec + "%")
    return number(100 * fraction, spec + "f") + "\u00a0%"


def _bound(bound: str) -> str:
    """A decode step's bound (``"memory"`` or ``"compute"``) as an adjective: "memory-bound"."""
    return {"memory": _("memory-bound"), "compute": _("compute-bound")}[bound]


def gpu_bytes(model: str, system: str, tp: int, *, batch: int = 1, context: int = 4096) -> float:
    """Bytes one GPU holds for a TP ``tp`` decode: its share of the weights plus its share of the batch's KV cache
    (the bytes :func:`nvcourse.inference.decode_step` reads per step)."""
    s = inference.decode_step(model, system, tp, batch=batch, context=context)
    return s.memory_s * catalog.get_system(system).gpu_spec.memory_TBps * 1e12 * inference.data()["decode"][
        "hbm_efficiency"]


def fits_gpu(model: str, system: str, tp: int, *, batch: int = 1, context: int = 4096) -> bool:
    """Whether :func:`gpu_bytes` fits one GPU's memory (nothing kept back for activations: an optimistic test)."""
    cap = catalog.get_system(system).gpu_spec.memory_GB * 1e9
    return gpu_bytes(model, system, tp, batch=batch, context=context) <= cap


def _no_fit_label(ax, x: float) -> None:
    """Write "does not fit" where a bar would stand, so an impossible layout shows no time."""
    ax.text(x, ax.get_ylim()[1] * 0.5, _("does not fit"), rotation=90, ha="center", va="center", fontsize=8)


def decode_tp_figure(model: str, system: str, *, batch: int = 1, context: int = 4096,
                     algos: tuple[str, ...] = inference.ALLREDUCE_ALGOS) -> Figure:
    """Time per decode step against TP degree: the memory part (grey) and the all-reduces, per algorithm; a TP
    degree whose weights and KV cache do not fit one GPU (:func:`fits_gpu`) gets no bar but the words "does not
    fit"."""
    fig, ax = new_figure(7.5, 3.4)
    width = 0.8 / len(algos)
    ok = [t for t in TP_DEGREES if fits_gpu(model, system, t, batch=batch, context=context)]
    idx = [TP_DEGREES.index(t) for t in ok]
    top = 0.0
    for j, algo in enumerate(algos):
        steps = [inference.decode_step(model, system, t, batch=batch, context=context, algo=algo) for t in ok]
        x = np.array(idx, dtype=float) + (j - (len(algos) - 1) / 2) * width
        mem = [max(s.memory_s, s.compute_s) * 1e3 for s in steps]
        comm = [s.comm_s * 1e3 for s in steps]
        ax.bar(x, mem, width, color=PART_COLOURS["weights + KV read"], edgecolor="white",
               label=_("weights + KV read") if j == 0 else None)
        ax.bar(x, comm, width, bottom=mem, color=_COLOURS[algo], label=_("all-reduces ({algo})").format(algo=algo))
        top = max(top, *(a + b for a, b in zip(mem, comm, strict=True)), 0.0)
    ax.set_ylim(0, (top or 1.0) * 1.1)
    for i, t in enumerate(TP_DEGREES):  # weights + KV larger than a GPU's memory: no bar, say so
        if t not in ok:
            _no_fit_label(ax, i)
    ax.set_xticks(range(len(TP_DEGREES)), [f"TP {t}" for t in TP_DEGREES])
    ax.set_ylabel(_("time per decode step (ms)"))
    ax.legend(fontsize=8)
    return fig


def allreduce_vs_measured_figure(system: str = "dgx-h100") -> Figure:
    """Model (lines) against the published H100 custom all-reduce latencies (points, sglang#2904; its sizes are
    float32 elements, shown here in bytes)."""
    fig, axes = new_figure(10, 3.2, ncols=3)
    sizes = np.logspace(11, 22, 23, base=2)
    for ax, row in zip(axes, inference.custom_allreduce_points(), strict=False):
        tp = row["tp"]
        for algo in inference.ALLREDUCE_ALGOS:
            ax.plot(sizes, [inference.allreduce_time(system, tp, n, algo) for n in sizes],
                    color=_COLOURS[algo], label=_("model: {algo}").format(algo=algo))
        ax.plot(row["bytes"], row["latency_s"], "ko", ms=4, label=_("measured (custom kernel)"))
        bytes_axis(ax, "x", label=_("message"))
        ax.xaxis.set_major_locator(FixedLocator([2.0**12, 2.0**16, 2.0**20]))  # 3 labels fit a third of a figure
        time_axis(ax, "y", label=_("all-reduce time"))
        ax.yaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))  # one decade per panel: label 2 and 5 too
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _p: format_time(v, digits=2)))
        ax.set_title(f"TP {tp}", fontsize=9)
    axes[0].legend(fontsize=7)
    return fig


def measured_vs_model_lines(system: str = "dgx-h100") -> list[str]:
    """Per TP degree: the better custom kernel's model time against each published point, as a signed miss."""
    out = []
    for row in inference.custom_allreduce_points():
        miss = [f"{_size(n)}: "
                + _pct(min(inference.allreduce_time(system, row["tp"], n, a) for a in ("oneshot", "twoshot")) / t - 1,
                       "+.0")
                for n, t in zip(row["bytes"], row["latency_s"], strict=True)]
        out.append(_("TP {tp} model vs measured: ").format(tp=row["tp"]) + ", ".join(miss))
    return out


def allreduce_latency_lines(system: str = "dgx-h100", nbytes: int = 8192 * 2) -> list[str]:
    """Per TP degree: NCCL's all-reduce of ``nbytes`` (default: one Llama 3 70B token, 16 KiB) in the course's
    NCCL model, and the share of its time that is fixed latency (the rest is bytes over bandwidth)."""
    out = []
    for tp in (2, 4, 8):
        p = costmodel.predict("allreduce", system, tp, nbytes, algo="nccl")
        out.append(_("TP {tp}: {size} all-reduce {time} ({algo}/{proto}), of which latency {latency} ({share})").format(
            tp=tp, size=_size(nbytes), time=_time(p.time_s), algo=p.algo, proto=p.proto, latency=_time(p.latency_s),
            share=_pct(p.latency_s / p.time_s)))
    return out


def kernel_ratios(system: str = "dgx-h100", nbytes: int = 16384,
                  tps: tuple[int, ...] = (2, 4, 8)) -> dict[str, tuple[float, float]]:
    """(lowest, highest) over ``tps`` of: NCCL's classic time / the faster custom kernel's (``"nccl_over_custom"``),
    NCCL's symmetric kernels / its classic path (``"sym_over_nccl"``) and / the faster custom kernel
    (``"sym_over_custom"``), for one all-reduce of ``nbytes``."""
    out: dict[str, list[float]] = {"nccl_over_custom": [], "sym_over_nccl": [], "sym_over_custom": []}
    for tp in tps:
        t = {a: inference.allreduce_time(system, tp, nbytes, a) for a in inference.ALLREDUCE_ALGOS}
        best = min(t["oneshot"], t["twoshot"])
        out["nccl_over_custom"].append(t["nccl"] / best)
        out["sym_over_nccl"].append(t["nccl-sym"] / t["nccl"])
        out["sym_over_custom"].append(t["nccl-sym"] / best)
    return {k: (min(v), max(v)) for k, v in out.items()}


def measured_vs_model_html(system: str = "dgx-h100") -> str:
    """Per TP degree: the model's miss at a decode-sized message (16 KiB) and its largest miss, then every point
    (the lines of :func:`measured_vs_model_lines`) behind a collapsed block. Miss = model / measured − 1."""
    rows = []
    for row in inference.custom_allreduce_points():
        miss = [(min(inference.allreduce_time(system, row["tp"], n, a) for a in ("oneshot", "twoshot")) / t - 1, n)
                for n, t in zip(row["bytes"], row["latency_s"], strict=True)]
        at16 = next(m for m, n in miss if n == 16384)
        worst, where = max(miss, key=lambda mn: abs(mn[0]))
        rows.append([f"TP {row['tp']}", _pct(at16, "+.0"),
                     _("{miss} at {size}").format(miss=_pct(worst, "+.0"), size=_size(where))])
    table = table_html([_("GPUs"), _("model vs measured at 16 KiB"), _("largest miss")], rows,
                       caption=_("Custom all-reduce kernels on H100: the model against sglang#2904 "
                                 "(+ = model slower, − = model faster)"), align_numbers=False)
    full = "<br>".join(html.escape(line) for line in measured_vs_model_lines(system))
    return table + _details(_("Every published point"), full)


def tp_question_html(models: tuple[str, ...] = ("llama3-70b", "llama3-8b"), system: str = "dgx-h100") -> str:
    """Batch-1 decode, TP 4 → TP 8: the speed-up per model and all-reduce kernel, then every figure (step times,
    all-reduce share of the TP 8 step, the memory read at TP 4) behind a collapsed block."""
    steps = {(m, a): [inference.decode_step(m, system, t, batch=1, algo=a) for t in (4, 8)]
             for m in models for a in inference.ALLREDUCE_ALGOS}
    summary = table_html([_("all-reduce kernel"), *(_("{model}: TP 8 faster by").format(model=m) for m in models)],
                         [[a, *(number(steps[m, a][0].total_s / steps[m, a][1].total_s, ".2f") + "×" for m in models)]
                          for a in inference.ALLREDUCE_ALGOS], align_numbers=False)
    full = table_html([_("model"), _("kernel"), _("TP 4 step"), _("TP 8 step"), _("speed-up"),
                       _("all-reduces in the TP 8 step"), _("memory read at TP 4")],
                      [[m, a, _time(s4.total_s), _time(s8.total_s), number(s4.total_s / s8.total_s, ".2f") + "×",
                        _pct(s8.comm_share), _time(s4.memory_s)]
                       for (m, a), (s4, s8) in steps.items()])
    return summary + _details(_("Step times, all-reduce share and memory read for each case"), full)


def batch_html(model: str = "llama3-70b", system: str = "dgx-h100", tp: int = 8, context: int = 4096,
               batches: tuple[int, ...] = (1, 8, 64, 256, 512)) -> str:
    """Where the regimes change (in words, from :func:`nvcourse.inference.batch_regimes`), the throughput against
    the speed per user as the batch grows, and the all-reduce and bound of each step behind a collapsed block."""
    r = inference.batch_regimes(model, system, tp)
    steps = [inference.decode_step(model, system, tp, batch=b, context=context) for b in batches]
    bounds = sorted({s.bound for s in steps})
    words = _("<p>The all-reduce leaves its latency regime near batch {batch} (its n½ is {n_half}); with no KV cache "
              "the step would turn compute-bound near batch {compute}. At {context} tokens of context every step "
              "below is {bounds}.</p>").format(
        batch=number(r["allreduce_bandwidth_bound_batch"], ".1f"), n_half=_size(r["allreduce_n_half_bytes"]),
        compute=number(r["compute_bound_batch"], ".0f"), context=number(context, ","),
        bounds=_bound(bounds[0]) if len(bounds) == 1 else _("compute or memory-bound"))
    summary = table_html([_("batch"), pgettext("training", "step"), _("tok/s in total"), _("tok/s per user")],
                         [[b, _time(s.total_s), number(s.tokens_per_s, ",.0f"), number(s.tokens_per_s_per_user, ".0f")]
                          for b, s in zip(batches, steps, strict=True)],
                         caption=_("{model}, TP {tp} on {system}, {context} tokens of context").format(
                             model=model, tp=tp, system=system, context=number(context, ",")))
    full = table_html([_("batch"), _("all-reduce message"), _("all-reduce time"), _("bound")],
                      [[b, _size(s.message_bytes), _time(s.allreduce_s), {"memory": _("memory"),
                                                                          "compute": _("compute")}[s.bound]]
                       for b, s in zip(batches, steps, strict=True)])
    return words + summary + _details(_("The all-reduce and the bound of each step"), full)


def layouts_html(models: tuple[str, ...] = ("llama3-70b", "llama3-8b"), system: str = "dgx-h100", gpus: int = 8,
                 batch: int = 8) -> str:
    """TP, PP and replicas (DP) on one node: time per token and throughput; a layout whose weights do not fit one
    GPU shows why instead of numbers."""
    cap = catalog.get_system(system).gpu_spec.memory_GB
    rows = []
    for model in models:
        weights_GB = inference.get_model(model).params * inference.data()["decode"]["bytes_per_param"] / 1e9
        for name, r in inference.serving_layouts(model, system, gpus, batch=batch).items():
            if r["fits"]:
                rows.append([model, name, _time(r["latency_s"]), number(r["tokens_per_s"], ",.0f")])
            else:
                rows.append([model, name, _("not possible: {weights} GB of weights, {cap} GB per GPU").format(
                    weights=number(weights_GB, ".0f"), cap=number(cap, ".0f")), "—"])
    return table_html([_("model"), _("layout"), _("time per token"), _("tok/s in total")], rows,
                      caption=_("{gpus} GPUs of one {system}, batch {batch} per copy").format(
                          gpus=gpus, system=system, batch=batch), align_numbers=False)


def kv_transfer_figure(model: str = "llama3-70b", *, senders: int = 8) -> Figure:
    """KV-cache transfer time against prompt length: one DGX H100 NIC, ``senders`` NICs, an NVL72's NVLink."""
    fig, ax = new_figure(7.5, 3.4)
    tokens = np.array([2**k for k in range(10, 18)])
    nic = localize_numbers(NIC_RATE)
    cases = [(_("1 × {nic} NIC").format(nic=nic), "dgx-h100", "rdma", 1, "#CC79A7"),
             (_("{senders} × {nic} NICs (one per TP rank)").format(senders=senders, nic=nic), "dgx-h100", "rdma",
              senders, "#0072B2"),
             (_("NVLink inside an NVL72 ({senders} GPUs)").format(senders=senders), "gb200-nvl72", "nvlink", senders,
              "#009E73")]
    for label, sid, path, k, colour in cases:
        t = [inference.kv_transfer_time(model, int(n), sid, path=path, senders=k)["time_s"] * 1e3 for n in tokens]
        ax.plot(tokens, t, "o-", ms=4, color=colour, label=label)
    pre = [inference.prefill_time(model, "dgx-h100", int(n), gpus=senders) * 1e3 for n in tokens]
    ax.plot(tokens, pre, "--", color="#555555",
            label=_("prefill on {senders} H100 (for scale)").format(senders=senders))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(_("prompt length (tokens)"))
    ax.set_ylabel(_("time (ms)"))
    ax.legend(fontsize=8)
    return fig


def moe_dispatch_rows(tokens: int = 4096, ep: int = 64) -> list[dict]:
    """DeepSeek-V3's MoE layer (data/inference.toml) dispatched over EP ``ep``: copies per token crossing the
    network and dispatch time, naive / with per-node dedup / dedup + node-limited routing, per system."""
    d = inference.data()["moe"]["deepseek-v3"]
    cfg = MoEConfig(hidden=d["hidden"], tokens=tokens, experts=d["experts"], top_k=d["top_k"], bytes_per_elem=2,
                    moe_layers=d["moe_layers"])
    rows = []
    for sid in ("dgx-h100", "dgx-b200", "gb200-nvl72"):
        gpn = catalog.get_system(sid).gpus_per_domain
        for label, kw in ((_("every copy"), {}), (_("per-node dedup"), {"dedup": True}),
                          (_("dedup + ≤ {n} nodes").format(n=d["max_nodes"]),
                           {"dedup": True, "max_nodes": d["max_nodes"]})):
            t = moe_alltoall_time(cfg, ep, sid, **kw)
            rows.append({"system": sid, "routing": label, "copies": network_copies_per_token(cfg, ep, gpn, **kw),
                         "network_bytes": t.network_bytes, "time_s": t.time_s, "bottleneck": t.bottleneck})
    return rows


def moe_dispatch_html(tokens: int = 4096, ep: int = 64) -> str:
    """The MoE question first: network copies per token and one dispatch on 8-GPU nodes and on an NVL72, per
    routing; every system's row (bytes, bottleneck) behind a collapsed block."""
    rows = moe_dispatch_rows(tokens, ep)
    by = {(r["system"], r["routing"]): r for r in rows}
    routings = list(dict.fromkeys(r["routing"] for r in rows))
    summary = table_html([_("routing"), _("network copies per token (8-GPU nodes)"), _("one dispatch, DGX H100"),
                          _("one dispatch, GB200 NVL72")],
                         [[rt, number(by["dgx-h100", rt]["copies"], ".2f"), _time(by["dgx-h100", rt]["time_s"]),
                           _time(by["gb200-nvl72", rt]["time_s"])] for rt in routings],
                         caption=_("DeepSeek-V3's MoE layer, EP {ep}, {tokens} BF16 tokens per GPU").format(
                             ep=ep, tokens=number(tokens, ",")))
    return summary + _details(_("Every system (DGX B200 too): network bytes per GPU and the bottleneck"),
                              moe_dispatch_table_html(tokens, ep))


def _bottleneck(name: str) -> str:
    """A MoE dispatch's bottleneck (``"network"`` or ``"NVLink"``, the model's names) in the learner's language."""
    return _("network") if name == "network" else name


def moe_dispatch_table_html(tokens: int = 4096, ep: int = 64) -> str:
    rows = [[html.escape(r["system"]), html.escape(r["routing"]), number(r["copies"], ".2f"),
             _size(r["network_bytes"], binary=False), _time(r["time_s"]), html.escape(_bottleneck(r["bottleneck"]))]
            for r in moe_dispatch_rows(tokens, ep)]
    return table_html([_("system"), _("routing"), _("network copies per token"), _("network bytes per GPU"),
                       _("one dispatch"), _("bottleneck")], rows)


# ------------------------------------------------------------------------------------------------
# the dashboard


def _dashboard_bars(tps: list[int], steps: list, algo: str) -> Figure:
    """One panel: a bar per TP degree that fits (memory or compute part, then the all-reduces); "does not fit"
    where the weights and KV cache exceed a GPU's memory, with no time drawn."""
    fig, ax = new_figure(7.0, 2.8)  # one panel: TTFT goes in the readout (a second panel doubles the draw)
    pos = [tps.index(s.tp) for s in steps]
    mem = [max(s.memory_s, s.compute_s) * 1e3 for s in steps]
    ax.bar(pos, mem, color=PART_COLOURS["weights + KV read"], label=_("weights + KV read / compute"))
    ax.bar(pos, [s.comm_s * 1e3 for s in steps], bottom=mem, color=_COLOURS[algo],
           label=_("all-reduces ({algo})").format(algo=algo))
    # headroom above the tallest bar: flush with the frame it read as cut off
    ax.set_ylim(0, 1.1 * max((s.total_s * 1e3 for s in steps), default=1.0))
    for i in range(len(tps)):
        if i not in pos:
            _no_fit_label(ax, i)
    ax.set_xticks(range(len(tps)), [f"TP {t}" for t in tps])
    ax.set_ylabel(_("ms per decode step"))
    if steps:
        ax.legend(fontsize=7)
    return fig


def _decode_rows(model: str, system: str, tps: list[int], steps: list, *, batch: int, context: int) -> list[list[str]]:
    """The readout's decode rows: the fastest TP degree that fits and the all-reduces of the largest one that fits,
    or, when none fits, how many GB one GPU would need at the largest TP degree (no time)."""
    cap = catalog.get_system(system).gpu_spec.memory_GB
    skipped = [t for t in tps if t not in {s.tp for s in steps}]
    note = _(" (TP {tps}: does not fit)").format(tps=", ".join(map(str, skipped))) if skipped else ""
    if not steps:
        need = gpu_bytes(model, system, tps[-1], batch=batch, context=context) / 1e9
        return [[_("decode"), _("does not fit: even at TP {tp} one GPU needs {need} GB for its weights and KV cache, "
                                "and has {cap} GB").format(tp=tps[-1], need=number(need, ",.0f"),
                                                           cap=number(cap, ".0f"))]]
    best = min(steps, key=lambda s: s.total_s)
    s_last = steps[-1]
    return [
        [_("decode: fastest"), _("TP {tp}: {time} per step, {per_user} tok/s per user, {total} tok/s in total").format(
            tp=best.tp, time=_time(best.total_s), per_user=number(best.tokens_per_s_per_user, ",.0f"),
            total=number(best.tokens_per_s, ",.0f")) + note],
        [_("all-reduces at TP {tp}").format(tp=s_last.tp),
         _("{share} of the step ({count} × {time}, {size} each); the step is {bound}").format(
             share=_pct(s_last.comm_share), count=s_last.allreduces, time=_time(s_last.allreduce_s),
             size=_size(s_last.message_bytes), bound=_bound(s_last.bound))],
    ]


def inference_dashboard(*, models: tuple[str, ...] = ("llama3-8b", "llama3-70b", "llama3-405b"),
                        systems: tuple[str, ...] = ("dgx-h100", "dgx-b200", "gb200-nvl72")) -> Dashboard:
    """Model, system, batch, context, all-reduce kernel, prompt length and KV path → decode step vs TP, and TTFT."""
    style = {"description_width": "initial"}
    ctl = {
        "model": w.Dropdown(options=list(models), value="llama3-70b", description=_("model"), style=style),
        "system": w.Dropdown(options=list(systems), value=systems[0], description=_("system"), style=style),
        "batch": w.SelectionSlider(options=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512], value=1, description=_("batch"),
                                   style=style, continuous_update=False),
        "context": w.SelectionSlider(options=[0, 1024, 4096, 16384, 32768, 131072], value=4096,
                                     description=_("context (tokens)"), style=style, continuous_update=False),
        "algo": w.Dropdown(options=list(inference.ALLREDUCE_ALGOS), value="nccl", description=_("all-reduce"),
                           style=style),
        "prompt": w.SelectionSlider(options=[1024, 4096, 8192, 32768, 131072], value=32768,
                                    description=_("prompt (tokens)"), style=style, continuous_update=False),
        "kv_path": w.Dropdown(options=[(localize_numbers(k), k) for k in KV_PATHS], value=next(iter(KV_PATHS)),
                              description=_("KV path"),
                              style=style),
    }

    def render(model, system, batch, context, algo, prompt, kv_path):
        m = inference.get_model(model)
        tps = [t for t in TP_DEGREES if m.heads % t == 0 and t <= catalog.get_system(system).gpus_per_domain]
        ok = [t for t in tps if fits_gpu(model, system, t, batch=batch, context=context)]
        steps = [inference.decode_step(model, system, t, batch=batch, context=context, algo=algo) for t in ok]
        fig = _dashboard_bars(tps, steps, algo)
        rows = _decode_rows(model, system, tps, steps, batch=batch, context=context)
        path, sid, k = KV_PATHS[kv_path]
        x = inference.kv_transfer_time(model, prompt, sid, path=path, senders=k)
        rows.append([_("KV cache of the prompt"), _("{size}, {time} over {path}").format(
            size=_size(x["bytes"], binary=False), time=_time(x["time_s"]),
            path=html.escape(localize_numbers(kv_path)))])
        domain = catalog.get_system(system).gpus_per_domain
        if path == "nvlink" and domain < 2 * k:  # prefill's and decode's GPUs must share one NVLink domain
            rows.append([_("KV path"), _("not available on this system: its NVLink domain holds {gpus} GPUs, fewer "
                                         "than the {need} that prefill and decode use together; the TTFT below "
                                         "assumes an NVL72's NVLink").format(gpus=domain, need=2 * k)])
        if fits_gpu(model, system, 8, batch=1, context=prompt):
            pre = inference.prefill_time(model, system, prompt, gpus=8)
            plain = inference.ttft(pre, x["time_s"], m.layers, layerwise=False)
            stream = inference.ttft(pre, x["time_s"], m.layers, layerwise=True)
            rows.append([_("TTFT (prefill on 8 GPUs {time})").format(time=_time(pre)),
                         _("<b>{plain}</b> sent after prefill, <b>{stream}</b> streamed layer by layer").format(
                             plain=_time(plain["ttft_s"]), stream=_time(stream["ttft_s"]))])
        else:
            rows.append([_("TTFT (prefill on 8 GPUs)"), _("does not fit: the weights and this prompt's KV cache need "
                                                          "{need} GB per GPU").format(
                need=number(gpu_bytes(model, system, 8, batch=1, context=prompt) / 1e9, ",.0f"))])
        text = table_html([_("what"), _("at these settings")], rows, align_numbers=False)
        return fig, text

    return Dashboard(ctl, render, columns=2, freeze_layout=True)


# ------------------------------------------------------------------------------------------------
# the lines the chapter's cells print (each built with _() so the French edition reads them in French)


def kv_cache_lines(model: str = "llama3-70b", tokens: int = 32768, senders: int = 8) -> str:
    """§4: the KV cache's bytes per token and a ``tokens`` prompt's total, its transfer time (s, formatted) and rate
    (GB/s) over one DGX H100 NIC, over ``senders`` NICs and over an NVL72's NVLink, then the prefill of the same
    prompt on ``senders`` H100 (model), for scale."""
    kv = inference.kv_bytes_per_token(model)
    lines = [localize_numbers(_("KV cache: {kv} B per token; 32k prompt: {size}").format(
        kv=f"{kv:,.0f}", size=format_size(tokens * kv, binary=False)))]
    for label, sid, path, k in [(_("1 × {nic} NIC").format(nic=NIC_RATE), "dgx-h100", "rdma", 1),
                                (_("{senders} × {nic} NICs ({senders} TP ranks)").format(senders=senders,
                                                                                       nic=NIC_RATE),
                                 "dgx-h100", "rdma", senders),
                                (_("NVLink inside an NVL72 ({senders} GPUs)").format(senders=senders), "gb200-nvl72",
                                 "nvlink", senders)]:
        x = inference.kv_transfer_time(model, tokens, sid, path=path, senders=k)
        lines.append(localize_numbers(_("{label}: {time} at {rate} GB/s").format(
            label=f"{label:34s}", time=f"{format_time(x['time_s']):>9}", rate=f"{x['rate_Bps'] / 1e9:7.0f}")))
    pre = inference.prefill_time(model, "dgx-h100", tokens, gpus=senders)
    lines.append(localize_numbers(_("prefill of the same prompt on {gpus} H100 (model): {time}").format(
        gpus=senders, time=format_time(pre))))
    return "\n".join(lines)


def deepep_lines() -> str:
    """§6: DeepEP's published normal-kernel rates (GB/s, RDMA) per EP size; the model's dispatch of DeepSeek-V3's
    MoE layer on DGX H100 (the NIC's GB/s per GPU, one dispatch's time with per-node dedup and node-limited
    routing); DeepEP's low-latency kernels' dispatch range (µs)."""
    lines = [localize_numbers(_("DeepEP EP {ep}: dispatch {dispatch} GB/s, combine {combine} GB/s (RDMA, logical "
                                "bytes)").format(ep=f"{row['ep']:3d}", dispatch=row["dispatch_GBps"],
                                                 combine=row["combine_GBps"]))
             for row in inference.data()["deepep_normal"]]
    x = moe_dispatch_rows()[2]
    lines.append(localize_numbers(_("model: NIC-bound at {rate} GB/s per GPU; one dispatch {time} for {tokens} BF16 "
                                    "tokens with dedup and the {nodes}-node limit").format(
        rate=f"{rooflines.gpu_rates('dgx-h100', link='nic')[1] / 1e9:.0f}", time=format_time(x["time_s"]),
        tokens=f"{4096:,}", nodes=inference.data()["moe"]["deepseek-v3"]["max_nodes"])))
    ll = inference.data()["deepep_low_latency"]
    lines.append(localize_numbers(_("DeepEP low-latency kernels, EP {first}-{last}: dispatch {fast}-{slow} µs for 128 "
                                    "tokens (RDMA)").format(
        first=ll[0]["ep"], last=ll[-1]["ep"], fast=f"{min(r['dispatch_us'] for r in ll):g}",
        slow=f"{max(r['dispatch_us'] for r in ll):g}")))
    return "\n".join(lines)


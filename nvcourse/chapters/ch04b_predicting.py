"""Chapter 04b's dashboard: any collective on any catalog system, every algorithm's time and the chosen busbw.

The model is :mod:`nvcourse.costmodel.model`; this module wires controls to it and draws two panels.
Both panels keep fixed axes (1 µs – 100 s, 100 B/s – 2 TB/s over 8 B – 16 GiB), so switching systems
or operations compares like with like, and only the curves are redrawn on a change
(:class:`nvcourse.widgets.LiveFigure`).
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from .. import catalog
from ..costmodel import tuning
from ..costmodel.launch import LAUNCH_MODES
from ..costmodel.model import ALGORITHMS, OPERATIONS, algorithms
from ..costmodel.prediction import Prediction, predict, predict_sweep
from ..i18n import language, localize_numbers, number
from ..i18n import translate as _
from ..markup import details_html
from ..plots import ALGO_COLOURS, bytes_axis, new_figure, rate_axis, time_axis
from ..tables import table_html
from ..units import format_rate, format_size, format_time
from ..widgets import Dashboard, LiveFigure, new_live_figure

__all__ = [
    "SIZES",
    "SweepView",
    "BUILDING_BLOCK_SYSTEMS",
    "building_blocks_html",
    "symmetric_times",
    "kernel_words",
    "predict_dashboard",
    "readout_html",
    "picks_table",
    "hw_latency_lines",
    "protocol_kinks_figure",
    "RUNS_IN_WORDS",
    "run_band_errors",
    "runs_error_figure",
]

#: Message sizes of the sweep, bytes: 8 B .. 16 GiB.
SIZES = 2.0 ** np.arange(3, 35)
TIME_LIMITS_S = (1e-6, 1e2)
BUSBW_LIMITS_Bps = (1e2, 2e12)  # 8 B over 256 nodes reaches ~120 B/s of busbw


def _l(text: str) -> str:
    """A time, size or rate from :mod:`nvcourse.units` in the current language's number style."""
    return localize_numbers(text)


class SweepView:
    """Left: time of every algorithm that can run (thin) and of the chosen one (thick). Right: busbw of the
    choice, one colour per algorithm picked. Grey: sizes where the α term exceeds the bandwidth term."""

    def __init__(self) -> None:
        self.live, (ax1, ax2) = new_live_figure(10, 4.0, ncols=2)
        self.ax1, self.ax2 = ax1, ax2
        colour = {name: ALGO_COLOURS[name] for name in ALGORITHMS}
        self.lines = {name: ax1.plot(SIZES, SIZES, color=colour[name], lw=1, alpha=0.6, label=name)[0]
                      for name in ALGORITHMS}
        (self.chosen,) = ax1.plot(SIZES, SIZES, color="black", lw=2.5)
        # NCCL 2.27+'s symmetric kernels, drawn when the buffers are registered and NCCL would run them
        (self.symmetric,) = ax1.plot(SIZES, SIZES, color="black", lw=2, ls="--",
                                     label=_("registered buffers (symmetric)"))
        self.points = {name: ax2.plot(SIZES, SIZES, "o", ms=4, color=colour[name], label=name)[0]
                       for name in ALGORITHMS}
        for ax in (ax1, ax2):
            bytes_axis(ax, label=_("message size"))
            ax.set_xlim(SIZES[0], SIZES[-1])
        time_axis(ax1, label=_("time"))
        ax1.set_ylim(*TIME_LIMITS_S)
        ax1.set_title(_("time (grey: latency-bound)"), fontsize=10)
        rate_axis(ax2, label=_("busbw (per direction)"))
        ax2.set_ylim(*BUSBW_LIMITS_Bps)
        ax2.set_title(_("busbw as nccl-tests prints it"), fontsize=10)
        self.live.animate(*self.lines.values(), self.chosen, self.symmetric, *self.points.values())
        self.extras: list = []  # shading and legends: rebuilt on every change

    def __call__(
        self, op: str, algo: str, system: str, gpus: int, nodes: int, launch: str = "device",
        buffers: str = "plain",
    ) -> tuple[LiveFigure, str]:
        sw = predict_sweep(op, system, gpus, SIZES, nodes=nodes, algo=algo, launch=launch)
        # every algorithm that can run, NCCL's and the course's own, each with its fastest protocol
        full = {a: predict_sweep(op, system, gpus, SIZES, nodes=nodes, algo=a).time_s
                for a in algorithms(op, system, gpus, nodes)}
        for name, line in self.lines.items():
            line.set_visible(name in full)
            if name in full:
                line.set_ydata(full[name])
        self.chosen.set_ydata(sw.time_s)
        self.chosen.set_label(_("{algo} (chosen)").format(algo=algo))
        sym = symmetric_times(op, system, gpus, nodes, launch) if buffers == "registered" else None
        self.symmetric.set_visible(sym is not None)
        if sym is not None:
            self.symmetric.set_ydata(sym)
        picked = [str(a) for a in sw.algo]
        for name, points in self.points.items():
            mask = np.array([a == name for a in picked])
            points.set_visible(bool(mask.any()))
            points.set_data(SIZES[mask], sw.busbw_GBps[mask] * 1e9)
        keys = [f"{a}/{p}" for a, p in zip(sw.algo, sw.proto, strict=True)]
        lat = np.array([sw.costs[k].latency_at(s) for k, s in zip(keys, SIZES, strict=True)])
        bw_term = np.array([sw.costs[k].bandwidth_time(s) for k, s in zip(keys, SIZES, strict=True)])
        latency_bound = SIZES[lat >= bw_term]
        for artist in self.extras:
            self.live.forget(artist)
        self.extras = []
        if latency_bound.size:
            self.extras += [ax.axvspan(SIZES[0], latency_bound.max(), color="#999999", alpha=0.15, lw=0)
                            for ax in (self.ax1, self.ax2)]
        shown = [line for line in self.lines.values() if line.get_visible()]
        shown += [self.chosen] + ([self.symmetric] if sym is not None else [])
        self.extras.append(self.ax1.legend(handles=shown, fontsize=8, loc="upper left"))
        in_order = [self.points[name] for name in dict.fromkeys(picked)]
        self.extras.append(self.ax2.legend(handles=in_order, fontsize=8, loc="upper left", title=_("picked")))
        self.live.animate(*self.extras)
        # shading under the curves: move it to the front of the redraw list
        self.live.artists.sort(key=lambda a: a.get_zorder())
        bound = _l(format_size(latency_bound.max())) if latency_bound.size else None
        text = readout_html(op, system, gpus, nodes, algo, launch, bound)
        if buffers == "registered":
            text += "<br>" + _symmetric_text(op, system, gpus, nodes, launch)
        return self.live, text


def readout_html(op: str, system: str, gpus: int, nodes: int, algo: str, launch: str, bound: str | None) -> str:
    """The dashboard's readout: pick, time and busbw at 8 B and 1 GiB in a short table, one sentence on what to
    look at, and the rest (algbw, regime, the host's share of a small call) behind a collapsed ``<details>``.

    ``bound``: the largest latency-bound size as text (``None`` when no size is).
    """
    small, p = (predict(op, system, gpus, s, nodes=nodes, algo=algo, launch=launch) for s in (8, 2**30))
    rows = [[size, f"{q.algo}/{q.proto}", _l(format_time(q.time_s)), _l(format_rate(q.busbw_GBps * 1e9))]
            for size, q in (("8 B", small), ("1 GiB", p))]
    # "most": where the pick changes (e.g. 4 GPUs per node) a size or two inside the grey span is bandwidth-bound
    where = (_("at most sizes up to ≈ {bound} (grey) the α term is the larger one").format(bound=bound) if bound
             else _("no size is latency-bound here"))
    changes = (small.algo, small.proto) != (p.algo, p.proto)
    regime = {"latency-bound": _("latency-bound"), "bandwidth-bound": _("bandwidth-bound")}.get(p.regime, p.regime)
    return (_("<b>{op}</b> on {gpus} × {nodes} {system}, launch {launch}:").format(
                op=op, gpus=gpus, nodes=nodes, system=system, launch=launch)
            + table_html([_("size"), _("pick"), _("time"), "busbw"], rows)
            + (_("Look at how the pick changes from 8 B to 1 GiB: {where}.") if changes
               else _("The pick is the same at both sizes: {where}.")).format(where=where)
            + "<details><summary>" + _("all the figures") + "</summary>"
            + _("<b>1 GiB</b>: {pick}, {time}, algbw {algbw} GB/s, busbw {busbw} GB/s ({regime}). ").format(
                pick=f"{p.algo}/{p.proto}", time=_l(format_time(p.time_s)), algbw=number(p.algbw_GBps, ".1f"),
                busbw=number(p.busbw_GBps, ".1f"), regime=regime)
            + _("<b>8 B</b>: {time} ({pick}; {floor}).").format(
                time=_l(format_time(small.time_s)), pick=f"{small.algo}/{small.proto}", floor=_floor_text(small))
            + "</details>")


def symmetric_times(op: str, system: str, gpus: int, nodes: int, launch: str = "device") -> np.ndarray | None:
    """Time (s) at every size of :data:`SIZES` with registered buffers, where NCCL runs a symmetric kernel at
    every size; None where it does not (another operation, several nodes, a system without NVLink switches)."""
    ps = [predict(op, system, gpus, float(s), nodes=nodes, launch=launch, registered=True) for s in SIZES]
    if any(p.algo != "symmetric" for p in ps):
        return None
    return np.array([p.time_s for p in ps])


def _symmetric_text(op: str, system: str, gpus: int, nodes: int, launch: str) -> str:
    """The readout's line for registered buffers: the kernel and time at 8 B and 1 GiB, or why none runs."""
    from ..costmodel import configure, symmetric

    why = symmetric.why_not(op, configure(system, gpus, nodes))
    if why:
        return _("Registered buffers: no symmetric kernel here ({why}).").format(why=why)
    small, big = (predict(op, system, gpus, s, nodes=nodes, launch=launch, registered=True) for s in (8, 2**30))
    return _("Registered buffers (dashed): 8 B {small} ({small_kernel}), 1 GiB {big} ({big_kernel}).").format(
        small=_l(format_time(small.time_s)), small_kernel=kernel_words(small.kernel), big=_l(format_time(big.time_s)),
        big_kernel=kernel_words(big.kernel)) + " " + registered_gain_text(op, system, gpus, launch)


def kernel_words(name: str) -> str:
    """NCCL's name of a symmetric kernel with what it is in words: ``AGxLL`` one-shot (each GPU reads every other's
    buffer and adds), ``RSxLD`` two-shot (a reduce-scatter then an all-gather), ``MC`` through the switch's multicast.
    A name with none of these is returned as it is."""
    words = ([_("one-shot")] if "AGxLL" in name else [_("two-shot")] if "RSxLD" in name else [])
    words += [_("through the switch's multicast")] if "MC" in name else []
    return f"{name}: {', '.join(words)}" if words else name


def _floor_text(p: Prediction) -> str:
    """How the launch mode shows in an 8-byte call: no floor, a floor below the GPU time, or the host bound."""
    if p.launch == "device":
        return _("GPU time only")
    if p.host_floor_s <= 0:
        return _("{launch}: no host time per call").format(launch=p.launch)
    bound = _("host-bound") if p.host_floor_s > p.device_time_s else _("GPU-bound")
    return _("{launch}: host {host} per call, GPUs {gpus}, {bound}").format(
        launch=p.launch, host=_l(format_time(p.host_floor_s)), gpus=_l(format_time(p.device_time_s)), bound=bound)


def predict_dashboard(*, op: str = "allreduce", system: str = "dgx-h100", gpus: int = 8, nodes: int = 1) -> Dashboard:
    """Controls for operation, algorithm (``auto``, ``nccl`` or one that can run), system, GPUs per node and
    nodes; the controls only ever offer valid combinations."""
    import ipywidgets as w

    op_w = w.Dropdown(options=list(OPERATIONS), value=op, description=_("operation"))
    algo_w = w.Dropdown(options=["auto"], value="auto", description=_("algorithm"))
    sys_w = w.Dropdown(options=list(catalog.systems()), value=system, description=_("system"))
    gpus_w = w.IntSlider(value=gpus, min=1, max=8, description=_("GPUs/node"), continuous_update=False)
    nodes_w = w.Dropdown(options=[1, 2, 4, 8, 16, 64, 256], value=nodes, description=_("nodes"))
    buffers_w = w.Dropdown(options=[(_("plain"), "plain"), (_("registered"), "registered")], value="plain",
                           description=_("buffers"), tooltip=_("registered: a symmetric window (nccl-tests -R 2), "
                                                               "NCCL 2.27+'s symmetric kernels"))
    launch_w = w.Dropdown(options=list(LAUNCH_MODES), value="device", description=_("launch"),
                          description_allow_html=False,
                          tooltip=_("device: GPU time only (what NCCL's tuner estimates); single-process = "
                                    "nccl-tests -g N; process-per-gpu = mpirun/srun; cuda-graphs = -G"))

    def sync(_=None) -> None:
        """Keep the controls valid: GPU range from the system, algorithms from what can run."""
        s = catalog.get_system(sys_w.value)
        gpus_w.max = max(s.gpus_per_host, s.gpus_per_domain)
        gpus_w.min = 2 if nodes_w.value == 1 else 1
        names = ["auto", *algorithms(op_w.value, sys_w.value, gpus_w.value, nodes_w.value)]
        if algo_w.value not in names:
            algo_w.value = "auto"
        algo_w.options = names

    for widget in (op_w, sys_w, gpus_w, nodes_w):  # registered before the dashboard's observers: runs first
        widget.observe(sync, names="value")
    sync()
    controls = {"op": op_w, "algo": algo_w, "system": sys_w, "gpus": gpus_w, "nodes": nodes_w, "launch": launch_w,
                "buffers": buffers_w}
    return Dashboard(controls, SweepView(), columns=3)


#: Section 2's systems, from the PCIe server to the NVL72 rack.
BUILDING_BLOCK_SYSTEMS = ("pcie-8gpu", "dgx-1-v100", "dgx-a100", "dgx-h100", "dgx-b200", "gb200-nvl72")


def building_blocks_html(systems: tuple[str, ...] = BUILDING_BLOCK_SYSTEMS) -> str:
    """Section 2's table, for each system at its full node: the scale-up bandwidth B per GPU and what NCCL's rings
    reach inside the node (both per direction). Each GPU's share of the node's NICs (per direction) and the Simple
    protocol's α per NVLink or PCIe step sit behind a collapsed note: the section's sentence compares the first two."""
    from ..costmodel import configure

    rows, detail = [], []
    for sid in systems:
        s = catalog.get_system(sid)
        c = configure(sid, max(s.gpus_per_host, s.gpus_per_domain))
        rows.append([sid, localize_numbers(format_rate(c.dom.gpu_Bps)), localize_numbers(format_rate(c.dom.ring_Bps))])
        detail.append([sid, localize_numbers(format_rate(c.nic_Bps_per_gpu)),
                       localize_numbers(format_time(c.dom.alpha_s))])
    table = table_html([_("system"), _("B per GPU"), _("ring inside the node")], rows, escape=True)
    note = table_html([_("system"), _("NICs per GPU"), _("α per step (Simple)")], detail, escape=True)
    return table + details_html(_("Each GPU's share of the NICs, and α"), note)


def picks_table(configs: list[tuple[str, int, int]], sizes: list[int], op: str = "allreduce") -> str:
    """Plain text: the (algorithm/protocol) the model picks for ``op`` at each size, one configuration a row."""
    label = _("configuration")  # outside the f-string, where the extractor sees it
    lines = [f"{label:22s}" + "".join(f"{format_size(s):>16s}" for s in sizes)]
    for sid, g, k in configs:
        sw = predict_sweep(op, sid, g, sizes, nodes=k)
        cells = "".join(f"{a + '/' + p:>16s}" for a, p in zip(sw.algo, sw.proto, strict=True))
        lines.append(f"{f'{sid} {g}x{k}':22s}" + cells)
    return "\n".join(lines)



def _latency_list(values: list[float]) -> str:
    """A list of latencies as Python prints it; French numbers have a decimal comma, so items are separated by " ; "."""
    if language() != "fr":
        return str(values)
    return "[" + "\u00a0; ".join(localize_numbers(repr(v)) for v in values) + "]"


def hw_latency_lines() -> str:
    """NCCL's per-step hardware latency (µs) per link class, algorithm and protocol, then the base latency of one
    ring call and of one tree call per protocol (µs)."""
    head, algorithm = _("link class"), _("algorithm")  # outside the f-strings, where the extractor sees them
    lines = [f"{head:10s} {algorithm:9s}" + "".join(f"{p:>9s}" for p in tuning.PROTOCOLS) + "   "
             + _("(µs per step)")]
    for link in tuning.LINK_CLASSES:
        for algo in ("ring", "tree"):
            lines.append(f"{link:10s} {algo:9s}" + "".join(f"{tuning.hw_latency_us(link, algo, p):9.2f}"
                                                           for p in tuning.PROTOCOLS))
    ring, tree = ([tuning.base_latency_us(a, p) for p in tuning.PROTOCOLS] for a in ("ring", "tree"))
    lines.append(_("base latency per call, ring: {latencies} µs").format(latencies=_latency_list(ring)))
    lines.append(_("base latency per call, tree: {latencies} µs").format(latencies=_latency_list(tree)))
    return localize_numbers("\n".join(lines))


def registered_gain(op: str = "allreduce", system: str = "dgx-h100", gpus: int = 8,
                    launch: str = "device") -> dict[float, float]:
    """Size (bytes, every size of :data:`SIZES`) -> the time on plain buffers (NCCL's pick) ÷ the time on registered
    buffers (its symmetric kernels), on one node: above 1 the registered buffers are faster."""
    return {float(s): predict(op, system, gpus, float(s), launch=launch).time_s
            / predict(op, system, gpus, float(s), launch=launch, registered=True).time_s for s in SIZES}


def registered_gain_text(op: str = "allreduce", system: str = "dgx-h100", gpus: int = 8,
                         launch: str = "device") -> str:
    """The readout's sentence on how many times faster registered buffers make ``op``: the largest gain over
    :data:`SIZES` and its size, then the gain at 8 B and at 1 GiB."""
    gain = registered_gain(op, system, gpus, launch)
    best = max(gain, key=gain.__getitem__)
    small, big = f"{gain[8.0]:.1f}", f"{gain[2.0**30]:.1f}"
    if best == 8.0:  # the largest gain is the smallest size's: said once (an all-gather on 72 GPUs of an NVL72)
        return localize_numbers(_("Plain-buffer time ÷ registered time: {small}× at 8 B (the largest), {big}× at "
                                  "1 GiB.").format(small=small, big=big))
    return localize_numbers(_("Plain-buffer time ÷ registered time: {best}× at {size} (the largest), {small}× at "
                              "8 B, {big}× at 1 GiB.").format(
        best=f"{gain[best]:.1f}", size=_l(format_size(best)), small=small, big=big))


def protocol_kinks_figure(sweep_id: str = "azure-nd-gb200-v6-allreduce-4gpu"):
    """A published sweep's time next to the model's ring/LL, ring/LL128 and ring/Simple lines and its switch
    points (dotted): where the protocol changes, a single α–β line cannot follow the measurement."""
    from ..costmodel import sweeps
    from ..plots import new_figure

    pts = [p for p in sweeps.points() if p.sweep == sweep_id]
    first = pts[0]
    sizes = np.array([p.bytes for p in pts], dtype=float)
    fig, ax = new_figure(7.5, 4.2)
    ax.plot(sizes, [p.time_s for p in pts], "o", color="black", ms=4, label=_("published run"))
    grid = 2.0 ** np.arange(np.log2(sizes[0]), np.log2(sizes[-1]) + 0.01, 0.25)
    algo = "auto" if first.algo == "nccl" else first.algo
    sw = predict_sweep(
        first.op, first.system, first.gpus, grid, nodes=first.nodes, algo=algo, fabric=first.fabric,
        launch=sweeps.launch_of(first),
    )
    colours = {"LL": "#0072B2", "LL128": "#009E73", "Simple": "#D55E00"}
    for key, t in sw.times_by_pair.items():
        ax.plot(grid, t, lw=1, alpha=0.7, color=colours.get(key.split("/")[1], "#777777"),
                label=_("model {pair}").format(pair=key))
    floor_label = _("model: fastest pair, max with the host floor ({launch})").format(launch=sweeps.launch_of(first))
    ax.plot(grid, sw.time_s, lw=2.2, color="#444444", alpha=0.5, label=floor_label)
    for i in np.nonzero(sw.proto[1:] != sw.proto[:-1])[0]:
        ax.axvline(grid[i + 1], ls=":", color="#444444", lw=1)
    bytes_axis(ax, label=_("message size"))
    time_axis(ax, label=_("time"))
    ax.set_ylim(sw.time_s.min() / 2, max(p.time_s for p in pts) * 2)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(_("{op} on {gpus} x {system}: dotted = the model's protocol switches").format(
        op=first.op, gpus=first.gpus, system=first.system), fontsize=9)
    return fig


#: The published runs chapter 04b draws against the model, each named in words (the data files keep the ids,
#: URLs and launch details; docs/model-validation.md shows every run). The first two are held out: gathered apart
#: and never used to change the model, so their error is the model's real one.
RUNS_IN_WORDS: dict[str, str] = {
    "heldout-gcp-gke-gib-2node-16gpu-allgather": "2 nodes of 8 B200, RoCE: all-gather (held out)",
    "heldout-gcp-a3ultra-h200-2node-gib-allgather": "2 nodes of 8 H200, RoCE: all-gather (held out)",
    "nvidia-dgxc-h100-allreduce-8gpu": "8 H100, one node: all-reduce",
    "nccl-tests-309-h100-2node-ib-allreduce": "2 nodes of 8 H100, InfiniBand: all-reduce",
    "oci-oke-gb200-mnnvl-8gpu-allreduce": "8 GB200 over NVLink, two trays: all-reduce",
}


def _run_label(words: str) -> str:
    """A run's name in words (a value of :data:`RUNS_IN_WORDS`) in the current language; others unchanged."""
    return {"2 nodes of 8 B200, RoCE: all-gather (held out)": _("2 nodes of 8 B200, RoCE: all-gather (held out)"),
            "2 nodes of 8 H200, RoCE: all-gather (held out)": _("2 nodes of 8 H200, RoCE: all-gather (held out)"),
            "8 H100, one node: all-reduce": _("8 H100, one node: all-reduce"),
            "2 nodes of 8 H100, InfiniBand: all-reduce": _("2 nodes of 8 H100, InfiniBand: all-reduce"),
            "8 GB200 over NVLink, two trays: all-reduce": _("8 GB200 over NVLink, two trays: all-reduce")}.get(words,
                                                                                                             words)


_BAR_GREYS = ("#111111", "#555555", "#999999", "#dddddd", "#ffffff")
_BAR_HATCHES = ("", "//", "..", "xx", "\\\\")


def run_band_errors(runs: dict[str, str] | None = None) -> dict[str, dict[str, float]]:
    """Median signed error of the model's time, (predicted / published − 1), per size band of
    :data:`nvcourse.costmodel.sweeps.BANDS`, for each run of ``runs`` (default :data:`RUNS_IN_WORDS`), keyed by
    its name in words. Negative: the model is faster than the run."""
    from ..costmodel import sweeps

    runs = RUNS_IN_WORDS if runs is None else runs
    rows = sweeps.compare([p for p in sweeps.points("all") if p.sweep in runs])
    out: dict[str, dict[str, float]] = {}
    for run_id, words in runs.items():
        mine = [r for r in rows if r.point.sweep == run_id]
        out[words] = {label: float(np.median([r.error for r in mine if lo <= r.point.bytes <= hi]))
                      for label, lo, hi in sweeps.BANDS if any(lo <= r.point.bytes <= hi for r in mine)}
    return out


def runs_error_figure(runs: dict[str, str] | None = None) -> Figure:
    """Grouped bars: per size band, the model's median time error (%) on a few published all-reduce runs,
    one bar per run, told apart by grey level and hatching (readable in greyscale)."""
    from ..costmodel import sweeps

    errors = run_band_errors(runs)
    bands = [label for label, _, _ in sweeps.BANDS]
    fig, ax = new_figure(7.5, 4.2)
    width = 0.8 / len(errors)
    for i, (words, by_band) in enumerate(errors.items()):
        xs = [j + (i - (len(errors) - 1) / 2) * width for j, b in enumerate(bands) if b in by_band]
        ys = [by_band[b] * 100 for b in bands if b in by_band]
        ax.bar(xs, ys, width * 0.95, color=_BAR_GREYS[i % 5], hatch=_BAR_HATCHES[i % 5], edgecolor="black",
               lw=0.8, label=_run_label(words))
    ax.axhline(0, color="black", lw=1)
    ax.set_xticks(range(len(bands)), [b.replace("<=", "≤").replace(">=", "≥").replace("-", " – ") for b in bands])
    ax.set_xlabel(_("message size"))
    ax.set_ylabel(_("model time vs published (%)"))
    lo = min(min(v.values()) for v in errors.values()) * 100
    hi = max(max(v.values()) for v in errors.values()) * 100
    ax.set_ylim(min(-10.0, lo * 1.15) - 2, max(10.0, hi * 1.15) + 25)
    ax.legend(fontsize=7, loc="upper center", ncol=2)
    ax.set_title(_("the model's median time error per size band (below 0: the model is too fast)"), fontsize=9)
    return fig

"""Chapter 07's figures and step-time dashboard: model, cluster and parallelism → step breakdown, efficiency, cost.

The model is :mod:`nvcourse.training`; this module only wires controls to it and draws the bars and curves.
"""

from __future__ import annotations

import ipywidgets as w
import numpy as np
from matplotlib.figure import Figure

from .. import _data, catalog, training
from ..i18n import language, localize_numbers, number, pgettext, whole
from ..i18n import translate as _
from ..markup import html_escape
from ..plots import new_figure
from ..tables import table_html
from ..units import format_time
from ..widgets import Dashboard

__all__ = [
    "STEP_COLOURS",
    "GPU_COUNTS",
    "SYSTEM_STYLES",
    "step_breakdown_bar",
    "placement_figure",
    "scaling_efficiency_figure",
    "step_dashboard",
    "compute_days_lines",
    "breakdown_lines",
    "price_table_html",
    "price_text",
    "cost_lines",
    "placement_title",
    "moe_dispatch_lines",
    "moe_step_lines",
]

#: One colour per part of a training step, shared by every figure of chapter 07.
STEP_COLOURS = {
    "compute": "#999999",
    "pipeline bubble": "#dddddd",
    "TP comm": "#009E73",
    "PP comm": "#E69F00",
    "EP comm": "#CC79A7",
    "DP comm (exposed)": "#0072B2",
}
GPU_COUNTS = [2**k for k in range(3, 15)]  # 8 .. 16,384
#: (colour, marker) of each cluster in the scaling-efficiency figure; any other system gets grey circles.
SYSTEM_STYLES = {"pcie-8gpu": ("#E69F00", "s"), "dgx-h100": ("#0072B2", "o"), "gb200-nvl72": ("#009E73", "^")}


def _part(part: str) -> str:
    """The legend's name of a part of the step (a key of :data:`STEP_COLOURS`) in the current language."""
    names = {"compute": _("compute"), "pipeline bubble": _("pipeline bubble"), "TP comm": _("TP comm"),
             "PP comm": _("PP comm"), "EP comm": _("EP comm"), "DP comm (exposed)": _("DP comm (exposed)")}
    return names.get(part, part)


def _pct(fraction: float, spec: str = ".0%") -> str:
    """``0.425`` as ``42%`` / ``42.5%`` (English, as Python writes it) or ``42 %`` / ``42,5 %`` (French)."""
    if language() != "fr":
        return format(fraction, spec)
    return number(100 * fraction, spec.replace("%", "f")) + "\u00a0%"


def step_breakdown_bar(step: training.StepTime) -> Figure:
    """One horizontal stacked bar: where the seconds of a training step go."""
    fig, ax = new_figure(8, 2.4)
    left = 0.0
    for part, sec in step.breakdown().items():
        ax.barh(0, sec, left=left, color=STEP_COLOURS[part], label=_part(part))
        left += sec
    ax.set_yticks([])
    ax.set_xlabel(_("seconds per step"))
    ax.legend(fontsize=7, ncols=5, loc="upper center", bbox_to_anchor=(0.5, -0.35))
    return fig


def placement_figure(tp_first: training.StepTime, dp_first: training.StepTime, title: str) -> Figure:
    """Two stacked bars, seconds per step by part, for the same degrees placed tp-first (TP groups inside a node,
    on NVLink) and dp-first (TP groups across nodes, on the NICs); each bar ends with its step time and MFU."""
    fig, ax = new_figure(8, 3.6)
    runs = {_("tp-first\n(TP in NVLink)"): tp_first, _("dp-first\n(TP over NICs)"): dp_first}
    for i, s in enumerate(runs.values()):
        left = 0.0
        for part, sec in s.breakdown().items():
            ax.barh(i, sec, left=left, color=STEP_COLOURS[part], label=_part(part) if i == 0 else None)
            left += sec
        ax.text(left, i, _("  {seconds} s, MFU {mfu}").format(seconds=number(s.total_s, ".1f"), mfu=_pct(s.mfu)),
                va="center")
    ax.set_yticks(range(len(runs)), list(runs))
    ax.set_xlabel(_("seconds per step"))
    # room right of the longer bar for its "x s, MFU y %" text
    ax.set_xlim(0, 1.35 * max(s.total_s for s in runs.values()))
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title)
    return fig


def scaling_efficiency_figure(
    model_ids: list[str], systems: list[str], counts: list[int] = GPU_COUNTS
) -> tuple[Figure, dict[tuple[str, str, int], training.StepTime]]:
    """Scaling efficiency (0–1: step time without communication or bubble / real step time) against GPU count,
    one panel per model, one curve per cluster, each point :func:`nvcourse.training.best_config`'s fastest layout
    that fits. Returns the figure and those configurations by ``(model, system, gpus)``; a count where the model
    does not fit in memory has no point and no entry."""
    fig, axes = new_figure(11, 3.6, ncols=len(model_ids))
    axes = np.atleast_1d(axes)  # one model: one Axes, not an array
    table = {}
    for ax, mid in zip(axes, model_ids):
        for sid in systems:
            xs, ys = [], []
            for g in counts:
                b = training.best_config(mid, sid, g)
                if b is not None:
                    xs.append(g)
                    ys.append(b.efficiency)
                    table[(mid, sid, g)] = b
            colour, marker = SYSTEM_STYLES.get(sid, ("#555555", "o"))
            ax.plot(xs, ys, marker=marker, color=colour, label=catalog.get_system(sid).name.split(" (")[0])
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.05)
        ax.set_title(training.get_model(mid).name)
        ax.set_xlabel(_("GPUs"))
    axes[0].set_ylabel(_("scaling efficiency"))
    axes[0].legend(fontsize=7, loc="lower left")
    return fig, table


def _render(gpus, model, system, tp, pp, placement, efficiency, tokens_T, price):
    s = training.step_time(model, system, gpus, tp=tp, pp=pp, placement=placement,
                           compute_efficiency=efficiency, virtual_stages=1)
    cost = training.run_cost(s, tokens_T * 1e12, usd_per_gpu_hour=price or None)
    fit = _("fits") if s.fits else _("<b>does not fit</b>")
    text = _("step {step} s · MFU {mfu} · scaling efficiency {eff} · dp = {dp}, m = {m}<br>memory per GPU {mem} GB "
             "of {capacity} GB ({fit}) · run: {days} days, ${usd} M, {energy} MWh").format(
        step=number(s.total_s, ".2f"), mfu=_pct(s.mfu, ".1%"), eff=_pct(s.efficiency), dp=s.dp, m=s.micro_batches,
        mem=number(s.memory.total / 1e9, ".0f"), capacity=number(s.memory_capacity_GB, ".0f"), fit=fit,
        days=number(cost.hours / 24, ".1f"), usd=number(cost.usd / 1e6, ".2f"),
        energy=whole(int(round(cost.energy_MWh))))
    return step_breakdown_bar(s), text


def step_dashboard(*, models: list[str], systems: list[str], compute_efficiency: float,
                   tokens_T: float = 15.6) -> Dashboard:
    """GPUs, model, cluster, TP, PP, placement, compute efficiency, tokens and price → step time and run cost.

    The GPU slider only offers counts that are multiples of TP × PP, so no setting is invalid.
    """
    controls = {
        "gpus": w.SelectionSlider(options=GPU_COUNTS, value=1024, description=_("GPUs"),
                                  continuous_update=False),
        "model": w.Dropdown(options=models, value=models[min(1, len(models) - 1)], description=_("model")),
        "system": w.Dropdown(options=systems, value=systems[min(1, len(systems) - 1)], description=_("cluster")),
        "tp": w.Dropdown(options=[1, 2, 4, 8, 16, 32, 64], value=8, description="TP"),
        "pp": w.Dropdown(options=[1, 2, 4, 8, 16], value=4, description="PP"),
        "placement": w.Dropdown(options=list(training.PLACEMENTS), value="tp-first",
                                 description=_("placement")),
        "efficiency": w.FloatSlider(value=compute_efficiency, min=0.2, max=0.8, step=0.05,
                                    description=_("compute eff."), continuous_update=False),
        "tokens_T": w.FloatSlider(value=tokens_T, min=0.5, max=30, step=0.5, description=_("tokens (T)"),
                                  continuous_update=False),
        "price": w.BoundedFloatText(value=0.0, min=0.0, max=100.0, step=0.1, description=_("$/GPU-h")),
    }

    def restrict_gpus(_change=None) -> None:
        # Registered before the Dashboard's own observers, so the GPU count is valid before it re-renders.
        need = controls["tp"].value * controls["pp"].value
        options = [g for g in GPU_COUNTS if g >= need and g % need == 0]
        if list(controls["gpus"].options) != options:
            value = controls["gpus"].value if controls["gpus"].value in options else options[0]
            controls["gpus"].options = options
            controls["gpus"].value = value

    for name in ("tp", "pp"):
        controls[name].observe(restrict_gpus, names="value")
    restrict_gpus()
    return Dashboard(controls, _render, columns=3)


def _price_assumptions() -> dict[str, str]:
    """The reasons ``data/costs.toml`` gives for an assumed price per GPU-hour (``src.usd_per_gpu_hour =
    "assumption:<reason>"``) of the systems the chapter's price table shows, English -> the current language (the
    data file stays English; another reason shows as written)."""
    return {"no sourced GB200 rental price in the course sources":
            _("no sourced GB200 rental price in the course sources")}


def price_source_html(key: str) -> str:
    """A price's source for a learner: its title as a link (``data/costs.toml [sources]``), or an assumption's
    reason in words; never the data file's internal key."""
    if key.startswith("assumption:"):
        why = key.split(":", 1)[1].strip()
        return html_escape(_("assumption: {why}").format(why=_price_assumptions().get(why, why)))
    src = _data.load("costs")["sources"][key]
    title = _data.shown("costs", "sources", src)["title"].split(":", 1)[0].strip()
    return f'<a href="{html_escape(src["url"])}">{html_escape(title)}</a>'


def compute_days_lines(ref_id: str = "llama3-405b-16k", gpu_id: str = "h100") -> str:
    """The training compute 6ND (FLOPs) of a reference run (``data/training.toml``) and its days of pure compute on
    its GPU count at ``gpu_id``'s dense BF16 peak × the course's compute efficiency: two lines."""
    ref = training.data()["reference_runs"][ref_id]
    spec, gpu = training.get_model(ref["model"]), catalog.get_gpu(gpu_id)
    flops = training.training_flops(spec.params, ref["training_tokens"])
    eff = training.data()["defaults"]["compute_efficiency"]
    days = training.compute_time_s(flops, ref["gpus"], peak_TFLOPS=gpu.bf16_TFLOPS, efficiency=eff) / 86400
    return "\n".join([
        _("{model} on {tokens} tokens: 6ND = {flops} FLOPs").format(
            model=spec.name, tokens=number(ref["training_tokens"], ".3g"), flops=number(flops, ".3g")),
        _("on {gpus} x {gpu} at {tflops} TFLOPS x {eff}: {days} days of pure compute").format(
            gpus=number(ref["gpus"], ","), gpu=gpu.name, tflops=number(gpu.bf16_TFLOPS, ".0f"), eff=number(eff, "g"),
            days=number(days, ".0f"))])


def breakdown_lines(step: training.StepTime, reported_mfu: float | None = None) -> str:
    """Where a step's seconds go (s and share of the step), its data-parallel degree and micro-batches, the model
    FLOPs utilisation (MFU; beside ``reported_mfu``, a fraction, when given) and the first pipeline stage's
    memory (GB, 10⁹ bytes) against the GPU's: one line each."""
    lines = [f"{_part(part):>20}: {number(seconds, '6.3f')} s  ({_pct(seconds / step.total_s, '5.1%')})"
             for part, seconds in step.breakdown().items()]
    lines.append(_("{step}: {seconds} s   dp = {dp}, micro-batches per replica m = {m}").format(
        step=format(pgettext("training", "step"), ">20"), seconds=number(step.total_s, "6.3f"), dp=step.dp,
        m=step.micro_batches))
    mfu = _("model MFU = {mfu}").format(mfu=_pct(step.mfu, ".1%"))
    if reported_mfu is not None:
        mfu += "   " + _("(reported by Meta: {mfu})").format(mfu=_pct(reported_mfu, ".0%"))
    lines.append(mfu)
    lines.append(_("memory of the first pipeline stage: {used} GB of {capacity} GB").format(
        used=number(step.memory.total / 1e9, ".0f"), capacity=number(step.memory_capacity_GB, ".0f")))
    return "\n".join(lines)


def _label(label: str) -> str:
    """A price's or a power's kind (``data/costs.toml``: spec, est, assumption) in the current language."""
    names = {"spec": _("spec"), "est": _("est"), "assumption": _("assumption")}
    return names.get(label, label)


def price_text(usd_per_gpu_hour: float) -> str:
    """A price per GPU-hour (US$) with as many decimals as it is stored with (2 or 3, e.g. 1.50 or 4.916), so that
    typing the shown figure into the dashboard gives the same cost as its price 0 (the course's price)."""
    decimals = 2 if round(usd_per_gpu_hour, 2) == usd_per_gpu_hour else 3
    return number(usd_per_gpu_hour, f".{decimals}f")


def price_table_html(systems: list[str]) -> str:
    """The price per GPU-hour (US$) and the power per GPU (kW, its share of the system's) of each system, with
    each figure's kind, date and source (``data/costs.toml``): an HTML table."""
    rows = []
    for sid in systems:
        c = training.system_costs(sid)
        rows.append((sid, f"${price_text(c['usd_per_gpu_hour'])}", _label(c["usd_label"]), c["usd_date"],
                     price_source_html(c["src"]["usd_per_gpu_hour"]),
                     f"{number(c['kW_per_gpu'], '.2f')} kW ({_label(c['kW_label'])})"))
    return table_html([_("system"), _("price per GPU-hour"), _("kind"), _("date"), _("price source"),
                       _("power per GPU (system share)")], rows, escape=True, html_cols=[4])


def cost_lines(table: dict, model_ids: list[str], systems: list[str], tokens: float, gpus: int = 4096) -> str:
    """Days, rent (US$), energy (GWh), electricity (US$) and power (MW) of training each model on ``tokens`` tokens
    on ``gpus`` GPUs of each system (``table``: the best step per (model, system, GPUs), as the scaling figure
    returns it), then a small job on which both clusters scale well: a fixed-width text table."""
    lines = [_("Training on {tokens} tokens (Llama 3 405B's token count, used for every model here):").format(
        tokens=number(tokens, ".3g")),
        "".join(format(" " + head, f">{width}s")  # a space: a translated header may fill its column
                for head, width in ((_("days"), 50), (_("rent"), 11), (_("energy"), 11), (_("electricity"), 13),
                                    (_("power"), 9)))]
    for mid in model_ids:
        for sid in systems:
            if (b := table.get((mid, sid, gpus))) is None:
                continue
            c = training.run_cost(b, tokens)
            where = _("{model} on {gpus} GPUs of {system}").format(model=f"{mid:>12}", gpus=number(gpus, ","),
                                                                   system=f"{sid:<12}")
            lines.append(f"{where}:{number(c.hours / 24, '8.1f')}{'$' + number(c.usd / 1e6, '.1f') + ' M':>11s}"
                         f"{number(c.energy_MWh / 1e3, '.1f') + ' GWh':>11s}"
                         f"{'$' + number(c.energy_usd / 1e6, '.2f') + ' M':>13s}"
                         f"{number(c.energy_MWh / c.hours, '.1f') + ' MW':>9s}")
    lines.append("\n" + _("A small job on which both scale well: llama3-8b on 64 GPUs, same tokens"))
    for sid in ("pcie-8gpu", "dgx-h100"):
        c = training.run_cost(training.best_config("llama3-8b", sid, 64), tokens)
        lines.append(_("{system}: {days} days, ${usd} M").format(
            system=f"{sid:>12}", days=number(c.hours / 24, "6.1f"), usd=number(c.usd / 1e6, "5.2f")))
    return "\n".join(lines)


def placement_title(step: training.StepTime, gpu_id: str = "h100") -> str:
    """The placement figure's title: the step's model, its GPU count and GPU (short name)."""
    return _("{model}, {gpus} {gpu}: same degrees, two placements").format(
        model=training.get_model(step.model).name, gpus=number(step.gpus, ","), gpu=gpu_id.upper())


def moe_dispatch_lines(tokens: int = 4096, hidden: int = 7168, top_k: int = 8) -> str:
    """One MoE dispatch's bytes per GPU (MB) and its all-to-all time on four expert-parallel placements."""
    nbytes = training.moe_alltoall_bytes(tokens=tokens, hidden=hidden, top_k=top_k)
    cases = [
        (_("EP 8 in one DGX H100"), "dgx-h100", training.Placement(8, 8, 1)),
        (_("EP 8, one GPU in each of 8 DGX H100"), "dgx-h100", training.Placement(8, 1, 8)),
        (_("EP 64 in one NVL72 rack"), "gb200-nvl72", training.Placement(64, 64, 1)),
        (_("EP 64 over 8 DGX H100 (8 per node)"), "dgx-h100", training.Placement(64, 8, 8)),
    ]
    lines = [_("one dispatch: {mb} MB per GPU").format(mb=number(nbytes / 1e6, ".0f"))]
    for label, sid, pl in cases:
        time = localize_numbers(format_time(training.collective_time("alltoall", sid, pl, nbytes)))
        lines.append(_("{label}: {time}").format(label=f"{label:>38}", time=time))
    return "\n".join(lines)


def moe_step_lines(gpus: int = 64, system: str = "dgx-h100", *, experts: int = 8, top_k: int = 2,
                   active_params: float = 13e9) -> str:
    """The step of an illustrative 47B MoE (every layer an MoE layer; ``experts``, ``top_k``, ``active_params``
    parameters per token) with EP 8 in one node and across 8 nodes: the step time and its non-zero parts (s, ms)."""
    moe = training.ModelSpec(id="moe-47b", name="illustrative MoE", params=47e9, layers=32, hidden=4096, heads=32,
                             seq=4096, global_batch_tokens=4 * 2**20)  # assumption, every layer an MoE layer
    lines = []
    for label, tp, pp in [(_("EP 8 in one node (tp 1, pp 4)"), 1, 4), (_("EP 8 across 8 nodes (tp 8, pp 1)"), 8, 1)]:
        s = training.step_time(moe, system, gpus, tp=tp, pp=pp, ep=8, experts=experts, top_k=top_k,
                               active_params=active_params)
        parts = ", ".join(f"{_part(k)} {format_time(v)}" for k, v in s.breakdown().items() if v > 0)
        lines.append(_("{label}: step {time} = {parts}").format(label=label, time=format_time(s.total_s),
                                                               parts=parts))
    return localize_numbers("\n".join(lines))

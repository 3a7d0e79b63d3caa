"""Chapter 09 (capstone: design a cluster): the comparison table and the design dashboard.

The model is :mod:`nvcourse.capstone` (targets, designs, gates, decision log) on top of
:mod:`nvcourse.training` and :mod:`nvcourse.reliability`. Times in seconds, money in US dollars.
"""

from __future__ import annotations

import math
from dataclasses import replace

import ipywidgets as w
from matplotlib.figure import Figure

from .. import capstone, catalog, training
from .. import capstone_gates as gates
from ..i18n import language, ngettext, number, whole
from ..i18n import translate as _
from ..markup import details_html, html_escape, mark_html
from ..observability import counters
from ..plots import new_figure
from ..tables import table_html
from ..units import percent_spec
from ..widgets import Dashboard

__all__ = ["comparison_table_html", "comparison_summary_html", "design_view", "design_dashboard", "price_headroom_html",
           "price_basis", "prices_html", "fabric_choices", "compared_jobs"]

#: Systems offered by the design dashboard.
SYSTEMS = ("pcie-8gpu", "dgx-h100", "hgx-h200", "dgx-b200", "gb200-nvl72")
#: One colour per part of a step (the order of :meth:`nvcourse.training.StepTime.breakdown`).
STEP_COLOURS = ("#999999", "#dddddd", "#009E73", "#E69F00", "#0072B2")


def _pct(fraction: float, spec: str = ".0%") -> str:
    """``0.425`` as ``42%`` / ``42.50%`` (English, as Python writes it) or ``42 %`` / ``42,50 %`` (French)."""
    if language() != "fr":
        return format(fraction, spec)
    return number(100 * fraction, spec.replace("%", "f")) + "\u00a0%"


def price_label(label: str) -> str:
    """A price's or a power figure's label in ``data/costs.toml`` (spec, est, assumption) in the current language."""
    return {"spec": _("spec"), "est": _("est"), "assumption": _("assumption")}.get(label, label)


def _names(gate_list) -> str:
    """The names of the gates, in the current language, comma-separated."""
    return ", ".join(gates.gate_name(g.name) for g in gate_list)


def _part(part: str) -> str:
    """The legend's name of a part of the step (a key of :meth:`nvcourse.training.StepTime.breakdown`)."""
    names = {"compute": _("compute"), "pipeline bubble": _("pipeline bubble"), "TP comm": _("TP comm"),
             "PP comm": _("PP comm"), "EP comm": _("EP comm"), "DP comm (exposed)": _("DP comm (exposed)")}
    return names.get(part, part)


def comparison_table_html(reports: list[capstone.Report]) -> str:
    """One row per evaluated design: size, parallelism, days, $M, efficiency, goodput, MW and the gates.

    Text is escaped (no TeX from "$M"); the gates are marked in colour and words, not emoji (which need an
    emoji font).
    """
    rows = [[r.design.system, r.design.gpus, f"{r.design.tp}×{r.design.pp}×{r.step.dp}",
             number(r.cost.hours / 24, ".1f"), number(r.cost.usd / 1e6, ".2f"), _pct(r.step.efficiency),
             _pct(r.goodput, ".1%"), number(r.MW, ".2f"),
             mark_html(True, _("all pass")) if r.passed else mark_html(False, _names(r.failed))]
            for r in reports]
    return table_html([_("system"), _("GPUs"), "TP×PP×DP", _("days"), _("$M"), _("efficiency"), _("goodput"), "MW",
                       _("gates")], rows, escape=True, html_cols=[8])


def _gates_mark(passed: bool, failed_names: list[str], word: str | None = None) -> str:
    """All pass (or ``word``), else the failing gates (their ``Gate.name`` keys) named in the current language."""
    return (mark_html(True, word or _("all pass")) if passed
            else mark_html(False, ", ".join(map(gates.gate_name, failed_names))))


def _survey_row(r: capstone.Report, alt: capstone.Report | None, date: str | None) -> list:
    gates_cell = _gates_mark(r.passed, [g.name for g in r.failed])
    row = [html_escape(r.design.system), r.design.gpus, number(r.cost.hours / 24, ".1f"),
           number(r.cost.usd / 1e6, ".2f")]
    if date is None:
        return [*row, gates_cell]
    if alt is not None and [g.name for g in alt.failed] != [g.name for g in r.failed]:
        gates_cell += _(" · at {date} prices: ").format(date=date) + _gates_mark(alt.passed,
                                                                                [g.name for g in alt.failed])
    return [*row, "—" if alt is None else number(alt.cost.usd / 1e6, ".2f"), gates_cell]


def _passing(reports) -> str:
    return "; ".join(_("{gpus} GPUs of {system}").format(gpus=number(r.design.gpus, ","), system=r.design.system)
                     for r in reports if r.passed)


def price_basis(reports: list[capstone.Report]) -> tuple[str | None, list[capstone.Report | None]]:
    """The one month at which every surveyed system has a price (:func:`nvcourse.capstone.common_price_date`) and
    each report evaluated at that month's price; (None, []) when the data file's prices already share one date or
    no month is common to all."""
    systems = sorted({r.design.system for r in reports})
    date = capstone.common_price_date(systems)
    if date is None or all(training.system_costs(s)["usd_date"] == date for s in systems):
        return None, []
    return date, [capstone.at_price_date(r, date) for r in reports]


def comparison_summary_html(reports: list[capstone.Report]) -> str:
    """The survey in short: system, GPUs, days, $M and the gates per design, one sentence naming the designs that
    pass every gate, and the full table (layout, efficiency, goodput, MW) behind a toggle.

    When the data file's prices have different dates, a second $M column prices every design at the one month all
    systems have a price for (like for like), and the verdict is given on both bases."""
    date, alts = price_basis(reports)
    rows = [_survey_row(r, alts[i] if date else None, date) for i, r in enumerate(reports)]
    head = [_("system"), _("GPUs"), _("days"), _("$M")] + ([_("$M at {date} prices").format(date=date)] if date
                                                           else []) + [_("gates")]
    if date:
        head[3] = _("$M at the course's prices")
    short = table_html(head, rows)
    ok = [r for r in reports if r.passed]
    verdict = (_("{ok} of {total} designs pass every gate").format(ok=len(ok), total=len(reports))
               + (_(" at the course's prices") if date else "")
               + (_(": {passing}.").format(passing=_passing(reports)) if ok else "."))
    if date:
        alt_ok = _passing([a for a in alts if a is not None])
        verdict += (_(" At {date} prices the same designs pass.").format(date=date) if alt_ok == _passing(reports)
                    else _(" At {date} prices: {passing}.").format(date=date, passing=alt_ok or _("none")))
        systems = list(dict.fromkeys(r.design.system for r in reports))
        cost = {s: training.system_costs(s) for s in systems}
        older = ", ".join(_("{system} as of {date} ({label})").format(system=s, date=cost[s]["usd_date"],
                                                                      label=price_label(cost[s]["usd_label"]))
                          for s in systems if cost[s]["usd_date"] != date)
        same = "; ".join(f"{s} {price_label(capstone.price_on(s, date)[1])}" for s in systems)
        verdict += _(" The course's price table prices {older} and the others as of {date}; the {date} column "
                     "prices every system in that one month, like for like ({same}).").format(
            older=older, date=date, same=same)
    return (short + f"<p>{html_escape(verdict)} "
            + _("The failing rows name the gates that fail: that is what to change.") + "</p>"
            + details_html(_("The full table: layout (TP×PP×DP), efficiency, goodput and power per design"),
                       comparison_table_html(reports)))


def prices_html(systems: list[str]) -> str:
    """Each system's price per GPU-hour and power per GPU from ``data/costs.toml``, with label and date, and its
    price in the month every listed system has one (:func:`nvcourse.capstone.common_price_date`)."""
    date = capstone.common_price_date(systems)
    rows = []
    for s in systems:
        c = training.system_costs(s)
        same = capstone.price_on(s, date) if date else None
        rows.append([html_escape(s), f"&#36;{number(c['usd_per_gpu_hour'], '.2f')}",
                     f"{price_label(c['usd_label'])}, {c['usd_date']}",
                     "—" if same is None else f"&#36;{number(same[0], '.2f')} ({price_label(same[1])})",
                     f"{number(c['kW_per_gpu'], 'g')} ({price_label(c['kW_label'])})"])
    return table_html([_("system"), _("price used, per GPU-h"), _("label, date"),
                       _("price of {date}").format(date=date or "—"), _("kW per GPU")], rows)


def _cents_down(usd: float) -> float:
    """``usd`` rounded down to the cent (a price that still passes when typed back in), in $."""
    return math.floor(round(usd * 100, 6)) / 100


def price_headroom_html(report: capstone.Report) -> str:
    """How far the GPU-hour price may rise before ``report``'s design fails its budget (cost = GPU-hours × price,
    :func:`nvcourse.training.run_cost`); $ per GPU-hour.

    The limit is rounded down to the cent and the change to the whole percent in the direction that keeps the
    sentence true: the printed price, typed into the dashboard's price box, passes the budget gate (rounded to the
    nearest cent it could be a fraction of a cent too high, and fail)."""
    hours = report.cost.gpu_hours
    price = report.cost.usd / hours
    limit = _cents_down(report.targets.max_usd / hours)
    if report.cost.usd <= report.targets.max_usd:  # up to +change the budget holds: round it down
        change = max(0.0, math.floor(round((limit / price - 1) * 100, 6)) / 100)
        where = _("the budget holds up to &#36;{limit}/GPU-h, {change} above the price used")
    else:  # the price must fall by change at least: round it up
        change = math.ceil(round((1 - limit / price) * 100, 6)) / 100
        where = _("the budget needs &#36;{limit}/GPU-h or less, {change} below the price used")
    where = where.format(limit=number(limit, ".2f"), change=_pct(change))
    return _("<p>{gpus} GPUs of {system} use {hours} GPU-hours; at &#36;{price}/GPU-h they cost &#36;{usd} M: "
             "<b>{where}</b>.</p>").format(gpus=number(report.design.gpus, ","),
                                          system=html_escape(report.design.system), hours=number(hours, ",.0f"),
                                          price=number(price, ".2f"), usd=number(report.cost.usd / 1e6, ".2f"),
                                          where=where)


def budget_shown(report: capstone.Report) -> capstone.Report:
    """``report`` with a failing budget gate's cost written to as many decimals of $M as it takes to exceed the
    target as written: a cost $2,293 over a $3 M budget reads "$3.002 M", not "$3.00 M" against "≤ $3.00 M"."""
    budget = next((g for g in report.gates if g.name == "budget" and not g.passed), None)
    if budget is None:
        return report
    usd, cap = report.cost.usd / 1e6, report.targets.max_usd / 1e6
    digits = next((d for d in range(2, 7) if round(usd, d) > round(cap, 2)), 6)
    shown = replace(budget, measured=_("${usd} M").format(usd=number(usd, f".{digits}f")))
    return replace(report, gates=tuple(shown if g is budget else g for g in report.gates))


def design_view(targets: capstone.Targets, gpus: int, system: str, tp: int, pp: int, checkpoint_s: float,
                restart_min: float, price: float) -> tuple[Figure, str]:
    """Evaluate one design against ``targets``: a bar of seconds per step by part, and the report's HTML.

    ``price`` in $/GPU-hour; 0 means the data file's price for ``system``.
    """
    d = capstone.Design(system=system, gpus=gpus, tp=tp, pp=pp, checkpoint_s=checkpoint_s, restart_s=restart_min * 60,
                        usd_per_gpu_hour=price or None)
    r = budget_shown(capstone.evaluate(d, targets))
    fig, ax = new_figure(7, 2.6)
    left = 0.0
    for (part, sec), colour in zip(r.step.breakdown().items(), STEP_COLOURS, strict=False):
        ax.barh(0, sec, left=left, color=colour, label=_part(part))
        left += sec
    ax.set_yticks([])
    ax.set_xlabel(_("seconds per step"))
    fig.legend(fontsize=7, ncols=5, loc="outside lower center")  # laid out below the axes, never cut off
    # Goodput to two decimals: a minute more of restart moves it by less than the report's rounding.
    head = _("<p>A checkpoint takes {checkpoint} s to write, a restart {restart} min: goodput {goodput} (a job "
             "interruption every {mtbi} h).</p>").format(checkpoint=number(checkpoint_s, "g"),
                                                        restart=number(restart_min, "g"),
                                                        goodput=_pct(r.goodput, ".2%"),
                                                        mtbi=number(r.mtbi_hours, ".1f"))
    failed = ", ".join(_("{gate} ({measured}, target {target})").format(
        gate=gates.gate_name(g.name), measured=g.measured, target=g.target) for g in r.failed)
    first = (mark_html(True, _("every gate passes")) if r.passed
             else mark_html(False, ngettext("{n} gate(s) fail", "{n} gate(s) fail", len(r.failed)).format(
                 n=len(r.failed))) + " " + html_escape(failed))
    return fig, f"<p>{first}</p>" + head + r.html()


def design_dashboard(targets: capstone.Targets) -> Dashboard:
    """Controls for system, size, TP, PP, checkpoint write time, restart time and price, driving :func:`design_view`."""

    def render(gpus, system, tp, pp, checkpoint_s, restart_min, price):
        return design_view(targets, gpus, system, tp, pp, checkpoint_s, restart_min, price)

    return Dashboard(
        {
            "gpus": w.SelectionSlider(options=[2**k for k in range(6, 13)], value=512, description=_("GPUs"),
                                      continuous_update=False),
            "system": w.Dropdown(options=list(SYSTEMS), value="dgx-h100", description=_("system")),
            "tp": w.Dropdown(options=[1, 2, 4, 8, 16, 32], value=8, description="TP"),
            "pp": w.Dropdown(options=[1, 2, 4, 8, 16], value=2, description="PP"),
            "checkpoint_s": w.IntSlider(value=60, min=5, max=1200, step=5, description=_("checkpoint write (s)"),
                                        continuous_update=False),
            "restart_min": w.IntSlider(value=10, min=1, max=120, description=_("restart (min)"),
                                       continuous_update=False),
            "price": w.BoundedFloatText(value=0.0, min=0.0, max=50.0, step=0.1,
                                        description=_("$/GPU-h (0 = course price)")),
        },
        render,
        columns=3,
    )


# ------------------------------------------------------------------------------------------------
# The fabric, serving, isolation and monitoring gates (model: nvcourse.capstone_gates)

#: Routing offered by the fabric dashboard: the NIC kind's default (InfiniBand: adaptive routing, NCCL's default
#: there; Ethernet: ECMP hashing), adaptive routing / packet spraying, or static routes (InfiniBand with adaptive
#: routing off in the switches: the misconfigured or legacy case).
ROUTING_OPTIONS = (("default (IB: adaptive; Ethernet: ECMP)", "default"), ("adaptive / packet spraying", "ideal"),
                   ("static routes (AR off in the switches)", "dmodk"))


def _routing_options() -> list[tuple[str, str]]:
    """:data:`ROUTING_OPTIONS` with their labels in the current language."""
    names = {"default": _("default (IB: adaptive; Ethernet: ECMP)"), "ideal": _("adaptive / packet spraying"),
             "dmodk": _("static routes (AR off in the switches)")}
    return [(names[value], value) for _label, value in ROUTING_OPTIONS]
#: NICs offered by the fabric dashboard (catalog link ids).
FABRIC_NICS = ("ib-ndr", "ib-xdr", "roce-400g", "roce-800g")


def gates_html(gate_list) -> str:
    """A table of :class:`nvcourse.capstone.Gate` rows (the same columns as :meth:`capstone.Report.html`)."""
    rows = [[mark_html(g.passed), html_escape(gates.gate_name(g.name)), html_escape(g.measured),
             html_escape(g.target),
             "" if g.passed else html_escape(g.advice)] for g in gate_list]
    # sentences, as in Report.html: left-aligned (a cell that starts with a figure went right, the column ragged)
    return table_html(["", _("gate"), _("design"), _("target"), _("what to try")], rows, align_numbers=False)


def fabric_options_html(report: capstone.Report, fabrics: dict[str, gates.FabricChoice],
                        min_busbw_fraction: float = 0.8) -> str:
    """One row per named fabric: delivered DP all-reduce busbw at job scale, its share of the reference,
    the step's scaling efficiency with it, and the gates."""
    rows = []
    for name, f in fabrics.items():
        r = gates.fabric_gate(report, f, min_busbw_fraction=min_busbw_fraction)
        rows.append([html_escape(name), html_escape(f.describe()), number(r.busbw_GBps, ".0f"),
                     _pct(r.ratio, percent_spec(r.ratio, min_busbw_fraction)),
                     _pct(r.efficiency, percent_spec(r.efficiency, report.targets.min_efficiency)),
                     mark_html(True, _("all")) if r.passed
                     else mark_html(False, _names(g for g in r.gates if not g.passed))])
    return table_html([_("option"), _("fabric"), _("busbw GB/s"), _("of reference"), _("efficiency"), _("gates")],
                      rows)


def fabric_view(report: capstone.Report, nic: str, layout: str, oversubscription: float, routing: str,
                sharp: bool, placement: str, min_busbw_fraction: float = 0.8) -> tuple[Figure, str]:
    """Run the fabric gate for one choice: bars of delivered vs reference busbw, and the gates' table."""
    f = gates.FabricChoice(nic=nic, layout=layout, oversubscription=oversubscription,
                           routing=None if routing == "default" else routing, sharp=sharp, placement=placement)
    r = gates.fabric_gate(report, f, min_busbw_fraction=min_busbw_fraction)
    fig, ax = new_figure(7, 1.8)
    ax.barh([1, 0], [r.reference_busbw_GBps, r.busbw_GBps], color=["#999999", "#0072B2" if r.passed else "#D55E00"])
    ax.axvline(min_busbw_fraction * r.reference_busbw_GBps, color="#000000", ls=":", lw=1)
    ax.set_yticks([1, 0], [_("reference"), _("this fabric")])
    ax.set_xlabel(_("DP all-reduce bus bandwidth, GB/s (dotted: the gate)"))
    head = "<i>" + _("{fabric}; {nodes} nodes, {size} GB per GPU").format(
        fabric=html_escape(f.describe()), nodes=r.nodes, size=number(r.nbytes / 1e9, ".1f")) + "</i>"
    needs = _("<p>Needs: {needs}.</p>").format(needs=html_escape("; ".join(f.needs))) if f.needs else ""
    return fig, head + gates_html(r.gates) + needs


def fabric_dashboard(report: capstone.Report) -> Dashboard:
    """Controls for NIC, layout, oversubscription, routing, SHARP and placement, driving :func:`fabric_view`."""

    def render(nic, layout, oversubscription, routing, sharp, placement):
        # Ethernet switches cannot reduce: SHARP ticked on a RoCE NIC is shown without it, and said so
        # (the model's one-line error, meant for code, was all the dashboard showed)
        ethernet = catalog.get_link(nic).kind != "infiniband"
        ignored = sharp and ethernet
        # static routes are the subnet manager's: an Ethernet fabric's non-adaptive routing is its ECMP hashing
        static_eth = ethernet and routing == "dmodk"
        fig, text = fabric_view(report, nic, layout, oversubscription, "default" if static_eth else routing,
                                sharp and not ignored, placement)
        if static_eth:
            text = _("<p><b>Static routes are InfiniBand's</b> (its subnet manager's): an Ethernet fabric without "
                     "packet spraying hashes each flow, so this is ECMP.</p>") + text
        if ignored:
            text = _("<p><b>SHARP is InfiniBand only</b>: Ethernet switches do not reduce, so this is the fabric "
                     "without it.</p>") + text
        return fig, text

    nic = w.Dropdown(options=list(FABRIC_NICS), value="ib-ndr", description=_("NIC"))
    sharp = w.Checkbox(value=False, description=_("SHARP (IB only)"))
    return Dashboard(
        {
            "nic": nic,
            "layout": w.Dropdown(options=[(_("rail-optimised"), "rail"), (_("top-of-rack"), "tor")], value="rail",
                                 description=_("layout")),
            "oversubscription": w.Dropdown(options=[("1:1", 1.0), ("2:1", 2.0), ("4:1", 4.0)], value=1.0,
                                           description=_("oversub.")),
            "routing": w.Dropdown(options=_routing_options(), value="default", description=_("routing")),
            "sharp": sharp,
            "placement": w.Dropdown(options=[(_("random nodes"), "random"), (_("packed"), "packed")], value="random",
                                    description=_("placement")),
        },
        render,
        columns=3,
    )


def _rate(tokens_per_s: float) -> str:
    """A token rate as the learner's language writes a count: ``20000`` in English, ``20 000`` in French."""
    return whole(int(tokens_per_s)) if float(tokens_per_s).is_integer() else number(tokens_per_s, "g")


def serving_html(plan: gates.ServingPlan) -> str:
    """Every TP candidate (token latency, TTFT, fits in memory) with the chosen one marked, then the serving gates."""
    # a word, not an emoji: 👉 is in no font a plain Debian/Chromium machine has (it showed as an empty box)
    rows = [[_("chosen") if tp == plan.tp else "", tp, number(tok, ".1f"), number(tt, ".0f"),
             _("yes") if fits else _("no")] for tp, tok, tt, fits in plan.candidates]
    t = plan.targets
    head = (_("<b>{model} on {system}</b>, batch {batch}: ").format(model=html_escape(t.model),
                                                                     system=html_escape(plan.system), batch=plan.batch)
            + (_("TP {tp} × {replicas} replicas = <b>{gpus} GPUs</b> for {rate} tokens/s").format(
                tp=plan.tp, replicas=plan.replicas, gpus=plan.gpus, rate=_rate(t.tokens_per_s))
               if plan.tp is not None else _("no TP meets the targets")))
    return (head + table_html(["", "TP", _("ms per token"), _("TTFT ms"), _("fits in memory")], rows)
            + gates_html(plan.gates))


def fabric_compare_html(jobs: dict[str, capstone.Report], fabrics: dict[str, gates.FabricChoice],
                        min_busbw_fraction: float = 0.8) -> str:
    """One row per fabric, two columns per job: the share of the reference bus bandwidth its DP all-reduce gets
    and the gates. The full tables (fabric in words, busbw in GB/s, efficiency) behind a toggle."""
    results = {job: {name: gates.fabric_gate(rep, f, min_busbw_fraction=min_busbw_fraction)
                     for name, f in fabrics.items()} for job, rep in jobs.items()}
    header = [_("fabric")] + [h for job in jobs for h in (_("{job}: share").format(job=job),
                                                            _("{job}: gates").format(job=job))]
    rows = [[html_escape(name)] + [c for job in jobs for c in (
        _pct(results[job][name].ratio, percent_spec(results[job][name].ratio, min_busbw_fraction)),
        _gates_mark(results[job][name].passed, [g.name for g in results[job][name].gates if not g.passed],
                    _("all")))]
        for name in fabrics]
    full = "".join(f"<p><b>{html_escape(job)}</b></p>" + fabric_options_html(rep, fabrics, min_busbw_fraction)
                   for job, rep in jobs.items())
    return (table_html(header, rows)
            + _("<p>Share: the bus bandwidth the job's DP all-reduce gets, as a share of the same NICs on a "
                "non-blocking fabric with adaptive routing (the gate asks for {share}).</p>").format(
                share=_pct(min_busbw_fraction))
            + needs_html(fabrics)
            + details_html(_("The full tables: each fabric in words, bus bandwidth in GB/s, the step's efficiency"),
                           full))


def needs_html(fabrics: dict[str, gates.FabricChoice]) -> str:
    """What the named fabrics need configured for their rows to hold (:attr:`FabricChoice.needs`): one line per
    need, naming the rows that assume it; empty when none needs anything."""
    rows: dict[str, list[str]] = {}
    for name, f in fabrics.items():
        for need in f.needs:
            rows.setdefault(need, []).append(f"<b>{html_escape(name)}</b>")
    items = ["<li>" + ngettext("{rows} needs: {need}", "{rows} need: {need}", len(names)).format(
        rows=", ".join(names), need=html_escape(need)) + "</li>" for need, names in rows.items()]
    return _("<p>What the rows assume is configured:</p>") + f"<ul>{''.join(items)}</ul>" if items else ""


def serving_summary_html(plans: list[gates.ServingPlan]) -> str:
    """One row per system: the chosen TP, replicas and GPUs, its token latency and TTFT, and the gates; every TP
    candidate behind a toggle (:func:`serving_html`)."""
    rows = [[html_escape(p.system), p.tp if p.tp is not None else _("none"), p.replicas, p.gpus,
             number(p.token_ms, ".1f"), number(p.ttft_ms, ".0f"),
             _gates_mark(p.passed, [g.name for g in p.gates if not g.passed], _("all"))] for p in plans]
    short = table_html([_("system"), "TP", _("replicas"), _("GPUs"), _("ms per token"), _("TTFT ms"), _("gates")],
                       rows)
    return short + details_html(_("Every TP candidate per system, and the serving gates"),
                            "".join(serving_html(p) for p in plans))


def _counter_faults(monitoring: gates.MonitoringResult) -> str:
    return ", ".join(name.rsplit(" (", 1)[0] for name in monitoring.counters)


def monitoring_html(monitoring: gates.MonitoringResult) -> str:
    """The job's alert levels in a short table (from its network-bound share c), and the counter to watch per
    fault class behind a toggle."""
    counters_list = "<ul>" + "".join(f"<li>{html_escape(n)}</li>" for n in monitoring.counters) + "</ul>"
    more = details_html(_("The counter to watch first for each of the {n} fault classes that apply to this fabric "
                      "(chapter 08b lists {total}; the rest belong to the other fabric kind)").format(
        n=len(monitoring.counters), total=len(counters.signals())), counters_list)
    if monitoring.thresholds is None:
        return _("<p>No inter-node traffic: watch GPU health only (Xids, ECC, throttling).</p>") + more
    f = monitoring.threshold_fields()
    key = table_html([_("alert on"), _("warn"), _("critical")], [
        [_("busbw / baseline"), f"&lt; {f['warn']}", f"&lt; {f['critical']}"],
        [_("step time / baseline"), f"&gt; {f['step_warn']}", f"&gt; {f['step_critical']}"],
    ])
    return (_("<p>Network-bound share of the step c = <b>{c}</b>: a link may lose f* = s/(c+s) = <b>{loss}</b> of "
              "its bandwidth before the step slows by s.</p>").format(c=f["c"], loss=f["loss"])
            + key + more)


def monitoring_entry(monitoring: gates.MonitoringResult) -> str:
    """The decision log's monitoring row in one readable sentence (plain text; the fault classes by name)."""
    if monitoring.thresholds is None:
        return _("no inter-node traffic: GPU health (Xids, ECC, throttling) only")
    return _("c = {c}, f* = {loss}; alert when busbw/baseline < {warn} (warn) or < {critical} (critical), "
             "step/baseline > {step_warn} or > {step_critical}; one counter per fault class ({faults}; chapter "
             "08b's table)").format(**monitoring.threshold_fields(), faults=_counter_faults(monitoring))


def decision_log_rows(*, fabric: gates.FabricResult, serving: gates.ServingPlan,
                      isolation_result: gates.IsolationResult, monitoring: gates.MonitoringResult) -> str:
    """The decision log's rows for section 8 (:func:`nvcourse.capstone_gates.decision_log_entries`), its
    monitoring row written as :func:`monitoring_entry`."""
    table = gates.decision_log_entries(fabric=fabric, serving=serving, isolation_result=isolation_result)
    name = _("Monitoring")  # outside the f-string, where the extractor sees it
    return table + f"\n| **{name}** | {gates.escape_md(monitoring_entry(monitoring))} |"


__all__ += ["budget_shown", "gates_html", "fabric_options_html", "fabric_view", "fabric_dashboard", "serving_html",
            "fabric_compare_html", "needs_html", "serving_summary_html", "monitoring_html", "monitoring_entry",
            "decision_log_rows"]


def fabric_choices() -> dict[str, gates.FabricChoice]:
    """§6's fabrics to compare, keyed by their label in the learner's language: InfiniBand NDR with adaptive routing
    (the default), with it off, with SHARP, 2:1 oversubscribed, top-of-rack; RoCE 400G with ECMP and with packet
    spraying."""
    return {
        _("IB, adaptive routing (the default)"): gates.FabricChoice(nic="ib-ndr"),
        _("IB, AR off in the switches (static routes)"): gates.FabricChoice(nic="ib-ndr", routing="dmodk"),
        _("IB, adaptive routing + SHARP"): gates.FabricChoice(nic="ib-ndr", sharp=True),
        _("IB, adaptive routing, 2:1 oversubscribed"): gates.FabricChoice(nic="ib-ndr", oversubscription=2.0),
        _("IB, adaptive routing, top-of-rack"): gates.FabricChoice(nic="ib-ndr", layout="tor"),
        _("RoCE, ECMP (1 flow per rail and ring edge)"): gates.FabricChoice(nic="roce-400g"),
        _("RoCE, packet spraying"): gates.FabricChoice(nic="roce-400g", routing="ideal"),
    }


def compared_jobs(mine: capstone.Report, other: capstone.Report) -> dict[str, capstone.Report]:
    """The learner's design and another one, keyed by their column label (GPUs, PP) in the learner's language."""
    return {_("your {gpus} GPUs, PP {pp}").format(gpus=mine.design.gpus, pp=mine.design.pp): mine,
            _("{gpus} GPUs, PP {pp}").format(gpus=number(other.design.gpus, ","), pp=other.design.pp): other}

"""Chapter 09 (capstone: design a cluster): the comparison table and the design dashboard.

The model is :mod:`nvcourse.capstone` (targets, designs, gates, decision log) on top of
:mod:`nvcourse.training` and :mod:`nvcourse.reliability`. Times in seconds, money in US dollars.
"""

from __future__ import annotations

import ipywidgets as w
from matplotlib.figure import Figure

from .. import capstone, catalog, training
from .. import capstone_gates as gates
from ..markup import html_escape, mark_html
from ..plots import new_figure
from ..tables import table_html
from ..widgets import Dashboard

__all__ = ["comparison_table_html", "comparison_summary_html", "design_view", "design_dashboard", "price_headroom_html",
           "price_basis", "prices_html"]

#: Systems offered by the design dashboard.
SYSTEMS = ("pcie-8gpu", "dgx-h100", "hgx-h200", "dgx-b200", "gb200-nvl72")
#: One colour per part of a step (the order of :meth:`nvcourse.training.StepTime.breakdown`).
STEP_COLOURS = ("#999999", "#dddddd", "#009E73", "#E69F00", "#0072B2")


def comparison_table_html(reports: list[capstone.Report]) -> str:
    """One row per evaluated design: size, parallelism, days, $M, efficiency, goodput, MW and the gates.

    Text is escaped (no TeX from "$M"); the gates are marked in colour and words, not emoji (which need an
    emoji font).
    """
    rows = [[r.design.system, r.design.gpus, f"{r.design.tp}×{r.design.pp}×{r.step.dp}",
             f"{r.cost.hours / 24:.1f}", f"{r.cost.usd / 1e6:.2f}", f"{r.step.efficiency:.0%}", f"{r.goodput:.1%}",
             f"{r.MW:.2f}",
             mark_html(True, "all pass") if r.passed else mark_html(False, ", ".join(g.name for g in r.failed))]
            for r in reports]
    return table_html(["system", "GPUs", "TP×PP×DP", "days", "$M", "efficiency", "goodput", "MW", "gates"], rows,
                      escape=True, html_cols=[8])


def _details(summary: str, body: str) -> str:
    """``body`` (HTML) behind a collapsed toggle: the full detail a readout keeps without showing it first."""
    return f"<details><summary>{html_escape(summary)}</summary>{body}</details>"


def _gates_mark(passed: bool, failed_names: list[str], word: str = "all pass") -> str:
    return mark_html(True, word) if passed else mark_html(False, ", ".join(failed_names))


def _survey_row(r: capstone.Report, alt: capstone.Report | None, date: str | None) -> list:
    gates_cell = _gates_mark(r.passed, [g.name for g in r.failed])
    row = [html_escape(r.design.system), r.design.gpus, f"{r.cost.hours / 24:.1f}", f"{r.cost.usd / 1e6:.2f}"]
    if date is None:
        return [*row, gates_cell]
    if alt is not None and [g.name for g in alt.failed] != [g.name for g in r.failed]:
        gates_cell += f" · at {date} prices: " + _gates_mark(alt.passed, [g.name for g in alt.failed])
    return [*row, "—" if alt is None else f"{alt.cost.usd / 1e6:.2f}", gates_cell]


def _passing(reports) -> str:
    return "; ".join(f"{r.design.gpus:,} GPUs of {r.design.system}" for r in reports if r.passed)


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
    head = ["system", "GPUs", "days", "$M"] + ([f"$M at {date} prices"] if date else []) + ["gates"]
    if date:
        head[3] = "$M at the data file's prices"
    short = table_html(head, rows)
    ok = [r for r in reports if r.passed]
    verdict = (f"{len(ok)} of {len(reports)} designs pass every gate" + (" at the data file's prices" if date else "")
               + (f": {_passing(reports)}." if ok else "."))
    if date:
        alt_ok = _passing([a for a in alts if a is not None])
        verdict += (f" At {date} prices the same designs pass." if alt_ok == _passing(reports)
                    else f" At {date} prices: {alt_ok or 'none'}.")
        systems = list(dict.fromkeys(r.design.system for r in reports))
        cost = {s: training.system_costs(s) for s in systems}
        older = ", ".join(f"{s} as of {cost[s]['usd_date']} ({cost[s]['usd_label']})" for s in systems
                          if cost[s]["usd_date"] != date)
        same = "; ".join(f"{s} {capstone.price_on(s, date)[1]}" for s in systems)
        verdict += (f" The data file prices {older} and the others as of {date}; the {date} column prices every "
                    f"system in that one month, like for like ({same}).")
    return (short + f"<p>{html_escape(verdict)} The failing rows name the gates that fail: that is what to change."
            "</p>" + _details("The full table: layout (TP×PP×DP), efficiency, goodput and power per design",
                              comparison_table_html(reports)))


def prices_html(systems: list[str]) -> str:
    """Each system's price per GPU-hour and power per GPU from ``data/costs.toml``, with label and date, and its
    price in the month every listed system has one (:func:`nvcourse.capstone.common_price_date`)."""
    date = capstone.common_price_date(systems)
    rows = []
    for s in systems:
        c = training.system_costs(s)
        same = capstone.price_on(s, date) if date else None
        rows.append([html_escape(s), f"&#36;{c['usd_per_gpu_hour']:.2f}", f"{c['usd_label']}, {c['usd_date']}",
                     "—" if same is None else f"&#36;{same[0]:.2f} ({same[1]})",
                     f"{c['kW_per_gpu']:g} ({c['kW_label']})"])
    return table_html(["system", "price used, per GPU-h", "label, date", f"price of {date or '—'}",
                       "kW per GPU"], rows)


def price_headroom_html(report: capstone.Report) -> str:
    """How far the GPU-hour price may rise before ``report``'s design fails its budget (cost = GPU-hours × price,
    :func:`nvcourse.training.run_cost`); $ per GPU-hour."""
    hours = report.cost.gpu_hours
    price = report.cost.usd / hours
    limit = report.targets.max_usd / hours
    change = limit / price - 1
    where = (f"the budget holds up to &#36;{limit:.2f}/GPU-h, {change:.0%} above the price used"
             if change >= 0 else f"the budget needs &#36;{limit:.2f}/GPU-h or less, {-change:.0%} below the price used")
    return (f"<p>{report.design.gpus:,} GPUs of {html_escape(report.design.system)} use {hours:,.0f} GPU-hours; at "
            f"&#36;{price:.2f}/GPU-h they cost &#36;{report.cost.usd / 1e6:.2f} M: <b>{where}</b>.</p>")


def design_view(targets: capstone.Targets, gpus: int, system: str, tp: int, pp: int, checkpoint_s: float,
                restart_min: float, price: float) -> tuple[Figure, str]:
    """Evaluate one design against ``targets``: a bar of seconds per step by part, and the report's HTML.

    ``price`` in $/GPU-hour; 0 means the data file's price for ``system``.
    """
    d = capstone.Design(system=system, gpus=gpus, tp=tp, pp=pp, checkpoint_s=checkpoint_s, restart_s=restart_min * 60,
                        usd_per_gpu_hour=price or None)
    r = capstone.evaluate(d, targets)
    fig, ax = new_figure(7, 2.6)
    left = 0.0
    for (part, sec), colour in zip(r.step.breakdown().items(), STEP_COLOURS, strict=False):
        ax.barh(0, sec, left=left, color=colour, label=part)
        left += sec
    ax.set_yticks([])
    ax.set_xlabel("seconds per step")
    fig.legend(fontsize=7, ncols=5, loc="outside lower center")  # laid out below the axes, never cut off
    # Goodput to two decimals: a minute more of restart moves it by less than the report's rounding.
    head = (f"<p>A checkpoint takes {checkpoint_s:g} s to write, a restart {restart_min:g} min: "
            f"goodput {r.goodput:.2%} (a job interruption every {r.mtbi_hours:.1f} h).</p>")
    failed = ", ".join(f"{g.name} ({g.measured}, target {g.target})" for g in r.failed)
    first = (mark_html(True, "every gate passes") if r.passed
             else mark_html(False, f"{len(r.failed)} gate(s) fail") + " " + html_escape(failed))
    return fig, f"<p>{first}</p>" + head + r.html()


def design_dashboard(targets: capstone.Targets) -> Dashboard:
    """Controls for system, size, TP, PP, checkpoint write time, restart time and price, driving :func:`design_view`."""

    def render(gpus, system, tp, pp, checkpoint_s, restart_min, price):
        return design_view(targets, gpus, system, tp, pp, checkpoint_s, restart_min, price)

    return Dashboard(
        {
            "gpus": w.SelectionSlider(options=[2**k for k in range(6, 13)], value=512, description="GPUs",
                                      continuous_update=False),
            "system": w.Dropdown(options=list(SYSTEMS), value="dgx-h100", description="system"),
            "tp": w.Dropdown(options=[1, 2, 4, 8, 16, 32], value=8, description="TP"),
            "pp": w.Dropdown(options=[1, 2, 4, 8, 16], value=2, description="PP"),
            "checkpoint_s": w.IntSlider(value=60, min=5, max=1200, step=5, description="checkpoint write (s)",
                                        continuous_update=False),
            "restart_min": w.IntSlider(value=10, min=1, max=120, description="restart (min)", continuous_update=False),
            "price": w.BoundedFloatText(value=0.0, min=0.0, max=50.0, step=0.1, description="$/GPU-h (0 = data file)"),
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
#: NICs offered by the fabric dashboard (catalog link ids).
FABRIC_NICS = ("ib-ndr", "ib-xdr", "roce-400g", "roce-800g")


def gates_html(gate_list) -> str:
    """A table of :class:`nvcourse.capstone.Gate` rows (the same columns as :meth:`capstone.Report.html`)."""
    rows = [[mark_html(g.passed), html_escape(g.name), html_escape(g.measured), html_escape(g.target),
             "" if g.passed else html_escape(g.advice)] for g in gate_list]
    # sentences, as in Report.html: left-aligned (a cell that starts with a figure went right, the column ragged)
    return table_html(["", "gate", "design", "target", "what to try"], rows, align_numbers=False)


def fabric_options_html(report: capstone.Report, fabrics: dict[str, gates.FabricChoice],
                        min_busbw_fraction: float = 0.8) -> str:
    """One row per named fabric: delivered DP all-reduce busbw at job scale, its share of the reference,
    the step's scaling efficiency with it, and the gates."""
    rows = []
    for name, f in fabrics.items():
        r = gates.fabric_gate(report, f, min_busbw_fraction=min_busbw_fraction)
        rows.append([html_escape(name), html_escape(f.describe()), f"{r.busbw_GBps:.0f}", f"{r.ratio:.0%}",
                     f"{r.efficiency:.0%}",
                     mark_html(True, "all") if r.passed
                     else mark_html(False, ", ".join(g.name for g in r.gates if not g.passed))])
    return table_html(["option", "fabric", "busbw GB/s", "of reference", "efficiency", "gates"], rows)


def fabric_view(report: capstone.Report, nic: str, layout: str, oversubscription: float, routing: str,
                sharp: bool, placement: str, min_busbw_fraction: float = 0.8) -> tuple[Figure, str]:
    """Run the fabric gate for one choice: bars of delivered vs reference busbw, and the gates' table."""
    f = gates.FabricChoice(nic=nic, layout=layout, oversubscription=oversubscription,
                           routing=None if routing == "default" else routing, sharp=sharp, placement=placement)
    r = gates.fabric_gate(report, f, min_busbw_fraction=min_busbw_fraction)
    fig, ax = new_figure(7, 1.8)
    ax.barh([1, 0], [r.reference_busbw_GBps, r.busbw_GBps], color=["#999999", "#0072B2" if r.passed else "#D55E00"])
    ax.axvline(min_busbw_fraction * r.reference_busbw_GBps, color="#000000", ls=":", lw=1)
    ax.set_yticks([1, 0], ["reference", "this fabric"])
    ax.set_xlabel("DP all-reduce bus bandwidth, GB/s (dotted: the gate)")
    head = f"<i>{html_escape(f.describe())}; {r.nodes} nodes, {r.nbytes / 1e9:.1f} GB per GPU</i>"
    needs = f"<p>Needs: {html_escape('; '.join(f.needs))}.</p>" if f.needs else ""
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
            text = ("<p><b>Static routes are InfiniBand's</b> (its subnet manager's): an Ethernet fabric without "
                    "packet spraying hashes each flow, so this is ECMP.</p>" + text)
        if ignored:
            text = ("<p><b>SHARP is InfiniBand only</b>: Ethernet switches do not reduce, so this is the fabric "
                    "without it.</p>" + text)
        return fig, text

    nic = w.Dropdown(options=list(FABRIC_NICS), value="ib-ndr", description="NIC")
    sharp = w.Checkbox(value=False, description="SHARP (IB only)")
    return Dashboard(
        {
            "nic": nic,
            "layout": w.Dropdown(options=[("rail-optimised", "rail"), ("top-of-rack", "tor")], value="rail",
                                 description="layout"),
            "oversubscription": w.Dropdown(options=[("1:1", 1.0), ("2:1", 2.0), ("4:1", 4.0)], value=1.0,
                                           description="oversub."),
            "routing": w.Dropdown(options=list(ROUTING_OPTIONS), value="default", description="routing"),
            "sharp": sharp,
            "placement": w.Dropdown(options=[("random nodes", "random"), ("packed", "packed")], value="random",
                                    description="placement"),
        },
        render,
        columns=3,
    )


def serving_html(plan: gates.ServingPlan) -> str:
    """Every TP candidate (token latency, TTFT, fits) with the chosen one marked, then the serving gates."""
    # a word, not an emoji: 👉 is in no font a plain Debian/Chromium machine has (it showed as an empty box)
    rows = [["chosen" if tp == plan.tp else "", tp, f"{tok:.1f}", f"{tt:.0f}", "yes" if fits else "no"]
            for tp, tok, tt, fits in plan.candidates]
    t = plan.targets
    head = (f"<b>{html_escape(t.model)} on {html_escape(plan.system)}</b>, batch {plan.batch}: "
            + (f"TP {plan.tp} × {plan.replicas} replicas = <b>{plan.gpus} GPUs</b> for {t.tokens_per_s:g} tokens/s"
               if plan.tp is not None else "no TP meets the targets"))
    return head + table_html(["", "TP", "ms per token", "TTFT ms", "fits"], rows) + gates_html(plan.gates)


def fabric_compare_html(jobs: dict[str, capstone.Report], fabrics: dict[str, gates.FabricChoice],
                        min_busbw_fraction: float = 0.8) -> str:
    """One row per fabric, two columns per job: the share of the reference bus bandwidth its DP all-reduce gets
    and the gates. The full tables (fabric in words, busbw in GB/s, efficiency) behind a toggle."""
    results = {job: {name: gates.fabric_gate(rep, f, min_busbw_fraction=min_busbw_fraction)
                     for name, f in fabrics.items()} for job, rep in jobs.items()}
    header = ["fabric"] + [h for job in jobs for h in (f"{job}: share", f"{job}: gates")]
    rows = [[html_escape(name)] + [c for job in jobs for c in (
        f"{results[job][name].ratio:.0%}",
        _gates_mark(results[job][name].passed, [g.name for g in results[job][name].gates if not g.passed], "all"))]
        for name in fabrics]
    full = "".join(f"<p><b>{html_escape(job)}</b></p>" + fabric_options_html(rep, fabrics, min_busbw_fraction)
                   for job, rep in jobs.items())
    return (table_html(header, rows)
            + f"<p>Share: the bus bandwidth the job's DP all-reduce gets, as a share of the same NICs on a "
              f"non-blocking fabric with adaptive routing (the gate asks for {min_busbw_fraction:.0%}).</p>"
            + needs_html(fabrics)
            + _details("The full tables: each fabric in words, bus bandwidth in GB/s, the step's efficiency", full))


def needs_html(fabrics: dict[str, gates.FabricChoice]) -> str:
    """What the named fabrics need configured for their rows to hold (:attr:`FabricChoice.needs`): one line per
    need, naming the rows that assume it; empty when none needs anything."""
    rows: dict[str, list[str]] = {}
    for name, f in fabrics.items():
        for need in f.needs:
            rows.setdefault(need, []).append(f"<b>{html_escape(name)}</b>")
    items = [f"<li>{', '.join(names)} need{'s' if len(names) == 1 else ''}: {html_escape(need)}</li>"
             for need, names in rows.items()]
    return f"<p>What the rows assume is configured:</p><ul>{''.join(items)}</ul>" if items else ""


def serving_summary_html(plans: list[gates.ServingPlan]) -> str:
    """One row per system: the chosen TP, replicas and GPUs, its token latency and TTFT, and the gates; every TP
    candidate behind a toggle (:func:`serving_html`)."""
    rows = [[html_escape(p.system), p.tp if p.tp is not None else "none", p.replicas, p.gpus,
             f"{p.token_ms:.1f}", f"{p.ttft_ms:.0f}",
             _gates_mark(p.passed, [g.name for g in p.gates if not g.passed], "all")] for p in plans]
    short = table_html(["system", "TP", "replicas", "GPUs", "ms per token", "TTFT ms", "gates"], rows)
    return short + _details("Every TP candidate per system, and the serving gates",
                            "".join(serving_html(p) for p in plans))


def _counter_faults(monitoring: gates.MonitoringResult) -> str:
    return ", ".join(name.rsplit(" (", 1)[0] for name in monitoring.counters)


def monitoring_html(monitoring: gates.MonitoringResult) -> str:
    """The job's alert levels in a short table (from its network-bound share c), and the counter to watch per
    fault class behind a toggle."""
    counters_list = "<ul>" + "".join(f"<li>{html_escape(n)}</li>" for n in monitoring.counters) + "</ul>"
    more = _details(f"The counter to watch first for each of {len(monitoring.counters)} fault classes (chapter 08b)",
                    counters_list)
    th = monitoring.thresholds
    if th is None:
        return "<p>No inter-node traffic: watch GPU health only (Xids, ECC, throttling).</p>" + more
    key = table_html(["alert on", "warn", "critical"], [
        ["busbw / baseline", f"&lt; {th.busbw_ratio_warn:.3f}", f"&lt; {th.busbw_ratio_critical:.3f}"],
        ["step time / baseline", f"&gt; {th.step_ratio_warn:.3f}", f"&gt; {th.step_ratio_critical:.3f}"],
    ])
    return (f"<p>Network-bound share of the step c = <b>{monitoring.bandwidth_fraction:.2f}</b>: a link may lose "
            f"f* = s/(c+s) = <b>{th.tolerable_loss:.1%}</b> of its bandwidth before the step slows by s.</p>"
            + key + more)


def monitoring_entry(monitoring: gates.MonitoringResult) -> str:
    """The decision log's monitoring row in one readable sentence (plain text; the fault classes by name)."""
    th = monitoring.thresholds
    if th is None:
        return "no inter-node traffic: GPU health (Xids, ECC, throttling) only"
    return (f"c = {monitoring.bandwidth_fraction:.2f}, f* = {th.tolerable_loss:.1%}; alert when busbw/baseline < "
            f"{th.busbw_ratio_warn:.3f} (warn) or < {th.busbw_ratio_critical:.3f} (critical), step/baseline > "
            f"{th.step_ratio_warn:.3f} or > {th.step_ratio_critical:.3f}; one counter per fault class "
            f"({_counter_faults(monitoring)}; chapter 08b's table)")


def decision_log_rows(*, fabric: gates.FabricResult, serving: gates.ServingPlan,
                      isolation_result: gates.IsolationResult, monitoring: gates.MonitoringResult) -> str:
    """The decision log's rows for section 8 (:func:`nvcourse.capstone_gates.decision_log_entries`), its
    monitoring row written as :func:`monitoring_entry`."""
    table = gates.decision_log_entries(fabric=fabric, serving=serving, isolation_result=isolation_result)
    return table + f"\n| **Monitoring** | {gates.escape_md(monitoring_entry(monitoring))} |"


__all__ += ["gates_html", "fabric_options_html", "fabric_view", "fabric_dashboard", "serving_html",
            "fabric_compare_html", "needs_html", "serving_summary_html", "monitoring_html", "monitoring_entry",
            "decision_log_rows"]

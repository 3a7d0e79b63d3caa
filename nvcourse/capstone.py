"""Capstone: check a cluster design against targets set in advance (evidence gates) and log the decision.

The learner writes :class:`Targets` first (what the run must achieve), then a :class:`Design` (a fabric,
a size, a parallel layout, a checkpoint plan). :func:`evaluate` runs the course's models —
:func:`nvcourse.training.step_time`, :func:`nvcourse.training.run_cost`, :mod:`nvcourse.reliability` —
and returns one :class:`Gate` per target: passed or not, the measured value, and what to try when it
fails. A gate is evidence from a model, not a measurement: the decision log records both.

>>> t = Targets(model="llama3-8b", training_tokens=1e12, max_days=30, max_usd=2e6)
>>> d = Design(system="dgx-h100", gpus=256, tp=1, pp=1)
>>> r = evaluate(d, t)
>>> [g.name for g in r.gates][:3]
['memory', 'placement', 'time']
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from . import catalog, reliability, training
from ._validate import number
from .i18n import english, language, ngettext
from .i18n import number as _num
from .i18n import translate as _
from .markup import mark_html, md_escape, md_table
from .tables import table_html
from .units import percent_spec

__all__ = [
    "Targets",
    "Design",
    "Gate",
    "Report",
    "evaluate",
    "compare_systems",
    "price_on",
    "common_price_date",
    "at_price_date",
    "decision_log_template",
    "decision_log",
    "decision_log_fields",
    "gate_name",
    "verdict_word",
]


@dataclass(frozen=True)
class Targets:
    """What the run must achieve, fixed *before* choosing hardware.

    Args:
        model: a reference model id of ``nvcourse.training.models()`` (or a ModelSpec).
        training_tokens: tokens to train on.
        max_days: wall-clock limit for the whole run, failures and checkpoints included.
        max_usd: budget for GPU time (rental price × GPU-hours).
        min_goodput: share of wall time that must be kept training (reliability target).
        min_efficiency: scaling efficiency the design must reach (1 = GPUs never wait).
        max_MW: power limit of the site (IT load × PUE), megawatts; None = no limit.
    """

    model: object
    training_tokens: float
    max_days: float
    max_usd: float
    min_goodput: float = 0.9
    min_efficiency: float = 0.6
    max_MW: float | None = None

    def __post_init__(self) -> None:
        training.get_model(self.model)
        number("training_tokens", self.training_tokens, positive=True)
        number("max_days", self.max_days, positive=True)
        number("max_usd", self.max_usd, positive=True)
        for name in ("min_goodput", "min_efficiency"):
            v = number(name, getattr(self, name))
            if v > 1:
                raise ValueError(f"{name} must be a fraction in [0, 1]; got {v!r}")
        if self.max_MW is not None:
            number("max_MW", self.max_MW, positive=True)


@dataclass(frozen=True)
class Design:
    """A candidate cluster and how the job uses it.

    ``checkpoint_s`` / ``restart_s``: time to write a checkpoint and to restart after a failure.
    ``failure_rate_factor``: per-GPU failure rate relative to the Llama 3 record (1 = the same).
    ``usd_per_gpu_hour`` / ``kW_per_gpu``: None = the labelled defaults of ``data/costs.toml``.
    """

    system: str
    gpus: int
    tp: int = 1
    pp: int = 1
    placement: str = "tp-first"
    zero_stage: int = 1
    recompute: str = "selective"
    virtual_stages: int = 1
    checkpoint_s: float = 60.0
    restart_s: float = 600.0
    failure_rate_factor: float = 1.0
    usd_per_gpu_hour: float | None = None
    kW_per_gpu: float | None = None


@dataclass(frozen=True)
class Gate:
    name: str
    passed: bool
    measured: str
    target: str
    advice: str = ""


@dataclass(frozen=True)
class Report:
    design: Design
    targets: Targets
    step: training.StepTime
    goodput: float
    checkpoint_interval_s: float
    mtbi_hours: float
    cost: training.RunCost
    MW: float
    gates: tuple[Gate, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)

    @property
    def failed(self) -> list[Gate]:
        return [g for g in self.gates if not g.passed]

    def text(self) -> str:
        # the _() calls stay outside the f-string, where the extractor sees them
        marks, target = {True: _("PASS"), False: _("FAIL")}, _("target")
        width = max(len(m) for m in marks.values())
        names = {g.name: gate_name(g.name) for g in self.gates}
        name_width = max([10, *map(len, names.values())])
        lines = [
            f"{marks[g.passed]:<{width}}  {names[g.name]:<{name_width}} {g.measured:<28} {target} {g.target}"
            + ("" if g.passed else f"  -> {g.advice}")
            for g in self.gates
        ]
        n = len(self.failed)
        verdict = (
            _("all gates pass")
            if self.passed
            # English keeps its one form for both counts; French has a singular and a plural
            else ngettext("{n} gate(s) fail: ", "{n} gate(s) fail: ", n).format(n=n)
            + ", ".join(names[g.name] for g in self.failed)
        )
        return "\n".join(lines + [verdict])

    def html(self) -> str:
        """The gates as an HTML table: marks in colour and words (no emoji), text escaped, no TeX."""
        rows = [
            (mark_html(g.passed, verdict_word(g.passed)), gate_name(g.name), g.measured, g.target,
             "" if g.passed else g.advice) for g in self.gates
        ]
        return table_html(["", _("gate"), _("design"), _("target"), _("what to try")], rows, escape=True,
                          html_cols=[0], align_numbers=False)


def gate_name(name: str) -> str:
    """A gate's name (``Gate.name``, English: the stable key of ``as_dict``) in the current language."""
    shown = {"memory": _("memory"), "placement": _("placement"), "time": _("time"), "budget": _("budget"),
             "efficiency": _("efficiency"), "goodput": _("goodput"), "power": _("power")}
    return shown.get(name, name)


def verdict_word(passed: bool) -> str:
    """``pass`` or ``FAIL``, in the current language (the word beside a gate's mark)."""
    return _("pass") if passed else _("FAIL")


def evaluate(design: Design, targets: Targets) -> Report:
    """Run the course's models on ``design`` and check every target; ValueError for an impossible layout."""
    rate_factor = number("failure_rate_factor", design.failure_rate_factor, positive=True)
    step = training.step_time(
        targets.model,
        design.system,
        design.gpus,
        tp=design.tp,
        pp=design.pp,
        placement=design.placement,
        zero_stage=design.zero_stage,
        recompute=design.recompute,
        virtual_stages=design.virtual_stages,
    )
    lam = reliability.failure_rate_per_gpu_hour() * rate_factor
    mtbi_h = reliability.cluster_mtbf_hours(design.gpus, rate_per_gpu_hour=lam)
    tau, good = reliability.best_goodput(
        checkpoint_s=design.checkpoint_s, restart_s=design.restart_s, mtbf_s=mtbi_h * 3600
    )
    cost = training.run_cost(
        step,
        targets.training_tokens,
        usd_per_gpu_hour=design.usd_per_gpu_hour,
        kW_per_gpu=design.kW_per_gpu,
        goodput=good,
    )
    c = training.system_costs(design.system)
    kw = c["kW_per_gpu"] if design.kW_per_gpu is None else design.kW_per_gpu
    # Power is drawn by whole NVLink domains (a GB200 NVL72 rack is bought, cooled and powered whole even when the
    # job uses 512 of 8 x 72 GPUs); scale-out switches are outside the per-GPU kW of data/costs.toml.
    domain = catalog.get_system(design.system).gpus_per_domain
    powered = math.ceil(design.gpus / domain) * domain
    MW = powered * kw * training.electricity()["pue"] / 1000
    node = training.node_size(design.system)
    gates = _gates(design, targets, step, cost, good, tau, mtbi_h, MW, powered, domain, node)
    return Report(design, targets, step, good, tau, mtbi_h, cost, MW, tuple(gates))


def percent(fraction: float, spec: str = ".0%") -> str:
    """``0.9`` as ``90%`` (English, as Python writes it) or ``90 %`` (French)."""
    if language() != "fr":
        return format(fraction, spec)
    return _num(100 * fraction, spec.replace("%", "f")) + "\u00a0%"


def _gates(design: Design, targets: Targets, step, cost, good: float, tau: float, mtbi_h: float, MW: float,
           powered: int, domain: int, node: int) -> list[Gate]:
    """One :class:`Gate` per target of :func:`evaluate` (its figures: seconds, dollars, hours, MW)."""
    days = cost.hours / 24
    gates = [
        Gate(
            "memory",
            step.fits,
            _("{mem} GB per GPU").format(mem=_num(step.memory.total / 1e9, ".0f")),
            _("≤ {share} of {capacity} GB").format(share=percent(training.HEADROOM),
                                                   capacity=_num(step.memory_capacity_GB, ".0f")),
            _("raise tp or pp, use ZeRO (zero_stage 2-3), or full recomputation"),
        ),
        Gate(
            "placement",
            design.tp <= node and not step.placements["tp"].crosses_nodes,
            ngettext("TP {tp} on {nodes} node(s)", "TP {tp} on {nodes} node(s)", step.placements["tp"].nodes).format(
                tp=design.tp, nodes=step.placements["tp"].nodes),
            _("TP inside one NVLink domain / node ({node} GPUs)").format(node=node),
            _("keep tp ≤ the node size and use placement='tp-first'"),
        ),
        Gate(
            "time",
            days <= targets.max_days,
            _("{days} days").format(days=_num(days, ".1f")),
            _("≤ {days} days").format(days=_num(targets.max_days, "g")),
            _("more GPUs, a faster system, or a better layout (less bubble, less exposed communication)"),
        ),
        Gate(
            "budget",
            cost.usd <= targets.max_usd,
            _("${usd} M").format(usd=_num(cost.usd / 1e6, ".2f")),
            _("≤ ${usd} M").format(usd=_num(targets.max_usd / 1e6, ".2f")),
            _("a cheaper price per GPU-hour, higher efficiency, or fewer wasted hours (goodput)"),
        ),
        Gate(
            "efficiency",
            step.efficiency >= targets.min_efficiency,
            _("{eff} (MFU {mfu})").format(eff=percent(step.efficiency, percent_spec(step.efficiency,
                                                                            targets.min_efficiency)),
                                          mfu=percent(step.mfu)),
            f"≥ {percent(targets.min_efficiency)}",
            _("fewer GPUs per replica of the batch, a bigger NVLink domain, interleaved stages, or more NIC bandwidth"),
        ),
        Gate(
            "goodput",
            good >= targets.min_goodput,
            _("{goodput} (MTBI {mtbi} h, checkpoint every {every} min)").format(
                goodput=percent(good, max(".1%", percent_spec(good, targets.min_goodput))),  # ".1%" at least
                mtbi=_num(mtbi_h, ".1f"), every=_num(tau / 60, ".0f")),
            f"≥ {percent(targets.min_goodput)}",
            _("faster checkpoints (asynchronous, in memory), faster restarts, fewer GPUs, or fewer failures"),
        ),
    ]
    if targets.max_MW is not None:
        whole = (_(" ({domains} whole NVLink domains of {domain} GPUs)").format(domains=powered // domain,
                                                                                domain=domain)
                 if powered != design.gpus else "")
        gates.append(
            Gate(
                "power",
                MW <= targets.max_MW,
                _("{MW} MW").format(MW=_num(MW, ".2f")) + whole + _("; scale-out switches not counted"),
                _("≤ {MW} MW").format(MW=_num(targets.max_MW, "g")),
                _("fewer GPUs or a more efficient system"),
            )
        )
    return gates


def compare_systems(targets: Targets, systems: list[str], gpus: list[int], **design_kwargs) -> list[Report]:
    """Evaluate the best layout (:func:`nvcourse.training.best_config`) of every system × GPU count that fits."""
    out = []
    for sid in systems:
        for g in gpus:
            best = training.best_config(targets.model, sid, g)
            if best is None:
                continue
            d = Design(system=sid, gpus=g, tp=best.tp, pp=best.pp, recompute=best.recompute, **design_kwargs)
            try:
                out.append(evaluate(d, targets))
            except ValueError:
                continue
    return out


def price_on(system: str, date: str) -> tuple[float, str] | None:
    """The system's price per GPU-hour ($) dated ``date`` ("YYYY-MM") in ``data/costs.toml`` — its main price or
    its market price — with its label (spec, est, assumption); None when it has no price of that date."""
    c = training.system_costs(system)
    if c["usd_date"] == date:
        return c["usd_per_gpu_hour"], c["usd_label"]
    if c.get("usd_market_date") == date:
        return c["usd_per_gpu_hour_market"], c["usd_market_label"]
    return None


def common_price_date(systems: list[str]) -> str | None:
    """The latest date at which every system has a price in ``data/costs.toml``: the basis on which their prices
    compare like for like (same month); None when there is none."""
    dates = [{c["usd_date"], c.get("usd_market_date")} - {None} for c in map(training.system_costs, systems)]
    common = set.intersection(*dates) if dates else set()
    return max(common) if common else None


def at_price_date(report: Report, date: str) -> Report | None:
    """``report``'s design evaluated again at its system's price of ``date`` (:func:`price_on`); None when the
    system has no price of that date. A price the design set itself is kept (it is the learner's, not the file's)."""
    if report.design.usd_per_gpu_hour is not None:
        return report
    price = price_on(report.design.system, date)
    if price is None:
        return None
    return evaluate(replace(report.design, usd_per_gpu_hour=price[0]), report.targets)


def decision_log_fields() -> tuple[tuple[str, str], ...]:
    """The decision log's rows (name, what to write in it), in the current language."""
    return (
        (_("Decision"), _("what was chosen (system, size, layout, checkpoint plan)")),
        (_("Targets"), _("set before the choice: time, budget, goodput, efficiency, power")),
        (_("Options considered"), _("at least two, with the evidence for each")),
        (_("Evidence"), _("gates passed / failed, with the model or measurement behind each number")),
        (_("Assumptions"),
         _("every input that is not sourced (prices, efficiency, failure rate) and how sensitive the result is")),
        (_("Risks"), _("what could make this wrong; what would we see first")),
        (_("Validation plan"), _("benchmarks at job scale and message sizes before the full run; canary; thresholds")),
        (_("Rollback"), _("what we do if a gate fails in production")),
        (_("Owner and review date"), _("who decides, and when the decision is revisited")),
    )


with english():
    #: The decision log's rows in English: their names give :func:`decision_log`'s keyword names.
    DECISION_LOG_FIELDS = decision_log_fields()


def decision_log_template() -> str:
    """An empty decision log as a Markdown table to copy into a notebook cell."""
    return md_table([_("field"), _("entry")], [(f"**{name}**", f"_{hint}_") for name, hint in decision_log_fields()],
                    markdown_cols=[0, 1])


def decision_log(report: Report, **entries: str) -> str:
    """A decision log (Markdown) pre-filled from a :class:`Report`; pass your own text per field.

    Keyword names are the field names in lower case with underscores (``options_considered=...``).
    Unknown names raise ValueError listing the allowed ones.
    """
    keys = {name.lower().replace(" ", "_"): name for name, _hint in DECISION_LOG_FIELDS}
    unknown = set(entries) - set(keys)
    if unknown:
        raise ValueError(f"unknown decision-log fields {sorted(unknown)}; allowed: {', '.join(keys)}")
    auto = _decision_log_auto(report)
    shown = dict(zip(keys, decision_log_fields()))  # key -> (name, hint) in the current language
    rows = []
    for key in keys:
        # what the model wrote is text (escaped: its "$" must not start TeX); what the learner wrote is Markdown
        name, hint = shown[key]
        text = entries.get(key) or (md_escape(auto[key]) if key in auto else f"_{hint}_")
        rows.append((f"**{name}**", text))
    return md_table([_("field"), _("entry")], rows, markdown_cols=[0, 1])


def _decision_log_auto(report: Report) -> dict[str, str]:
    """The decision log's rows the model can fill (decision, targets, evidence), in the current language."""
    d, t = report.design, report.targets
    french = language() == "fr"
    gpus = _num(d.gpus, ",d") if french else str(d.gpus)
    targets = [_("≤ {days} days").format(days=_num(t.max_days, "g")),
               _("≤ ${usd} M").format(usd=_num(t.max_usd / 1e6, ".2f")),
               _("goodput ≥ {share}").format(share=percent(t.min_goodput)),
               _("efficiency ≥ {share}").format(share=percent(t.min_efficiency))]
    if t.max_MW:
        targets.append(_("≤ {MW} MW").format(MW=_num(t.max_MW, "g")))
    return {
        "decision": _("{gpus} GPUs of {system}, TP {tp} × PP {pp} × DP {dp} ({placement}), checkpoint every "
                      "{minutes} min").format(gpus=gpus, system=d.system, tp=d.tp, pp=d.pp, dp=report.step.dp,
                                              placement=d.placement,
                                              minutes=_num(report.checkpoint_interval_s / 60, ".0f")),
        "targets": ", ".join(targets),
        "evidence": ("\u00a0; " if french else "; ").join(
            _("{gate} {verdict} ({measured})").format(gate=gate_name(g.name), verdict=verdict_word(g.passed),
                                                      measured=g.measured) for g in report.gates),
    }


def as_dict(report: Report) -> dict:
    """Plain numbers of a report (for tests and JSON)."""
    return {
        "design": asdict(report.design),
        "days": report.cost.hours / 24,
        "usd": report.cost.usd,
        "goodput": report.goodput,
        "efficiency": report.step.efficiency,
        "mfu": report.step.mfu,
        "MW": report.MW,
        "passed": report.passed,
        "failed": [g.name for g in report.failed],
    }

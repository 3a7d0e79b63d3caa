"""Chapter 06d — bring-up and fault runbook: the checks from the host up, the drill, the cloud fabrics table.

Everything here is read from ``nvcourse/data/runbook.toml`` (one record per check, each with its command, healthy
and broken output, NCCL/nccl-tests signature, cause, fix and the public case where it was seen). The arithmetic of
a down-trained PCIe link (:func:`pcie_GBps_dir`, :func:`link_fraction`) is the one number the chapter computes; it
and the drill's grading live in :mod:`nvcourse.runbook`, which the checkers use too.
"""

from __future__ import annotations

import html
import re

from nvcourse import _data
from nvcourse._validate import choice
from nvcourse.i18n import data_text, language, localize_numbers, ngettext, number
from nvcourse.i18n import translate as _
from nvcourse.markup import details_html
from nvcourse.nccl.signatures import counter_readings, match_text, reading_notes
from nvcourse.observability.counters import ib_link_rule
from nvcourse.runbook import (
    LAYERS,
    drill_data,
    drill_verdict,
    link_fraction,
    pcie_GBps_dir,
    raw,
    read_lnk,
    roce_qos_example,
    signatures,
)
from nvcourse.tables import table_html

__all__ = ["LAYERS", "LOOK_AT", "raw", "signatures", "checks_html", "checks_table_html", "check_cards_html",
           "cloud_html", "cloud_table_html", "pcie_GBps_dir", "link_fraction", "read_lnk", "drill_story_html",
           "drill_step_html", "drill_signatures", "drill_verdict", "drill_box", "sources_html", "ib_tc_text",
           "ib_link_rule_html", "layer_name", "pcie_line"]

#: One sentence per layer, shown under its summary table: what to look at first in that layer's output.
LOOK_AT: dict[str, str] = {
    "host": _("Look for the one GPU whose clock reasons or CPU binding differ from its peers': a collective runs at "
            "the speed of its slowest rank."),
    "pcie": _("In <code>lspci</code> only two marks mean trouble: a <code>+</code> after <code>ReqRedir</code> or "
              "<code>CmpltRedir</code>, and the word <code>(downgraded)</code> in <code>LnkSta</code>. On bare "
              "metal the IOMMU must be off or in pass-through (<code>iommu=pt</code>)."),
    "nvlink": _("One command per piece: the fabric state must read <code>Completed</code>, every link a speed (never "
              "<code>&lt;inactive&gt;</code>), and across trays NCCL must say <code>MNNVL 1</code>."),
    "gpu_nic": _("Read the channel lines first: a <code>via NET/...</code> connection ending in <code>/GDRDMA</code>"
               " uses GDR. Only <code>[send]</code> lines without it: NCCL's read policy "
               "(<code>NCCL_NET_GDR_READ</code>), not a broken peer-memory path: off by default before Ampere; on "
               "Ampere or newer, look for <code>NCCL_NET_GDR_READ=0</code>. No line with it: the NIC line decides: "
               "<code>Disabled for HCA</code> is the peer-memory path, "
               "<code>Enabled for HCA</code> a distance. The NIC line needs <code>NET</code> in "
               "<code>NCCL_DEBUG_SUBSYS</code>: no NIC line means run again with it."),
    "fabric": _("RoCE faults show as WARN lines or error counters that climb during a run; an InfiniBand fault as a "
              "port that is not Active, or a link whose symbol errors or flaps keep rising."),
    "nccl": _("Read the <code>set by environment</code> lines first; if none is a leftover workaround, time node pairs "
            "to find a slow node."),
    "cloud": _("Each fabric shows in the log in its own way (the last column): EFA by its plugin's "
               "<code>Using network Libfabric</code> line, Google's fabrics by their plugin's lines or variables, "
               "Azure by the same <code>NET/IB</code> lines as bare metal. The plugin decides which of this "
               "chapter's checks apply."),
}


def _link(url: str, text: str) -> str:
    """A link opening in a new tab, its text ``text``."""
    return f'<a href="{html.escape(url)}" target="_blank">{html.escape(text)}</a>'


def _source_name(url: str) -> str:
    """A check's source by name, for its link: ``nccl#1676`` for a GitHub thread (``NVIDIA/nccl#1676: ...``), else
    the source's title up to its first colon (``NCCL User Guide, Troubleshooting``). Falls back to the URL."""
    title = next((v["title"] for v in raw()["sources"].values() if v["url"] == url), url)
    if m := re.match(r"[\w.-]+/([\w.-]+#\d+)", title):
        return m.group(1)
    return title.split(":", 1)[0]


def _details(summary: str, body: str) -> str:
    """The course's collapsed block, its body set a little below the line the reader clicks (cards and tables)."""
    return details_html(summary, body, body_style="margin-top:6px")


def _command(cmd: str) -> str:
    """The command without its trailing ``# comment`` (the full line stays in the detail cards)."""
    return cmd.split("   #", 1)[0].strip()


def layer_name(layer: str) -> str:
    """A runbook layer (a key of :data:`LAYERS`) in the words the chapter uses for it, in the reader's language."""
    names = {"host": _("host (clocks, power, NUMA)"), "pcie": _("PCIe (ACS, link training)"),
             "nvlink": _("NVLink and NVSwitch (Fabric Manager, links, IMEX)"),
             "gpu_nic": _("GPU to NIC (GPUDirect RDMA)"), "fabric": _("fabric (RoCE, InfiniBand)"),
             "nccl": _("NCCL (environment, slow ranks)"), "cloud": _("cloud fabrics")}
    return names.get(layer, LAYERS[layer])



def _pct(fraction: float, spec: str = ".0%") -> str:
    """``0.127`` as ``12.7%`` (English, as Python writes it with ``spec``) or ``12,7 %`` (French)."""
    return format(fraction, spec) if language() != "fr" else number(100 * fraction, spec.replace("%", "f")) + "\u00a0%"

def pcie_line(capable: tuple[float, int], trained: tuple[float, int]) -> str:
    """A PCIe link's rate as capable and as trained (``(GT/s, lanes)`` each, as ``lspci`` prints LnkCap and LnkSta),
    in GB/s per direction, and the fraction it kept."""
    return localize_numbers(_("capable: {capable} GB/s per direction; trained: {trained} GB/s; kept: {kept}").format(
        capable=f"{pcie_GBps_dir(*capable):.1f}", trained=f"{pcie_GBps_dir(*trained):.1f}",
        kept=_pct(link_fraction(*capable, *trained), ".1%")))


def checks_html(layer: str) -> str:
    """One layer, readable first: a 3-column summary (check, the command, what broken looks like), one sentence on
    what to look at, and every field of every check (healthy, signature, cause, fix, source) behind a collapsed
    ``<details>``."""
    sigs = signatures(layer)
    # a record may give the summary a shorter 'broken' (``broken_short``) that points to where the chapter tells the
    # detail once; the full text stays in the collapsed card
    rows = [[f"<b>{html.escape(s['title'])}</b>", f"<code>{html.escape(_command(s['command']))}</code>",
             html.escape(s.get("broken_short", s["broken"]))] for s in sigs]
    summary = table_html([_("check"), _("run"), _("broken looks like")], rows,
                         caption=_("Runbook: {layer}").format(layer=layer_name(layer)), align_numbers=False)
    which = _("Both checks") if len(sigs) == 2 else _("All {n} checks").format(n=len(sigs))
    more = _("{which} in full: healthy output, what nccl-tests shows, cause, fix, source").format(which=which)
    return f"{summary}<p>{LOOK_AT[layer]}</p>{_details(more, check_cards_html(layer))}"


def check_cards_html(layer: str) -> str:
    """Every field of each check of one layer, as one small two-column card per check, each collapsed under its
    title: a learner opens the one check they need instead of reading every card at once."""
    fields = ((_("run"), "command"), (_("healthy"), "healthy"), (_("broken"), "broken"),
              (_("what nccl-tests / the job shows"), "nccl_tests"), (_("cause"), "cause"), (_("fix"), "fix"))
    cards = []
    for s in signatures(layer):
        rows = [[name, f"<code>{html.escape(s[key])}</code>" if key == "command" else html.escape(s[key])]
                for name, key in fields]
        rows.append([_("source"), _link(s["source_url"], _source_name(s["source_url"]))])
        cards.append(_details(s["title"], table_html([_("field"), _("detail")], rows, caption=s["title"],
                                                     align_numbers=False)))
    return "".join(cards)


def checks_table_html(layer: str) -> str:
    """One layer's checks: what to run, healthy vs broken, the signature in NCCL's or nccl-tests' words, the fix."""
    rows = []
    for s in signatures(layer):
        rows.append([f"<b>{html.escape(s['title'])}</b>", f"<code>{html.escape(s['command'])}</code>",
                     html.escape(s["healthy"]), html.escape(s["broken"]), html.escape(s["nccl_tests"]),
                     html.escape(s["cause"]), html.escape(s["fix"]),
                     _link(s["source_url"], _source_name(s["source_url"]))])
    return table_html([_("check"), _("run"), _("healthy"), _("broken"), _("what nccl-tests / the job shows"),
                       _("cause"), _("fix"), _("source")], rows,
                      caption=_("Runbook: {layer}").format(layer=layer_name(layer)), align_numbers=False)


def _clouds() -> list[dict]:
    """The cloud fabrics' records, their displayed texts in the reader's language."""
    return [_data.shown("runbook", "cloud", c) for c in raw()["cloud"].values()]


def cloud_table_html() -> str:
    """The cloud fabrics: transport, NCCL's path, what the log says, what differs from on-premises IB/RoCE."""
    rows = [[html.escape(c["name"]), html.escape(c["transport"]), html.escape(c["nccl_path"]),
             f"<code>{html.escape(c['log_says'])}</code>", html.escape(c["differs"])] for c in _clouds()]
    return table_html([_("fabric"), _("transport"), _("NCCL reaches it through"), _("how the log shows it"),
                       _("what differs")], rows, caption=_("Cloud fabrics"), align_numbers=False)


def cloud_html() -> str:
    """The cloud fabrics, readable first: which plugin and which log line, one sentence, the full table collapsed."""
    rows = [[html.escape(c["name"]), html.escape(c["nccl_path"]), f"<code>{html.escape(c['log_says'])}</code>"]
            for c in _clouds()]
    summary = table_html([_("fabric"), _("NCCL reaches it through"), _("how the log shows it")], rows,
                         caption=_("Cloud fabrics"), align_numbers=False)
    more = _("Each fabric in full: its transport and what differs from on-premises InfiniBand or RoCE")
    return f"{summary}<p>{LOOK_AT['cloud']}</p>{_details(more, cloud_table_html())}"


def ib_tc_text() -> str:
    """The worked ``NCCL_IB_TC`` example from the data: the byte a DSCP needs, and what the DSCP alone would send."""
    q = roce_qos_example()
    return _("DSCP {dscp} (priority {priority}), ECN bits {ecn_bits}: NCCL_IB_TC = {dscp} x 4 + {ecn} = {tc}. "
             "Setting NCCL_IB_TC={dscp} instead sends DSCP {wrong_dscp} (ECN bits {wrong_bits}): another class, "
             "usually a lossy one.").format(dscp=q["dscp"], priority=q["priority"], ecn_bits=f"{q['ecn']:02b}",
                                            ecn=q["ecn"], tc=q["ib_tc"], wrong_dscp=q["wrong_dscp"],
                                            wrong_bits=f"{q['wrong_ecn']:02b}")


def ib_link_rule_html() -> str:
    """The course's one InfiniBand link-health rule (``data/observability.toml``, shared with chapters 08 and 08b),
    readable first: per counter its short name, whether to alert on it or only trend it, and when; one sentence
    under it; what each counter counts and its names in each tool behind a collapsed ``<details>``."""
    words = {"alert": _("alert"), "trend": _("trend, do not page")}
    rule = ib_link_rule()
    # the short name is the counter's name before its aliases in brackets (mlxlink, sysfs, UFM): the full table has them
    short = table_html([_("counter"), _("action"), _("when")],
                       [[html.escape(r["counter"].split(" (", 1)[0]), f"<b>{words[r['action']]}</b>",
                         html.escape(r["when"])] for r in rule],
                       caption=_("InfiniBand link health: what to page on, what to trend"), align_numbers=False)
    rows = [[html.escape(r["counter"]), html.escape(r["counts"]), f"<b>{words[r['action']]}</b>",
             html.escape(r["when"])] for r in rule]
    table = table_html([_("counter"), _("what it counts"), _("action"), _("when")], rows,
                       caption=_("InfiniBand link health: what to page on, what to trend"), align_numbers=False)
    more = _details(_("Each counter in full: what it counts, and its names in the tools that show it"), table)
    return short + "<p>" + _("Page on the two <b>alert</b> rows only; the rest show a link's margin shrinking, so "
                             "they decide which part to replace next, not who is woken up.") + "</p>" + more


def drill_story_html() -> str:
    """The drill's symptom, as the on-call engineer hears it."""
    d = drill_data()
    story = _data.shown("runbook", "drill", d)["story"]
    return "<p>" + _("<b>The page:</b> {story}").format(story=html.escape(story)) + "</p>"


def drill_signatures(step: str) -> list[str]:
    """The runbook signatures the course's log reader (``nvcourse ncclog``) finds in one step's output (none for a
    step whose case published no output)."""
    steps = drill_data()["steps"]
    choice("step", step, list(steps))
    return [m["signature"] for m in match_text(steps[step].get("output", ""))]


def drill_step_html(step: str) -> str:
    """What one step (a command on the broken cluster) prints: real output with a link to where it was posted, and
    what the course's reader (``nvcourse ncclog``) recognises in it (its signatures, and its notes: a counter read
    once is a reading, not a fault). Only the drill's own case (``story_src``) shows its fault; an output from another
    case is labelled as a healthy illustration, and a step with no public output says so and shows what a healthy
    cluster prints (the ``healthy`` text of the signature named in ``healthy_of``)."""
    d = drill_data()
    choice("step", step, list(d["steps"]))
    s = d["steps"][step]
    head = f"<p><code>$ {html.escape(s['command'])}</code></p>"
    name = "<p>" + _("Step name (for the exercise): <code>{step}</code>").format(step=html.escape(step)) + "</p>"
    if "output" not in s:
        healthy = data_text(raw()["signatures"][s["healthy_of"]]["healthy"])
        return (head + "<p>" + _("No output of this command was published for this case. On a healthy cluster it "
                                 "shows: {healthy}").format(healthy=html.escape(healthy)) + "</p>" + name)
    titles = [data_text(raw()["signatures"][f]["title"]) for f in drill_signatures(step)]
    reader = (_("signature: {titles}").format(titles="; ".join(html.escape(t) for t in titles)) if titles
              else _("no failure signature"))
    notes = reading_notes(counter_readings(s["output"]), s["output"])
    if notes:
        reader += "; " + _("note: {notes}").format(notes="; ".join(html.escape(n) for n in notes))
    src = raw()["sources"][s["src"]]
    link = _link(src["url"], src["title"])
    quoted = (_("Quoted from: {link}") if s["src"] == d["story_src"]
              else _("This case published no output of this command; here is a healthy one, quoted from: {link}"))
    return (head + f"<pre style='white-space:pre-wrap'>{html.escape(s['output'].expandtabs(8))}</pre>"
            + "<p>" + quoted.format(link=link) + "</p>"
            + "<p><i>" + _("nvcourse ncclog on this output: {reader}").format(reader=reader) + "</i></p>" + name)


def drill_box():
    """A dropdown of the commands you can run on the broken cluster, each shown as the command itself (its step
    name, which the exercise takes, is printed under its output); each shows its output, quoted from a public case."""
    import ipywidgets as W

    from nvcourse.widgets import Dashboard

    # opens on the page alone: the first command is the learner's prediction, so no output is shown before it
    start = _("(choose a command)")
    steps = [(start, start), *((d["command"], key) for key, d in drill_data()["steps"].items())]
    pick = W.Dropdown(options=steps, value=start, description=_("run"))

    def render(step):
        if step == start:
            return drill_story_html() + "<p><i>" + _("Pick the command you would run first.") + "</i></p>"
        return drill_story_html() + drill_step_html(step)

    return Dashboard({"step": pick}, render, columns=1)


def sources_html() -> str:
    """Every source the runbook cites, once, with its link."""
    srcs = raw()["sources"]
    rows = [[_link(v["url"], _data.shown("runbook", "sources", v)["title"])] for v in srcs.values()]
    table = table_html([_("source")], rows, caption=_("Sources"), align_numbers=False)
    return _details(ngettext("The {n} source, with its link", "The {n} sources, each with its link",
                             len(srcs)).format(n=len(srcs)), table)

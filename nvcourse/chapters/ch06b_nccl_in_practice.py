"""Chapter 06b, NCCL in practice: tables, figures and the two paste boxes the notebook shows.

Everything here drives :mod:`nvcourse.nccl` (the readers and the diagnosis) and :mod:`nvcourse.topology`;
hardware figures come from the catalog, causes from ``nvcourse/data/nccl_cases.toml`` and the environment
variables from ``nvcourse/data/nccl_env.toml``.
"""

from __future__ import annotations

import html
import re
import textwrap
from importlib import resources
from pathlib import Path

from nvcourse import _data
from nvcourse.i18n import language, localize_numbers, ngettext, number, whole
from nvcourse.i18n import translate as _
from nvcourse.markup import details_html
from nvcourse.nccl.diagnose import BANDS, NO_OVERLAY_OPS, band_name
from nvcourse.nccl.ncclog_explain import explain
from nvcourse.nccl.samples import LOGS, SAMPLES, hosts_shown, link_words, sample_label, sample_text, system_words
from nvcourse.tables import table_html

__all__ = [
    "SAMPLES", "LOGS", "sample_text", "read_sample", "flags_table_html", "env_table_html", "ladder_html",
    "report_html", "ranks_note", "UNMODELLED_OPS", "overlay_figure", "diagnosis_text", "diagnosis_png",
    "diagnosis_image", "log_html", "log_explanation", "nccl_tests_box", "ncclog_box", "run_lines", "footer_lines",
    "hopper_topology", "affinity_table_html", "in_place_gap", "band_counts", "sample_caption", "sample_label",
]  # fmt: skip

_PASTE = _("(paste your own below)")
#: Shown above the answer when "paste your own" is picked: the box keeps the last sample until it is replaced.
_PASTE_HINT = _("<p><b>Your own output:</b> replace the text in the box with what your machine printed "
                 "(any amount of noise around it is fine), then click outside the box.</p>")

# nccl-tests command-line flags (from the nccl-tests README "Arguments" section)
_FLAGS = (
    ("-b, --minbytes", _("smallest size S to test"), "-b 8"),
    ("-e, --maxbytes", _("largest size S"), "-e 8G"),
    ("-f, --stepfactor", _("multiply S by this between sizes (or -i for a fixed increment)"), "-f 2"),
    ("-g, --ngpus", _("GPUs per thread (a process drives -t x -g GPUs, -t being its threads); "
                      "use 1 with one process per GPU"), "-g 1"),
    ("-n, --iters", _("timed iterations per size"), "-n 20"),
    ("-w, --warmup_iters", _("untimed iterations per size"), "-w 5"),
    ("-c, --check", _("check results (#wrong); 0 skips the check for speed"), "-c 1"),
    ("-G, --cudagraph", _("capture the iterations in a CUDA graph and replay it this many times"), "-G 0"),
    ("-d, --datatype", _("element type: float, half, bfloat16, int8, double, ..."), "-d float"),
    ("-R, --local_register", _("register the send/recv buffers with NCCL: 0 none (default), 1 local registration, "
     "2 symmetric memory (NCCL 2.27 and later; section 8 says what it changes); run -R 0 and -R 2 to see what "
     "registration buys"), "-R 2"),
)

_LADDER = (
    (_("1 GPU pair"), _("p2pBandwidthLatencyTest or nvbandwidth"),
     _("each GPU pair's NVLink/PCIe rate; a slow pair is a bad link or P2P off")),
    (_("1 node, all GPUs"),
     _("mpirun -np 8 all_reduce_perf -b 8 -e 8G -f 2 -g 1 (one process per GPU, as the job runs)"),
     _("busbw near the model: NVLink/NVSwitch (and NVLS) work")),
    (_("host plumbing"), "nvidia-smi topo -m; NCCL_DEBUG=INFO",
     _("GPU-NIC pairs on the same PCIe switch (PIX), GDRDMA in the channel lines, right NUMA binding")),
    (_("1 NIC pair"), _("ib_write_bw (perftest) between two hosts, with --use_cuda for GPUDirect"),
     _("each NIC reaches its line rate; a slow NIC or cable shows here")),
    (_("2 nodes"), _("all_reduce_perf with NCCL_ALGO=Ring, one process per GPU"),
     _("ring busbw near the NICs' rate (tree can exceed it on 2 nodes)")),
    (_("pairs of nodes"), _("the 2-node test over many pairs"), _("one slow node shows in every pair it belongs to")),
    (_("whole fabric"), _("all_reduce_perf and alltoall_perf on all nodes"),
     _("busbw near the model for that scale; alltoall shows congestion")),
)


def _header(name: str) -> tuple[str | None, str | None]:
    """A sample's ``%% system:`` text and the URL of its ``%% source:`` line (None where the file has none)."""
    system = url = None
    for line in sample_text(name).splitlines():
        body = line[2:].strip() if line.startswith("%%") else ""
        if body.startswith("system:") and system is None:
            system = body[len("system:"):].strip()
        elif body.startswith("source:") and url is None and (found := re.search(r"https?://[^\s)\"',;]+", body)):
            url = found.group(0)
    return system, url


def box_text(name: str) -> str:
    """A sample as the paste box shows it: the tool's output only, without the file's ``%%`` lines.

    Those lines hold the system, the source and notes for maintainers (how the copy was stored, what noise it
    has); the readers skip every ``%%`` line, so dropping them changes nothing they report. The system and the
    source are shown as a caption instead (:func:`sample_caption`).
    """
    return "\n".join(line for line in sample_text(name).splitlines() if not line.startswith("%%")) + "\n"


def sample_caption(name: str) -> str:
    """One caption line (HTML) for a sample in a paste box: the system it ran on and the URL of its source."""
    system, url = _header(name)
    parts = []
    if system:
        parts.append(_("system: {system}").format(system=html.escape(system_words(system))))
    if url:
        link = f'<a href="{html.escape(url, quote=True)}">{html.escape(link_words(url))}</a>'
        parts.append(_("source: {source}").format(source=link))
    return f'<p style="color:#555;font-size:90%"><i>{" · ".join(parts)}</i></p>' if parts else ""


def _option(name: str) -> tuple[str, str]:
    return sample_label(name), name  # a dropdown shows the label in the reader's language, gives the English one


def _caption_for(sample: str, text: str) -> str:
    """The sample's caption while the box still holds that sample's text; nothing for the learner's own paste."""
    return sample_caption(sample) if sample != _PASTE and text == box_text(sample) else ""


def read_sample(name: str):
    from nvcourse.nccl.nccltests import read_text

    return read_text(sample_text(name))


def _table(head: list[str], rows: list[list[object]], caption: str = "", *, align_numbers: bool = True) -> str:
    # every cell here is plain text (flags, env docs, parsed logs): escape it, table_html takes cells as HTML
    return table_html(head, [[html.escape(str(c)) for c in r] for r in rows], caption=caption,
                      align_numbers=align_numbers)


#: The flags that set the sweep, the processes and the check: the short table; the others fold under it.
_FIRST_FLAGS = ("-b, --minbytes", "-e, --maxbytes", "-f, --stepfactor", "-g, --ngpus", "-c, --check")


def flags_table_html() -> str:
    """The nccl-tests flags: the five that set the sweep, the GPUs per process and the check, then the others
    (iterations, CUDA graphs, data type, buffer registration) collapsed."""
    head, source = [_("flag"), _("meaning"), _("example")], _("nccl-tests README, Arguments")
    first = [list(f) for f in _FLAGS if f[0] in _FIRST_FLAGS]
    more = [list(f) for f in _FLAGS if f[0] not in _FIRST_FLAGS]
    return _table(head, first, source) + details_html(
        _("More flags: iterations, CUDA graphs, data type, buffer registration"), _table(head, more, source))


#: The variables of nccl_env.toml grouped by why one touches them: the short table the chapter shows first.
_ENV_GROUPS = (
    (_("see what NCCL chose"), ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_TOPO_DUMP_FILE"),
     _("on a first run, after any change, or when the rings or transports look wrong")),
    (_("measure one choice"), ("NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE"),
     _("to benchmark or rule out one algorithm or protocol; unset afterwards")),
    (_("pick the devices"), ("NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_NET_GDR_LEVEL"),
     _("when the log shows a wrong NIC, interface or a missing /GDRDMA")),
    (_("spread the traffic"), ("NCCL_IB_QPS_PER_CONNECTION", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS"),
     _("when flows collide on the fabric, or channels are too few or take SMs (the GPU's compute units) from "
       "compute")),
)


def env_table_html() -> str:
    """The NCCL variables: a short table by purpose, then every variable with what it does and when, collapsed."""
    data = _data.load("nccl_env")
    short = _table([_("why you touch it"), _("variables"), _("when")],
                   [[g, ", ".join(names), w] for g, names, w in _ENV_GROUPS], align_numbers=False)
    shown = {k: _data.shown("nccl_env", "vars", v) for k, v in data["vars"].items()}  # in the reader's language
    rows = [[k, v["what"], v["when"]] for k, v in shown.items()]
    full = _table([_("variable"), _("what it does"), _("when to touch it")], rows,
                  _("Source: {source}").format(source=data["source"]))
    return (short + "<details><summary>" + html.escape(_("Each variable: what it does and when to touch it"))
            + "</summary>" + full + "</details>")


def ladder_html() -> str:
    return _table([_("step"), _("tool"), _("what a good result shows")], [list(r) for r in _LADDER])


def in_place_gap(run) -> float:
    """Largest relative gap between in-place and out-of-place busbw over the sizes (0 when not printed)."""
    gaps = [abs(r["ip_busbw_GBps"] - r["oop_busbw_GBps"]) / r["oop_busbw_GBps"]
            for r in run.rows if r.get("ip_busbw_GBps") is not None and r["oop_busbw_GBps"] > 0]
    return max(gaps, default=0.0)



def run_lines(run, rows: tuple[int, ...] = (0, 20, -1)) -> str:
    """What nccl-tests printed about a run: the operation (and how the reader decided it), ranks, hosts, GPUs, the
    settings, then the out-of-place columns of the sizes at ``rows`` (B; µs; algbw, busbw in GB/s; #wrong)."""
    sources = {"header": _(" (from the header)"), "command line": _(" (from the command line)"),
               "busbw/algbw ratio": _(" (from the busbw/algbw ratio)"), "count/size": _(" (from the count/size)")}
    source = sources.get(run.op_source, _(" (from the {source})").format(source=run.op_source)) if run.op_source else ""
    lines = [ngettext("op {op}{source}, {ranks} ranks on {hosts} host, GPUs {gpus}",
                      "op {op}{source}, {ranks} ranks on {hosts} hosts, GPUs {gpus}", len(run.hosts)).format(
        op=run.op, source=source, ranks=whole(run.nranks), hosts=whole(len(run.hosts)), gpus=run.gpus),
             _("{n} sizes; the run's settings: ").format(n=whole(len(run.rows)))
             + ", ".join(f"{k} {v}" for k, v in run.header.items())]
    row = _("{bytes} B: time {time} us  algbw {algbw} GB/s  busbw {busbw} GB/s  #wrong {wrong}")
    lines += [localize_numbers(row.format(bytes=f"{r['bytes']:>12,}", time=f"{r['oop_time_us']:>9}",
                                          algbw=f"{r['oop_algbw_GBps']:>7}", busbw=f"{r['oop_busbw_GBps']:>7}",
                                          wrong=r["oop_wrong"])) for r in (run.rows[i] for i in rows)]
    return "\n".join(lines)


def footer_lines(run) -> str:
    """nccl-tests' footer (average busbw over every size, GB/s), the largest size's busbw and the in-place gap, the
    sizes in each size band, and the best busbw below 32 MiB: why the average says little."""
    gap, low = in_place_gap(run), max(r["oop_busbw_GBps"] for r in run.rows if r["bytes"] < 32 * 2**20)
    return localize_numbers("\n".join([
        _("Avg bus bandwidth (footer): {busbw} GB/s").format(busbw=run.avg_busbw_GBps),
        _("largest size: busbw {busbw} GB/s; in-place vs out-of-place: at most {gap} apart").format(
            busbw=run.rows[-1]["oop_busbw_GBps"],
            gap=f"{gap:.0%}" if language() != "fr" else number(100 * gap, ".0f") + "\u00a0%"),
        _("of {n} sizes: {latency} below 64 KiB (busbw near 0), {transition} from 64 KiB to 32 MiB, {bandwidth} from "
          "32 MiB up").format(n=len(run.rows), **band_counts(run)),
        _("below 32 MiB busbw reaches at most {low} GB/s: these rows pull the average down").format(low=low)]))


def band_counts(run) -> dict[str, int]:
    """How many of the run's sizes fall in each of the diagnosis's size bands (latency, transition, bandwidth)."""
    return {name: sum(lo <= r["bytes"] < hi for r in run.rows) for name, lo, hi in BANDS}


#: Operations whose model overlay needs an algorithm the cost model has no formula for here (it compares with a
#: ring): nccl-tests' send/recv and all-to-all runs get the reader's verdicts but no overlay, whatever the system.
UNMODELLED_OPS = NO_OVERLAY_OPS  # the reader's own list: the paste box offers no controls for them


def ranks_note(run, gpus: int | None, nodes: int | None) -> str | None:
    """A note when the GPUs per node and nodes given disagree with the ranks the paste printed (the model then
    describes another job than the one measured), else None. GPUs per node not given (0 or None) is taken from the
    paste: its ranks per host."""
    if not gpus and nodes and run.nranks and run.hosts:  # GPUs/node left at 0: the device lines give it
        gpus = run.nranks // len(run.hosts)
    if not gpus or not nodes or not run.nranks or gpus * nodes == run.nranks:
        return None
    return _("GPUs/node x nodes = {given}, but the paste has {ranks} ranks: the model below describes {given} "
             "GPUs, not the run").format(given=gpus * nodes, ranks=run.nranks)


def _verdict(band: dict) -> str:
    """A band's verdict, with the model's ring level (the ring bound, GB/s of busbw) added where the verdict compares
    with a level but does not print that one (a busbw above the NVLS level or the NICs' is also above the ring's)."""
    ring = ((band.get("level") or {}).get("levels_GBps") or {}).get("ring")
    if ring is None or round(ring) == 0 or _("ring level") in band["verdict"]:  # a level that rounds to 0 says nothing
        return band["verdict"]
    return band["verdict"] + _(" (ring level {ring} GB/s)").format(ring=localize_numbers(f"{ring:.0f}"))


def report_html(run, diag) -> str:
    """What was read and the verdicts, as HTML (sources as links)."""
    esc = html.escape
    unprinted = _("not printed")
    op = run.op or _("unknown (candidates: {names})").format(names=", ".join(run.op_candidates) or _("none"))
    source = (_(" (from the busbw/algbw ratio and the redop and in-place columns)")
              if run.op_source == "busbw/algbw ratio" else
              _(" (from the {source})").format(source=run.op_source) if run.op_source else "")
    # first what identifies the run (operation, ranks, sizes); the other fields read stay one click away
    also = _("<b>GPUs</b> {gpus}; <b>NCCL</b> {version}; <b>Avg bus bandwidth</b> {busbw}").format(
        gpus=esc(", ".join(run.gpus) or "-"), version=esc(run.nccl_version or unprinted),
        busbw=(localize_numbers(f"{run.avg_busbw_GBps:g} GB/s") if run.avg_busbw_GBps is not None else unprinted))
    parts = [_("<b>op</b> {op}{source}; <b>ranks</b> {ranks}; <b>sizes</b> {sizes}").format(
        op=esc(op), source=esc(source), ranks=run.nranks if run.nranks is not None else unprinted,
        sizes=len(run.rows))
        + "<details><summary>" + esc(_("also read: GPUs, NCCL version, Avg bus bandwidth"))
        + "</summary>" + also + "</details>"]
    # the notes name the CLI's flags; in the paste box the same settings are its controls (an operation the model
    # has no ring for gets no such note: the reader says no setting gives it an overlay); the flags' words are
    # replaced in the reader's language, so each is its own message, worded as inside the whole note
    flags = ((_("pass --system, --gpus and --nodes"), _("pick the system, GPUs/node and nodes above")),
             (_("pass --gpus (per node) and --nodes"), _("set GPUs/node and nodes above")))
    for n in run.notes + diag.notes:
        for cli_words, controls in flags:
            n = n.replace(cli_words, controls)
        parts.append(_("<i>note:</i> {note}").format(note=esc(n)))
    items = [("", f["finding"], [f]) for f in diag.findings]
    items += [(b["band"], localize_numbers(f" ({b['sizes'][0]:,}-{b['sizes'][1]:,} B): ") + _verdict(b), b["causes"])
              for b in diag.bands]
    if any(b["band"] == BANDS[-1][0] for b in diag.bands):  # where the model gives the large sizes a verdict
        parts.append("<i>" + esc(_("Read the bandwidth band first: it compares the large sizes with the model."))
                     + "</i>")
    for band, text, causes in items:  # a band's name in bold: the verdicts read as a list by size band
        links = "".join("<li>" + _("likely: {cause}").format(cause=esc(c["cause"]))
                        + f" <a href='{esc(c['source'])}' target='_blank'>" + _("[case]") + "</a></li>"
                        for c in causes)
        line = (f"<b>{esc(band_name(band))}</b>" if band else "") + esc(text)
        parts.append(f"{line}<ul>{links}</ul>" if links else line)
    return "<br>".join(parts)


def overlay_figure(run, diag):
    from nvcourse.nccl.draw import overlay_figure as fig

    return fig(run, diag)


def diagnosis_text(diag) -> str:
    """The diagnosis as plain text: each size band's verdict, then its likely causes with the case (a URL) for each.
    Multipliers in the verdicts are measured time / model time (or busbw ratios), as :func:`nvcourse.nccl.diagnose`
    words them."""
    lines = []
    for b in diag.bands:
        lines += _wrap(f"{band_name(b['band']):>10}: {_verdict(b)}", 12)
        for c in b["causes"]:
            lines += _wrap(f"{'':>12}" + _("likely: {cause}").format(cause=c["cause"]), 20)
            lines.append(f"{'':>20}" + _("case: {url}").format(url=c["source"]))
    return "\n".join(lines)


#: Width of :func:`diagnosis_text`'s lines: a notebook's text output breaks longer lines anywhere, even mid-word.
TEXT_WIDTH = 110


def _wrap(line: str, indent: int) -> list[str]:
    """``line`` broken at spaces into lines of at most :data:`TEXT_WIDTH` characters, continuations indented."""
    return textwrap.wrap(line, TEXT_WIDTH, subsequent_indent=" " * indent, break_long_words=False,
                         break_on_hyphens=False, drop_whitespace=True) or [line]


def diagnosis_image(run, diag):
    """:func:`diagnosis_png` as an ``IPython.display.Image`` with the figure's description as alt text, and the
    verdicts as text."""
    import matplotlib.pyplot as plt

    from nvcourse.widgets import figure_image

    fig = overlay_figure(run, diag)
    try:
        return figure_image(fig), diagnosis_text(diag)
    finally:
        plt.close(fig)


def diagnosis_png(run, diag) -> tuple[bytes, str]:
    """The overlay figure (measured busbw against the model, GB/s over bytes) as PNG bytes, and
    :func:`diagnosis_text`.

    The PNG is the figure drawn once as saved (:func:`nvcourse.widgets.figure_png`), and the figure is closed:
    shown through ``IPython.display.Image``, the inline backend does not show it a second time.
    """
    import matplotlib.pyplot as plt

    from nvcourse.widgets import figure_png

    fig = overlay_figure(run, diag)
    try:
        return figure_png(fig), diagnosis_text(diag)
    finally:
        plt.close(fig)


def _nvls_words(nvls) -> str:
    """NVLS as the log states it, in words (not a Python dict)."""
    if not isinstance(nvls, dict) or nvls.get("supported") is None:
        return _("not shown")
    words = _("supported") if nvls["supported"] else _("NOT supported")
    counts = {"channels": _("{n} channels"), "heads": _("{n} heads")}
    extra = [counts[k].format(n=nvls[k]) for k in counts if nvls.get(k) is not None]
    return words + (f" ({', '.join(extra)})" if extra else "")


def log_explanation(log) -> str:
    """The reader's one-paragraph explanation of a log, with the host names it quotes labelled as such (a bare
    container host name such as ``036260b61d3a`` reads like a hash to a learner)."""
    text = explain(log)  # in the reader's language (``to_json``'s is English: the stable --json)
    seen = ", ".join(log.hosts[:4])
    if not seen or f"({seen}" not in text:
        return text
    return text.replace(f"({seen}", f"({hosts_shown(log.hosts, 4)}", 1)


def log_html(log) -> str:
    """What a log says, as HTML: the explanation, the five fields that answer "what did NCCL choose and did it
    work" in a short table, and every other field it read behind a collapsed toggle."""
    esc = html.escape
    hosts = ", ".join(log.hosts[:6])
    short = [[_("net"), log.net or "-"],
             ["GDR", {True: _("on"), False: _("off"), None: _("not shown")}[log.gdr]],
             [_("transports"), ", ".join(f"{k} x{v}" for k, v in log.transports.items()) or "-"],
             ["NVLS", _nvls_words(log.nvls)], [_("WARN lines"), str(len(log.warnings))]]
    rest = [[_("version"), log.version or "-"], [_("ranks"), log.nranks or "-"],
            [_("hosts"), hosts_shown(log.hosts, 6) if hosts else "-"],
            [_("channels"), str(log.channels or "-")]]
    graphs = [_("search graphs"), ", ".join(f"{g['name']} {g['channels']} x "
                                            + localize_numbers(f"{g['bw_intra_GBps']:g} GB/s")
                                            for g in log.graphs) or "-"]
    (short if log.graphs else rest).append(graphs)  # a log that prints the search's plan is read for it
    srcs = "".join(f"<li>{esc(p['problem'])} <a href='{esc(p['source'])}' target='_blank'>" + _("[case]")
                   + "</a></li>" for p in log.problems if p.get("source"))
    head = [_("field"), _("value")]
    table = _table(head, short, align_numbers=False)  # a list of fields: all left-aligned
    look = _("Look at GDR (it should be on when ranks talk across nodes), the transports, NVLS and the WARN count.")
    more = details_html(_("The other fields read: {names}").format(names=", ".join(r[0] for r in rest)),
                        _table(head, rest, align_numbers=False))
    return f"<p>{esc(log_explanation(log))}</p>{table}<p>{esc(look)}</p>{more}<ul>{srcs}</ul>"


def _systems() -> list[str]:
    from nvcourse import catalog

    return ["auto", *catalog.systems()]


def nccl_tests_box():
    """Paste box: nccl-tests output in, overlay and verdicts out (a Dashboard: errors show as a note)."""
    import ipywidgets as W

    from nvcourse.nccl.diagnose import diagnose
    from nvcourse.nccl.nccltests import read_text
    from nvcourse.widgets import Dashboard

    first = next(iter(SAMPLES))
    sample = W.Dropdown(options=[*map(_option, SAMPLES), (_PASTE, _PASTE)], value=first, description=_("sample"))
    text = W.Textarea(value=box_text(first), placeholder=_("paste what all_reduce_perf printed"),
                      layout=W.Layout(width="100%", height="160px"), continuous_update=False)
    system = W.Dropdown(options=_systems(), value="auto", description=_("system"))
    from_devices = _("0: from the device lines")
    gpus = W.BoundedIntText(value=0, min=0, max=72, description=_("GPUs/node"), tooltip=from_devices)
    nodes = W.BoundedIntText(value=0, min=0, max=100000, description=_("nodes"), tooltip=from_devices)

    def on_sample(change):
        if change["new"] != _PASTE:
            text.value = box_text(change["new"])

    sample.observe(on_sample, names="value")

    def render(sample, text, system, gpus, nodes):
        if not text.strip():
            raise ValueError(_("the box is empty: paste what an nccl-tests binary such as all_reduce_perf printed "
                               "(its result rows at least)"))
        run = read_text(text)
        if not run.rows:  # the reader gives what a cut paste shows; the box's figure and verdicts need rows
            raise ValueError(_("no complete result row: the paste stops before the results (or the run stopped "
                               "there); expected rows such as '  1048576  262144  float  sum  -1  27.5 ...' "
                               "below the header"))
        diag = diagnose(run, system=None if system == "auto" else system, gpus=gpus or None, nodes=nodes or None)
        note = ranks_note(run, gpus or None, nodes or None) if diag.overlay else None  # it names "the model below"
        if note:
            diag.notes.append(note)
        hint = _PASTE_HINT if sample == _PASTE else ""
        return overlay_figure(run, diag), hint + _caption_for(sample, text) + report_html(run, diag)

    return Dashboard({"sample": sample, "text": text, "system": system, "gpus": gpus, "nodes": nodes}, render,
                     columns=1, freeze_layout=False)


def ncclog_box():
    """Paste box: an NCCL_DEBUG=INFO log in, its fields and what looks wrong out."""
    import ipywidgets as W

    from nvcourse.nccl.ncclog import read_text
    from nvcourse.widgets import Dashboard

    first = next(iter(LOGS))
    sample = W.Dropdown(options=[*map(_option, LOGS), (_PASTE, _PASTE)], value=first, description=_("sample"))
    text = W.Textarea(value=box_text(first), placeholder=_("paste NCCL_DEBUG=INFO output"),
                      layout=W.Layout(width="100%", height="160px"), continuous_update=False)

    def on_sample(change):
        if change["new"] != _PASTE:
            text.value = box_text(change["new"])

    sample.observe(on_sample, names="value")

    def render(sample, text):
        if not text.strip():
            raise ValueError(_("the box is empty: paste the lines NCCL printed with NCCL_DEBUG=INFO "
                               "(for example 'NCCL INFO Using network IB')"))
        return (_PASTE_HINT if sample == _PASTE else "") + _caption_for(sample, text) + log_html(read_text(text))

    box = Dashboard({"sample": sample, "text": text}, render, columns=1)
    box.plot.layout.display = "none"  # this box draws no figure: its empty plot area left a gap under the readout
    return box


def hopper_topology(nvlink: str = "nvlink4", pcie: str = "pcie5"):
    """The real `nvidia-smi topo -m` of an 8-GPU HGX Hopper board with 8 rail NICs.

    Returns ``(result, figure, legend html)``.
    """
    from nvcourse.topology.draw import topology_figure
    from nvcourse.topology.topo_parser import read_topo

    path = Path(str(resources.files("nvcourse").joinpath("data/topo/hgx-h20-nvswitch.txt")))
    res = read_topo(path, nvlink=nvlink, pcie=pcie)
    fig, legend = topology_figure(res.graph, title=_("HGX Hopper board: GPUs, NVSwitch, PCIe tree, NICs, CPUs"))
    return res, fig, legend


def affinity_table_html(res) -> str:
    """Per group of GPUs that share a CPU affinity: their nearest NICs (PIX), the CPUs and NUMA node to bind their
    processes to; then the same per GPU, collapsed."""
    rows, groups = [], {}
    for g in res.gpus:
        pix = [n for n in res.nics if res.codes.get((g, n)) == "PIX" or res.codes.get((n, g)) == "PIX"]
        nic = ", ".join(f"{n} ({res.nic_names.get(n, '?')})" for n in pix) or _("none on its switch")
        aff = res.affinity.get(g, {})
        cpu, numa = aff.get("cpu_affinity", "-"), aff.get("numa_affinity", "-")
        rows.append([g, nic, cpu, numa])
        groups.setdefault((cpu, numa), []).append((g, len(pix)))
    short = [[", ".join(g for g, _n in members),
              _("one each") if all(n == 1 for _g, n in members) else
              ", ".join(str(n) for _g, n in members), cpu, numa] for (cpu, numa), members in groups.items()]
    source = _("read off the `nvidia-smi topo -m` of an 8× H20 HGX board, as posted in a public SGLang issue")
    full = _table(["GPU", _("NIC on the same PCIe switch"), _("CPU affinity"), _("NUMA node")], rows, source)
    return (_table([_("GPUs"), _("NICs on their PCIe switch"), _("CPU affinity"), _("NUMA node")], short, source)
            + details_html(_("Each GPU: the name of its NIC, its CPUs and NUMA node"), full))

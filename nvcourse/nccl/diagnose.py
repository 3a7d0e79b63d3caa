"""Overlay the cost model on an nccl-tests run and give a verdict per size band, with cited likely causes.

Every cause comes from ``nvcourse/data/nccl_cases.toml``: a public case where the symptom was seen and
explained. The model is :func:`nvcourse.costmodel.predict_sweep` (public API), so a reworked model flows in.

Size bands (bytes of nccl-tests' S): ``latency`` below 64 KiB, ``transition`` 64 KiB to 32 MiB, ``bandwidth``
from 32 MiB. Bandwidths are GB/s (10^9 B/s), busbw as nccl-tests defines it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from .. import _data, catalog, i18n
from ..i18n import pgettext
from ..i18n import translate as _
from .forced import predict
from .nccltests import NcclTestsRun
from .nccltests_shape import assumed_note, run_notes, shape_findings, wrong_findings

__all__ = ["BANDS", "NO_OVERLAY_OPS", "Diagnosis", "band_name", "cases", "diagnose", "nic_GBps_per_node",
           "pcie_GBps", "recognise_system"]

BANDS: tuple[tuple[str, int, float], ...] = (
    ("latency", 0, 64 * 1024),
    ("transition", 64 * 1024, 32 * 1024 * 1024),
    ("bandwidth", 32 * 1024 * 1024, float("inf")),
)



def band_name(band: str) -> str:
    """A size band's name as the text report shows it, in the reader's language (``band`` is the stable key of
    ``BANDS``, English in ``--json``)."""
    names = {"latency": pgettext("size band", "latency"), "transition": pgettext("size band", "transition"),
             "bandwidth": pgettext("size band", "bandwidth")}
    return names.get(band, band)


# GPU names as nccl-tests prints them -> catalog system whose GPUs they are (SXM parts on NVLink boards only;
# PCIe or cut-down parts such as H800 or "H200 NVL" are not recognised, since their links differ).
_GPU_TO_SYSTEM = (("H100 80GB HBM3", "dgx-h100"), ("H100-SXM", "dgx-h100"), ("A100-SXM4", "dgx-a100"),
                  ("V100-SXM2", "dgx-1-v100"), ("H200", "hgx-h200"), ("GB200", "gb200-nvl72"), ("B200", "dgx-b200"))


#: plateau levels a path with no slow member reaches: a ring with one slow GPU, NIC or link runs under its level
HEALTHY_LEVELS: tuple[str, ...] = ("ring", "nic", "nvls")

#: operations the model has no ring for (send/recv, all-to-all): no setting gives them a model overlay
NO_OVERLAY_OPS: tuple[str, ...] = ("sendrecv", "alltoall")


def cases() -> dict[str, dict]:
    """The cited cases, by id (``symptom``, ``cause``, ``source``, ``said``); cached by ``_data.load``: read-only."""
    return _data.load("nccl_cases")["cases"]


def _cause(case_id: str) -> dict:
    c = cases()[case_id]
    return {"case": case_id, "cause": i18n.data_text(c["cause"]), "source": c["source"]}


def _f(value: float, spec: str) -> str:
    """A number of a verdict, in the reader's style (``0.85`` / ``0,85``)."""
    return i18n.number(value, spec)


def recognise_system(run: NcclTestsRun) -> tuple[str, int, int] | None:
    """(system id, GPUs per node, nodes) from the device lines, or None when not recognised."""
    if not run.ranks or len(run.gpus) != 1:
        return None
    name = run.gpus[0]
    if "NVL" in name.replace("NVLink", "") and "GB200" not in name:
        return None
    for key, system in _GPU_TO_SYSTEM:
        if key in name:
            per_host: dict[str, int] = {}
            for r in run.ranks:
                per_host[r["host"]] = per_host.get(r["host"], 0) + 1
            if run.nranks and run.nranks > len(run.ranks):  # device lines cut: the command gives the layout
                return _layout_from_command(run, system)
            counts = set(per_host.values())
            if len(counts) != 1:
                return None
            return system, counts.pop(), len(per_host)
    return None


def _layout_from_command(run: NcclTestsRun, system: str) -> tuple[str, int, int] | None:
    """(system, GPUs per node, nodes) for a paste cut in its device lines, where the visible lines would
    undercount: the launcher's node count (srun -N) where it divides the ranks, else the catalog system's GPUs
    per host where they divide them, else None."""
    nodes = (run.launch or {}).get("nodes")
    if nodes and run.nranks % nodes == 0:
        return system, run.nranks // nodes, nodes
    per_host = catalog.get_system(system).gpus_per_host
    if run.nranks % per_host == 0:
        return system, per_host, run.nranks // per_host
    return None


@dataclass
class Diagnosis:
    system: str | None
    gpus: int | None
    nodes: int | None
    overlay: list[dict] = field(default_factory=list)
    bands: list[dict] = field(default_factory=list)
    findings: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: failure signatures from the runbook data matched in the pasted text (see :mod:`.signatures`)
    signatures: list[dict] = field(default_factory=list)
    #: where ``system`` comes from: "given" (the caller's --system), "gpu name" (recognised from the device lines'
    #: GPU name alone, an assumption), or None (no system)
    system_from: str | None = None
    #: what the overlay models: algo, proto, nvls (predict_sweep's arguments) and the paste's settings behind them
    model_request: dict = field(default_factory=dict)
    #: the same diagnosis in English when this one speaks another language: what ``to_json`` gives
    english: Diagnosis | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict:
        """The fields, English whatever the language (``--json`` is a stable interface)."""
        e = self.english or self
        return {"system": e.system, "gpus": e.gpus, "nodes": e.nodes, "overlay": e.overlay,
                "bands": e.bands, "findings": e.findings, "notes": e.notes, "signatures": self.signatures,
                "system_from": e.system_from, "model_request": e.model_request}


def nic_GBps_per_node(system: str, gpus: int) -> float | None:
    """Achievable NIC bandwidth (GB/s, one direction) of the NICs serving ``gpus`` GPUs of one node.

    Catalog NIC link rate x efficiency x the node's NICs, scaled by the share of the node's GPUs in use (one
    rail NIC per GPU on these systems). A ring all-reduce across nodes cannot beat this; a tree on 2 nodes can.
    """
    from nvcourse import catalog

    s = catalog.get_system(system)
    if not s.nic_link or not s.nics_per_host:
        return None
    link = catalog.get_link(s.nic_link)
    return link.line_GBps_dir * link.efficiency * s.nics_per_host * min(1.0, gpus / s.gpus_per_host)


def _overlay(run: NcclTestsRun, system: str, gpus: int, nodes: int, d: Diagnosis) -> None:
    sizes = [r["bytes"] for r in run.rows if r["bytes"] > 0]
    if not run.rows:  # the reader's own note says the paste has no result row: nothing to overlay
        return
    if not sizes or run.op is None:
        d.notes.append(_("no model overlay: the operation is unknown") if run.op is None else _("no sizes > 0"))
        return
    try:  # the model follows an algorithm, protocol or NVLS setting the paste forces (see .forced)
        sw, ring, d.model_request, note = predict(run, system, gpus, sizes, nodes)
    except ValueError as exc:
        d.notes.append(_("no model overlay: {error}").format(error=exc))
        return
    d.notes += [note] if note else []
    rows = [r for r in run.rows if r["bytes"] > 0]
    for i, r in enumerate(rows):
        d.overlay.append({
            "bytes": r["bytes"], "busbw_GBps": r["oop_busbw_GBps"], "model_busbw_GBps": float(sw.busbw_GBps[i]),
            "model_ring_busbw_GBps": float(ring.busbw_GBps[i]), "model_algo": str(sw.algo[i]),
            "time_us": r["oop_time_us"], "model_time_us": float(sw.time_s[i]) * 1e6,
        })  # fmt: skip


def pcie_GBps(system: str) -> float | None:
    """Achievable PCIe bandwidth of one of ``system``'s GPUs (GB/s, one direction): catalog link x efficiency.

    A path that leaves NVLink (P2P off, P2P through the PCIe switch or host memory) cannot carry more per GPU
    for long; through host memory the CPU and memory often set a lower ceiling (sjeaugey in nccl#1639).
    """
    from nvcourse import catalog

    gpu = catalog.gpus().get(catalog.get_system(system).gpu)
    if gpu is None or not gpu.pcie:
        return None
    link = catalog.get_link(gpu.pcie)
    return link.line_GBps_dir * link.efficiency


def _levels(pts: list[dict], d: Diagnosis) -> dict[str, float]:
    """The busbw levels (GB/s) a plateau can sit at: the model's, the ring's over NVLink (or the model's ring
    across nodes), NVLS (when the model picks it), the node's NICs together (several nodes), PCIe (one
    direction, one node)."""
    from nvcourse import catalog

    lv = {"model": statistics.median(p["model_busbw_GBps"] for p in pts),
          "ring": statistics.median(p["model_ring_busbw_GBps"] for p in pts)}
    if any(p["model_algo"] == "nvls" for p in pts):
        lv["nvls"] = lv["model"]
    nodes, gpus = d.nodes or 1, d.gpus or 1
    if nodes > 1 and (nic := nic_GBps_per_node(d.system, gpus)):
        lv["nic"] = nic  # a ring across nodes spreads its channels over the node's NICs: their sum bounds it
    if nodes == 1 and (pc := pcie_GBps(d.system)) and catalog.get_system(d.system).scale_up_link:
        lv["pcie"] = pc
    return lv


def _cause_with(case_id: str, evidence: str) -> dict:
    return {**_cause(case_id), "evidence": evidence}


def _ranked_causes(meas: float, lv: dict[str, float], nodes: int, op: str | None) -> tuple[str | None, list[dict]]:
    """(the level the plateau matches, causes ranked by how well the evidence fits them).

    Rules, strongest evidence first: a plateau within PCIe reach (at most twice one PCIe direction) and at
    most a third of the NVLink ring level means NVLink is not carrying the traffic (P2P off or through host
    memory); at the ring level (0.8-1.15x) while the model picks NVLS means NVLS is off; between a third and
    0.8x of the ring level, a slow rank or fewer channels; across nodes, under a third of the node's NICs
    together means no GPUDirect RDMA or TCP sockets (sockets first when under a tenth), between a third and
    0.8x a slow rank, NIC or rail first.
    """
    ring, pcie, nic, nvls = lv.get("ring"), lv.get("pcie"), lv.get("nic"), lv.get("nvls")
    out: list[dict] = []
    level = None
    if nodes == 1 and ring and pcie and ring > 3 * pcie and meas <= 2 * pcie and meas <= ring / 3:
        level = "pcie"
        out.append(_cause_with("pcie_plateau", _(
            "{meas} GB/s is within PCIe reach (one direction {pcie} GB/s) and {ratio}x the NVLink ring level ({ring} "
            "GB/s): the traffic is not on NVLink (P2P off, ACS, a VM, or NCCL_P2P_LEVEL)").format(
                meas=_f(meas, ".0f"), pcie=_f(pcie, ".0f"), ratio=_f(meas / ring, ".2f"), ring=_f(ring, ".0f"))))
    elif ring and 0.8 * ring <= meas <= 1.15 * ring:
        level = "ring"
        if nvls and op == "allreduce" and meas < 0.85 * nvls:
            out.append(_cause_with("nvls_missing", _("{meas} GB/s is at the ring level ({ring} GB/s), not the NVLS "
                                                     "level ({nvls} GB/s)").format(
                meas=_f(meas, ".0f"), ring=_f(ring, ".0f"), nvls=_f(nvls, ".0f"))))
    elif nvls and meas >= 0.85 * nvls:
        level = "nvls"
    if nodes > 1 and nic:
        if meas < 0.1 * nic:
            out += [_cause_with("socket_fallback", _("{meas} GB/s is under a tenth of the node's NICs ({nic} GB/s): "
                                                     "TCP-socket territory").format(meas=_f(meas, ".1f"),
                                                                                    nic=_f(nic, ".0f"))),
                    _cause_with("no_gdr", _("GPUDirect RDMA off also caps the NIC path"))]
        elif meas < nic / 3:
            out += [_cause_with("no_gdr", _("{meas} GB/s is {ratio}x the node's NICs ({nic} GB/s): a copy through "
                                            "host memory on every transfer fits").format(
                meas=_f(meas, ".0f"), ratio=_f(meas / nic, ".2f"), nic=_f(nic, ".0f"))),
                    _cause_with("socket_fallback", _("less likely: sockets usually sit lower still"))]
        elif meas < 0.8 * nic:
            out += [_cause_with("slow_rank", _("{meas} GB/s is {ratio}x the node's NICs ({nic} GB/s): some NICs or "
                                               "rails slower or unused, or one slow rank").format(
                meas=_f(meas, ".0f"), ratio=_f(meas / nic, ".2f"), nic=_f(nic, ".0f"))),
                    _cause_with("no_gdr", _("less likely at this level: check for /GDRDMA in the log"))]
        elif level is None and meas <= 1.2 * nic:
            level = "nic"
    if ring and level is None and meas < 0.8 * ring and not out:
        out.append(_cause_with("slow_rank", _("{meas} GB/s is {ratio}x the ring level ({ring} GB/s) without "
                                              "matching a narrower path: one slow rank or fewer channels").format(
            meas=_f(meas, ".0f"), ratio=_f(meas / ring, ".2f"), ring=_f(ring, ".0f"))))
    elif level not in HEALTHY_LEVELS and not any(c["case"] == "slow_rank" for c in out) and meas < 0.85 * lv["model"]:
        out.append(_cause_with("slow_rank", _("a slow GPU, NIC or link also gives a plateau under the model")))
    return level, out


def _band_verdict(name: str, pts: list[dict], run: NcclTestsRun, d: Diagnosis) -> dict:
    meas = statistics.median(p["busbw_GBps"] for p in pts)
    model = statistics.median(p["model_busbw_GBps"] for p in pts)
    t_ratio = statistics.median(p["time_us"] / p["model_time_us"] for p in pts if p["model_time_us"] > 0)
    ratio = meas / model if model > 0 else None
    out = {"band": name, "sizes": [pts[0]["bytes"], pts[-1]["bytes"]], "busbw_GBps": meas, "model_busbw_GBps": model,
           "ratio": ratio, "time_ratio": t_ratio, "causes": []}
    if name == "latency":
        out["floor_us"] = min(p["time_us"] for p in pts)  # the smallest out-of-place time of the band
        out["verdict"] = _latency_text(t_ratio, out["floor_us"], d.nodes or 1)
        return out
    if ratio is None:
        out["verdict"] = _("no model figure")
        return out
    lv = _levels(pts, d)
    if name != "bandwidth":  # mid sizes: latency and NCCL's channel ramp weigh in, so no plateau to match
        out["verdict"] = _verdict_text(ratio, meas, None, {}, pts)
        if ratio < 0.85:
            out["causes"] = [_cause_with("slow_rank", _("mid sizes at {ratio}x the model; read the large sizes "
                                                        "first (the bandwidth band) for the path").format(
                ratio=_f(ratio, ".2f")))]
        _extra_notes(out, run, d, pts, meas, lv)
        return out
    # the plateau: the median of the three largest sizes, judged against the model's own plateau (a band median
    # would count the ramp up to it as a shortfall: an A100 run at 1.05x its plateau read as 0.75x)
    plateau = statistics.median(p["busbw_GBps"] for p in pts[-3:])
    model_plateau = statistics.median(p["model_busbw_GBps"] for p in pts[-3:])
    ratio = plateau / model_plateau if model_plateau > 0 else ratio
    out["plateau_ratio"] = ratio
    level, ranked = _ranked_causes(plateau, lv, d.nodes or 1, run.op)
    _gdr_level_set(ranked, (run.launch or {}).get("env") or {})
    out["level"] = {"matches": level, "plateau_GBps": plateau, "levels_GBps": lv}
    out["verdict"] = _verdict_text(ratio, plateau, level, lv, pts)
    if ratio < 0.85:
        out["causes"] = ranked
    elif level == "ring" and ranked and ranked[0]["case"] == "nvls_missing":
        out["causes"] = ranked[:1]
    if ratio < 0.85 and level in HEALTHY_LEVELS and not out["causes"]:
        out["verdict"] += _("; the model's higher figure is for {algo}, which this run does not reach: not a slow "
                            "rank (one slow member keeps a ring under its level); NCCL_DEBUG_SUBSYS=TUNING shows the "
                            "algorithm NCCL picks per size (NCCL 2.20 and later)").format(algo=pts[-1]["model_algo"])
    _extra_notes(out, run, d, pts, meas, lv)
    return out


def _latency_text(t_ratio: float, floor_us: float, nodes: int) -> str:
    """The latency band's verdict. Across nodes, a floor of twice the model's time or more is the network path's
    latency (NIC, transport or plugin, switches) more than kernel launches: a TCP-based cloud path costs ~100 us
    per operation where InfiniBand costs a few (``floor_us``: the band's smallest out-of-place time, us)."""
    if nodes > 1 and t_ratio >= 2:
        return _("small sizes take {ratio}x the model's time, at least {floor} us per operation: across nodes a "
                 "floor this high points at the network path's latency (NIC, transport or plugin, switches) more than "
                 "at launch and synchronisation; busbw means little here").format(
            ratio=_f(t_ratio, ".1f"), floor=_f(floor_us, ".0f"))
    return _("small sizes take {ratio}x the model's time (latency-bound: launch and synchronisation costs dominate; "
             "busbw means little here)").format(ratio=_f(t_ratio, ".1f"))


def _gdr_level_set(ranked: list[dict], env: dict) -> None:
    """Where the pasted command sets NCCL_NET_GDR_LEVEL, the GPUDirect-RDMA cause says so: the setting itself can
    keep GPUDirect RDMA off (NCCL uses it only for GPU-NIC paths at or below that level: src/graph/paths.cc
    ncclTopoCheckGdr)."""
    if (value := env.get("NCCL_NET_GDR_LEVEL")) is None:
        return
    for cause in ranked:
        if cause["case"] == "no_gdr":
            cause["evidence"] += _("; the command sets NCCL_NET_GDR_LEVEL={value}: NCCL uses GPUDirect RDMA only on "
                                   "GPU-NIC paths at or below that level, so the setting alone can turn it off").format(
                value=value)


def _verdict_text(ratio: float, plateau: float, level: str | None, lv: dict, pts: list[dict]) -> str:
    r = _f(ratio, ".2f")
    if ratio > 1.15:
        text = _("above the model ({ratio}x)").format(ratio=r)
    elif ratio >= 0.85:
        text = _("as the model expects ({ratio}x)").format(ratio=r)
    elif ratio >= 0.6:
        text = _("somewhat below the model ({ratio}x)").format(ratio=r)
    else:
        text = _("well below the model ({ratio}x)").format(ratio=r)
    names = {k: _level_name(k) for k in ("pcie", "ring", "nvls", "nic")}
    if level == "pcie":
        text += _("; plateau {plateau} GB/s is at the PCIe level (at most 2 x {pcie} GB/s, one direction), {ratio}x "
                  "the NVLink ring level ({ring} GB/s)").format(
            plateau=_f(plateau, ".0f"), pcie=_f(lv["pcie"], ".0f"), ratio=_f(plateau / lv["ring"], ".2f"),
            ring=_f(lv["ring"], ".0f"))
    elif level is not None and level != "model":
        text += _("; plateau {plateau} GB/s is at the {level} ({value} GB/s)").format(
            plateau=_f(plateau, ".0f"), level=names[level], value=_f(lv[level], ".0f"))
    elif ratio < 0.85 and lv:
        text += _("; plateau {plateau} GB/s matches none of the levels ({levels} GB/s)").format(
            plateau=_f(plateau, ".0f"),
            levels=", ".join(f"{names.get(k, k)} {_f(v, '.0f')}" for k, v in lv.items() if k != "model"))
    if level == "nvls" or (lv.get("nvls") and plateau > 1.1 * lv.get("ring", plateau)):
        text += _(": NVLS (in-switch reduction) is at work")
    return text


def _extra_notes(out: dict, run: NcclTestsRun, d: Diagnosis, pts: list[dict], meas: float, lv: dict) -> None:
    nodes = d.nodes or 1
    nic = nic_GBps_per_node(d.system, d.gpus or 1) if d.system else None
    top = max(p["busbw_GBps"] for p in pts)
    if run.op == "allreduce" and nodes == 2 and nic and top > nic:
        out["verdict"] += _("; busbw {top} GB/s is above the {nic} GB/s all the node's NICs carry").format(
            top=_f(top, ".0f"), nic=_f(nic, ".0f"))
        out["causes"] = [c for c in out["causes"] if c["case"] not in ("no_gdr", "socket_fallback")]
        out["causes"].insert(0, _cause_with("tree_beats_nic", _("2 nodes and busbw above every NIC of the node")))
    if run.op == "alltoall" and nodes > 1:
        out["causes"].append(_cause_with("alltoall_one_nic", _("all-to-all across nodes")))


def diagnose(run: NcclTestsRun, system: str | None = None, gpus: int | None = None,
             nodes: int | None = None) -> Diagnosis:
    """Findings for the whole run, a model overlay and per-band verdicts when a system is given or recognised.

    ``gpus``: GPUs per node; ``nodes``: number of nodes. Missing values come from the device lines. The texts
    (findings, verdicts, evidence, notes) are in the reader's language; ``to_json`` gives the English ones.
    """
    with i18n.english():
        d = _diagnose(run, system, gpus, nodes)
    if i18n.language() == "en":
        return d
    shown = _diagnose(run, system, gpus, nodes)
    shown.english = d
    return shown


def _diagnose(run: NcclTestsRun, system: str | None, gpus: int | None, nodes: int | None) -> Diagnosis:
    """:func:`diagnose` in the current language."""
    rec = recognise_system(run)
    system_from = "given" if system else None
    if system is None and rec:
        system, system_from = rec[0], "gpu name"
    if rec and rec[0] == system:
        gpus = gpus or rec[1]
        nodes = nodes or rec[2]
    if system and not gpus and run.nranks:
        nodes = nodes or 1
        gpus = max(1, run.nranks // nodes)
    d = Diagnosis(system=system, gpus=gpus, nodes=nodes, system_from=system_from)
    d.findings += wrong_findings(run)  # #wrong, out of bounds, or an old error column above its tolerance
    if any("built without MPI" in n for n in run.notes):
        seen = (_("busbw is 0.00 at every size while algbw is not: each process ran a 1-rank test")
                if any(n.startswith("busbw 0.00 under") for n in run.notes) else
                _("every process printed its own Rank 0"))
        d.findings.append({"finding": seen, **_cause("non_mpi_build")})
    big = [r for r in run.rows if r["bytes"] >= BANDS[2][1]]
    if run.avg_busbw_GBps is not None and big:
        top = max(r["oop_busbw_GBps"] for r in big)
        if top > 0 and run.avg_busbw_GBps < 0.5 * top:
            # the case's own cause also explains an average of 0 on one rank; here busbw is not 0 (top > 0)
            d.findings.append({"finding": _("Avg bus bandwidth {avg} GB/s averages every size; the large sizes "
                                            "reach {top} GB/s").format(avg=_f(run.avg_busbw_GBps, "g"),
                                                                       top=_f(top, "g")), **_cause("avg_hides"),
                               "cause": _("the average is over every size, latency-bound ones included; read the "
                                          "large-size rows")})
    d.findings += shape_findings(run)  # model-free: one rank, a shared GPU, a busbw collapse, time gaps
    if system_from == "gpu name":
        d.notes.append(assumed_note(run, system, gpus))
    d.notes += run_notes(run)
    if run.op in NO_OVERLAY_OPS:  # no ring in the model: no system, GPU count or node count gives an overlay
        d.notes.append(_("the model has no overlay for {op}, whatever the system").format(op=run.op))
        return d
    if system is None:
        d.notes.append(_("system not given and not recognised from the GPU names: no model overlay (pass --system, "
                         "--gpus and --nodes)"))
        return d
    if not gpus or not nodes:
        d.notes.append(_("ranks per node unknown: pass --gpus (per node) and --nodes"))
        return d
    _overlay(run, system, gpus, nodes, d)
    for name, lo, hi in BANDS:
        pts = [p for p in d.overlay if lo <= p["bytes"] < hi]
        if pts:
            d.bands.append(_band_verdict(name, pts, run, d))
    _settle_transition(d.bands, d.nodes or 1)
    return d


def _settle_transition(bands: list[dict], nodes: int = 1) -> None:
    """A transition band under the model blames a slow rank only when the large-size plateau falls short too.

    A measured curve can reach its plateau at larger sizes than the model's (NCCL adds channels and grows its
    chunks gradually), so a healthy run can sit well under the model in the mid sizes and at the model at the top:
    that shape is the ramp, not a rank. A plateau at a level a healthy path reaches (the ring's, the NICs', NVLS)
    under a model that expects more (another algorithm) is no slow rank either. Without large sizes the run cannot
    tell the two apart, and says so. Across ``nodes`` > 1, a latency floor of twice the model's or more delays the
    ramp: said too.
    """
    by = {b["band"]: b for b in bands}
    mid, big = by.get("transition"), by.get("bandwidth")
    if mid is None or not any(c["case"] == "slow_rank" for c in mid["causes"]):
        return
    plateau = big.get("plateau_ratio") if big else None
    level = (big.get("level") or {}).get("matches") if big else None
    if plateau is not None and plateau < 0.85 and level not in HEALTHY_LEVELS:
        for c in mid["causes"]:
            if c["case"] == "slow_rank":
                c["evidence"] = _("mid sizes at {ratio}x the model and the large-size plateau short too ({plateau}x):"
                                  " read the bandwidth band for the path").format(
                    ratio=_f(mid["ratio"], ".2f"), plateau=_f(plateau, ".2f"))
        return
    mid["causes"] = [c for c in mid["causes"] if c["case"] != "slow_rank"]
    if plateau is None:
        mid["verdict"] += _("; this run has no sizes of 32 MiB and up, so it cannot tell a slow path from the ramp "
                            "up to the plateau: run to larger sizes")
    elif plateau >= 0.85:
        mid["verdict"] += _("; the large sizes reach the model's plateau ({plateau}x), so this is the ramp up to it "
                            "(this run reaches its plateau at larger sizes than the model does), not a slow rank"
                            ).format(plateau=_f(plateau, ".2f"))
    else:
        mid["verdict"] += _("; the large sizes reach the {level} ({value} GB/s), so this is the ramp up to it (this "
                            "run reaches its plateau at larger sizes than the model does), not a slow rank").format(
            level=_level_name(level), value=_f(big["level"]["levels_GBps"][level], ".0f"))
    small = by.get("latency")
    if plateau is not None and small and nodes > 1 and small["time_ratio"] >= 2:
        mid["verdict"] += _("; each operation costs at least {floor} us ({ratio}x the model's time), which moves the "
                            "ramp to larger sizes").format(floor=_f(small["floor_us"], ".0f"),
                                                          ratio=_f(small["time_ratio"], ".1f"))


def _level_name(level: str) -> str:
    """A plateau level's name in the reader's language ("ring level", "level of the node's NICs")."""
    return {"pcie": _("PCIe level"), "ring": _("ring level"), "nvls": _("NVLS level"),
            "nic": _("level of the node's NICs")}.get(level, level)

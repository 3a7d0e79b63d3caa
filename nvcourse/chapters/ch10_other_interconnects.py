"""Chapter 10 — other interconnects and collective numerics: a sourced contrast table and a small numerics lab.

Facts come from ``nvcourse/data/interconnects.toml`` (quoted, not modelled). The numerics lab sums real numbers
the way a ring all-reduce does in BF16 (a rounding to BF16 at every hop) and the way NCCL 2.27's symmetric kernels
do (FP32 accumulation, one rounding), with BF16 rounding emulated bit for bit in NumPy.
"""

from __future__ import annotations

import html

import numpy as np

from nvcourse import _data, catalog
from nvcourse._validate import integer
from nvcourse.i18n import data_text, language, number
from nvcourse.i18n import translate as _
from nvcourse.tables import table_html

__all__ = ["raw", "pair_bandwidth_rows", "contrast_table_html", "to_bf16", "ring_vs_fp32_error", "order_changes_bits",
           "numerics_box", "sources_html", "pair_bandwidth_lines", "numerics_lines"]


def raw() -> dict:
    """The chapter's data file, parsed (read-only)."""
    return _data.load("interconnects")


def pair_bandwidth_rows() -> list[dict]:
    """Per-direction GB/s a GPU can send to ONE peer and to all peers at once: an MI300X full mesh (one of 7 links
    per pair) against an H100 behind NVSwitch (every link reaches every peer), from the data and the catalog."""
    m = raw()["mi300x"]
    link = m["link_GBps_bidir"] / 2
    h100 = catalog.get_system("dgx-h100")
    nv = h100.scaleup_GBps_dir
    return [{"system": _("8 x MI300X (Infinity Fabric full mesh)"), "one_peer_GBps": link,
             "all_peers_GBps": link * m["links_per_gpu"]},
            {"system": _("8 x H100 (NVSwitch)"), "one_peer_GBps": nv, "all_peers_GBps": nv}]


def contrast_table_html() -> str:
    """What each scale-up fabric is and how collectives use it (data file, sourced)."""
    d = raw()
    m, u, t, g, r = d["mi300x"], d["ualink"], d["tpu_v4"], d["gb300"], d["rubin"]
    rows = [
        ["AMD Instinct MI300X", _("{gpus} GPUs, each with {links} Infinity Fabric (xGMI) links, one to every peer: "
                                  "a full mesh, no switch").format(gpus=m["gpus"], links=m["links_per_gpu"]),
         _("{library}: NCCL's API; algorithms that use all links at once").format(library=m["library"])],
        ["UALink 1.0", _("open load/store scale-up link, {lane}G per lane, switches for up to {most} accelerators "
                         "per pod").format(lane=u["lane_Gbps"], most=number(u["max_accelerators"], ",")),
         _("a specification; products to come")],
        ["Google TPU v4", _("{chips} chips, {links} ICI links each, {topology}").format(
            chips=number(t["chips"], ","), links=t["ici_links_per_chip"], topology=t["topology"]),
         _("XLA collectives along the torus dimensions; no packet switch, no NCCL")],
        ["NVIDIA GB300 NVL72", _("NVL72 NVLink domain; one ConnectX-8 ({rate} Gb/s) per GPU").format(
            rate=g["nic_Gbps_per_gpu"]), _("NCCL; twice GB200's NIC rate per GPU")],
        [f"NVIDIA {r['name']} / Rubin Ultra", _("rack-scale NVLink domains (2026, 2027); announced at GTC 2025 as "
                                                "{first} and {ultra}, counting GPU dies, a naming NVIDIA dropped for "
                                                "{name}").format(first=r["announced_as"],
                                                                 ultra=r["ultra_announced_as"], name=r["name"]),
         _("roadmap, not modelled here")],
    ]
    return table_html([_("system"), _("scale-up fabric"), _("collectives")],
                      [[html.escape(c) for c in r] for r in rows], align_numbers=False)


def to_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to BF16 (round to nearest, ties to even) and return them as float32."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32)
    rounded = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def _inputs(ranks: int, elements: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return to_bf16(rng.standard_normal((ranks, elements)).astype(np.float32))


def ring_vs_fp32_error(ranks: int, *, elements: int = 20_000, seed: int = 0) -> dict[str, float]:
    """RMS error of a BF16 all-reduce against the exact sum, relative to the sum's RMS: summed as a ring does in BF16
    (the partial sum rounded to BF16 at each of ``ranks - 1`` hops) and with FP32 accumulation and one final rounding
    (NCCL 2.27's symmetric kernels). Inputs: seeded normal values already in BF16."""
    n = integer("ranks", ranks, minimum=2, maximum=1024)
    x = _inputs(n, integer("elements", elements, minimum=1), seed)
    exact = x.astype(np.float64).sum(axis=0)
    ring = x[0].copy()
    for k in range(1, n):
        ring = to_bf16(ring + x[k])
    fp32 = to_bf16(x.sum(axis=0, dtype=np.float32))
    scale = float(np.sqrt(np.mean(exact**2)))
    return {"ring_bf16": float(np.sqrt(np.mean((ring - exact) ** 2))) / scale,
            "fp32_accumulate": float(np.sqrt(np.mean((fp32 - exact) ** 2))) / scale}


def order_changes_bits(ranks: int, *, elements: int = 20_000, seed: int = 0) -> float:
    """Share of elements whose BF16 ring result changes when the ring starts at another rank (another algorithm,
    channel count or GPU count changes the order the same way): floating-point addition is not associative."""
    n = integer("ranks", ranks, minimum=2, maximum=1024)
    x = _inputs(n, integer("elements", elements, minimum=1), seed)
    a, b = x[0].copy(), x[n - 1].copy()
    for k in range(1, n):
        a = to_bf16(a + x[k])
        b = to_bf16(b + x[n - 1 - k])
    return float(np.mean(a != b))


def numerics_box():
    """A slider of ranks: the BF16 ring's error and FP32 accumulation's, and how many results change with order."""
    import ipywidgets as w

    from nvcourse.widgets import Dashboard

    ranks = w.SelectionSlider(options=[2, 4, 8, 16, 32, 64, 72, 128], value=8, description=_("ranks"),
                              continuous_update=False)

    def render(ranks):
        e = ring_vs_fp32_error(ranks)
        ratio = e["ring_bf16"] / e["fp32_accumulate"]
        # two ranks make one addition, rounded once either way: "1.0x less" would read as a difference
        than_ring = (_("{ratio}x less").format(ratio=number(ratio, ".1f")) if round(ratio, 1) > 1.0
                     else _("the same: one addition, rounded once either way"))
        changed = order_changes_bits(ranks)
        share = f"{changed:.0%}" if language() != "fr" else number(100 * changed, ".0f") + "\u00a0%"
        return "<p>" + _("{ranks} ranks, BF16 all-reduce: ring (rounded at every hop) error {ring} of the sum; FP32 "
                         "accumulation {fp32} ({than_ring}); {share} of results change when the ring starts "
                         "elsewhere.").format(ranks=ranks, ring=f"{e['ring_bf16']:.2e}",
                                              fp32=f"{e['fp32_accumulate']:.2e}", than_ring=than_ring,
                                              share=share) + "</p>"

    return Dashboard({"ranks": ranks}, render, columns=1)


def sources_html() -> str:
    """Every source the chapter's facts come from, once, as a list of links (titles say what each supports)."""
    items = "".join(f'<li><a href="{html.escape(s["url"])}" target="_blank">'
                    f'{html.escape(data_text(s["title"]))}</a></li>' for s in raw()["sources"].values())
    return f"<ul>{items}</ul>"


def pair_bandwidth_lines() -> str:
    """:func:`pair_bandwidth_rows` as text: per system, GB/s (10⁹ B/s) per direction to one peer and to all peers."""
    return "\n".join(_("{system}: to one peer {one} GB/s, to all peers {all} GB/s (per direction)").format(
        system=f"{r['system']:40s}", one=number(r["one_peer_GBps"], "5.0f"), all=number(r["all_peers_GBps"], "5.0f"))
        for r in pair_bandwidth_rows())


def numerics_lines(ranks: tuple[int, ...] = (2, 8, 72)) -> str:
    """For each rank count: the relative RMS error of a BF16 ring all-reduce's sum and of one that accumulates in
    FP32 (:func:`ring_vs_fp32_error`), and the share of results that change with the ring's start rank."""
    lines = []
    for n in ranks:
        e, changed = ring_vs_fp32_error(n), order_changes_bits(n)
        share = f"{changed:.0%}" if language() != "fr" else number(100 * changed, ".0f") + "\u00a0%"
        lines.append(_("{n} ranks: ring in BF16 {bf16}, FP32 accumulation {fp32} (relative RMS error of the sum); "
                       "{share} of results change with the ring's start").format(
            n=f"{n:3d}", bf16=number(e["ring_bf16"], ".2e"), fp32=number(e["fp32_accumulate"], ".2e"), share=share))
    return "\n".join(lines)

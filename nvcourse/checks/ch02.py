"""Checkers for chapter 02 — PCIe vs NVLink, the alpha-beta model.

Expected values come from :mod:`nvcourse.linkmodel` (unit-tested) on every catalog link, plus random
(α, β, n) drawn from a seeded generator.
"""

from __future__ import annotations

from .. import catalog, linkmodel
from ..i18n import localize_numbers
from ..i18n import translate as _
from ._answers import Question, answer, register
from ._core import Case, Result, check_function, rng_for, safe_checker

__all__ = ["answer", "half_bandwidth_size", "effective_bandwidth"]


def _link_inputs(name: str, extra: int = 4) -> list[tuple[float, float, str]]:
    """(α s, β B/s, label) of every catalog link (one link), of an H100's NVLink 4 links, and random ones."""
    out = []
    for link_id in catalog.links():
        p = linkmodel.link_params(link_id)
        out.append((p.alpha_s, p.beta_Bps, link_id))
    h100 = _h100_nvlinks()
    out.append((h100.alpha_s, h100.beta_Bps, f"{_H100_LINKS} x nvlink4"))
    rng = rng_for(name)
    for a, b in zip(10 ** rng.uniform(-7, -4, extra), 10 ** rng.uniform(8, 12, extra)):
        out.append((float(a), float(b), "random"))
    return out


@safe_checker
def half_bandwidth_size(fn) -> Result:
    """``fn(alpha_s, beta_Bps)`` → n½ in bytes (the size whose effective bandwidth is β/2)."""
    cases = []
    for a, b, label in _link_inputs("half_bandwidth_size"):
        exp = linkmodel.half_bandwidth_size(a, b)
        cases.append(Case((a, b), exp, {
            _("α·β/2 is not it: n½ is the size where B_eff = β/2, i.e. where n/β = α (solve β·n/(n+αβ) = β/2)."):
                exp / 2,
            _("You divided: n½ = α × β (seconds × bytes/second = bytes)."): b / a,
            _("n½ = α × β, not β/α or α/β."): a / b,
            _("Twice n½: 2αβ reaches 2/3 of β. At n½ the time at bandwidth, n/β, equals the latency α, so n½ = αβ."):
                2 * exp,
        }, label))
    return check_function("half_bandwidth_size", fn, ["alpha_s", "beta_Bps"], cases, what="a number of bytes",
                          hint=_("Set B_eff(n) = β·n/(n + αβ) equal to β/2 and solve for n."),
                          success=_("n½ = αβ: the faster the link, the bigger a message must be to use it."))


@safe_checker
def effective_bandwidth(fn) -> Result:
    """``fn(nbytes, alpha_s, beta_Bps)`` → bytes per second actually reached by one message of ``nbytes``."""
    cases = []
    rng = rng_for("effective_bandwidth")
    sizes = [8, 4096, 65536, 2**20, 64 * 2**20, 2**30]
    for i, (a, b, label) in enumerate(_link_inputs("effective_bandwidth")):
        for n in (sizes[i % len(sizes)], int(2 ** rng.uniform(3, 32))):
            exp = linkmodel.effective_bandwidth(n, a, b)
            cases.append(Case((n, a, b), exp, {
                _("You returned β: the latency α is missing (B_eff = n / (α + n/β))."): b,
                _("You returned the transfer time; divide the size by it: B_eff = n / t(n)."): a + n / b,
                _("You returned n/α: that ignores the time spent at bandwidth β."): n / a,
                _("Bits vs bytes: nbytes is already in bytes."): 8 * exp,
            }, label))
    return check_function("effective_bandwidth", fn, ["nbytes", "alpha_s", "beta_Bps"], cases,
                          what="a rate in bytes per second",
                          hint=_("t(n) = α + n/β is the time; the effective bandwidth is the size divided by the "
                                 "time."),
                          success=_("Tiny messages get n/α; huge ones approach β."))


# ------------------------------------------------------------------------------------------------
# questions (the figures they quote come from the catalog)

_NDR_Gbps = f"{catalog.get_link('ib-ndr').line_Gbps_dir:g} Gb/s"
_H100_NVLINK = f"{catalog.get_gpu('h100').nvlink_GBps_bidir:g} GB/s"
_H100_LINKS = catalog.get_gpu("h100").nvlink_links

register(
    Question(
        "02.ndr_GBps",
        _("An InfiniBand NDR port is sold as {rate}. How many GB/s can it send per direction (line rate)?").format(
            rate=_NDR_Gbps),
        lambda: catalog.get_link("ib-ndr").line_GBps_dir,
        unit="GB/s",
        hint=_("A network port's Gb/s is its rate per direction, in bits: divide by 8 for bytes."),
        variants=lambda: {
            _("That is gigabits: divide by 8 to get gigabytes."): catalog.get_link("ib-ndr").line_Gbps_dir,
            _("A network port's Gb/s is already per direction: do not halve it."):
                catalog.get_link("ib-ndr").line_GBps_dir / 2,
            _("That is the achievable rate (line × efficiency); the question asks for the line rate."):
                catalog.get_link("ib-ndr").achievable_GBps_dir,
        },
        explain=lambda: localize_numbers(_(
            "{gbits} Gb/s ÷ 8 = {gbytes} GB/s each way; NCCL reaches about {share} of it.").format(
            gbits=f"{catalog.get_link('ib-ndr').line_Gbps_dir:g}",
            gbytes=f"{catalog.get_link('ib-ndr').line_GBps_dir:g}",
            share=f"{catalog.get_link('ib-ndr').efficiency:.0%}")),
    )
)

register(
    Question(
        "02.h100_nvlink_dir",
        _("NVIDIA quotes {rate} of NVLink for one H100. How many GB/s can it send to its peers, per direction "
          "(line rate)?").format(rate=_H100_NVLINK),
        lambda: catalog.get_system("dgx-h100").scaleup_GBps_dir,
        unit="GB/s",
        hint=_("Per direction = links per GPU × one link's rate per direction (catalog); NVIDIA's figure adds both "
               "directions."),
        variants=lambda: {
            _("{rate} adds both directions: per direction it is half.").format(rate=_H100_NVLINK):
                catalog.get_gpu("h100").nvlink_GBps_bidir,
            _("A factor 2 the wrong way: {rate} already adds both directions, so divide it by 2, do not "
              "multiply.").format(rate=_H100_NVLINK): 2 * catalog.get_gpu("h100").nvlink_GBps_bidir,
            _("That is one NVLink 4 link; an H100 has {n} of them.").format(n=_H100_LINKS):
                catalog.get_link("nvlink4").line_GBps_dir,
            _("That is the achievable rate (× efficiency); the question asks for the line rate."): catalog.get_system(
                "dgx-h100"
            ).scaleup_achievable_GBps_dir,
        },
        explain=lambda: localize_numbers(_(
            "{links} links × {rate} GB/s = {total} GB/s per direction; '{bidir} GB/s' counts both directions.").format(
            links=catalog.get_system("dgx-h100").links_per_gpu, rate=f"{catalog.get_link('nvlink4').line_GBps_dir:g}",
            total=f"{catalog.get_system('dgx-h100').scaleup_GBps_dir:g}",
            bidir=f"{catalog.get_gpu('h100').nvlink_GBps_bidir:g}")),
    )
)


def _h100_nvlinks() -> linkmodel.LinkParams:
    return linkmodel.link_params(catalog.get_gpu("h100").nvlink, links=_H100_LINKS)


def _latency_bound_64k() -> str:
    p = _h100_nvlinks()
    return "a" if 64 * 2**10 < p.half_bandwidth_bytes else "b"


register(
    Question(
        "02.bound_64k",
        _("A 64 KiB message between two H100s over all {n} NVLink 4 links (β = line × efficiency) is...").format(
            n=_H100_LINKS),
        _latency_bound_64k,
        choices={"a": _("latency-bound (n < n½)"), "b": _("bandwidth-bound (n > n½)")},
        wrong_choice={
            key: _("Compute n½ = αβ for {n} NVLink 4 links and compare it with 64 KiB = 65,536 B.").format(
                n=_H100_LINKS) for key in ("b", "a")
        },
        explain=lambda: localize_numbers(_(
            "n½ = αβ ≈ {half} MB ≫ 64 KiB: a faster link would not make this message noticeably faster.").format(
            half=f"{_h100_nvlinks().half_bandwidth_bytes / 1e6:.2f}")),
    )
)

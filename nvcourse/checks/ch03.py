"""Checkers for chapter 03 — topologies and NVSwitch (bisection bandwidth).

For the catalog's switched systems the expected value is :func:`nvcourse.topology.bisection_bandwidth` of
the system's graph (a min-cut computation, tested by hand); random inputs use the hand formula.
"""

from __future__ import annotations

from .. import catalog
from ..i18n import localize_numbers
from ..i18n import translate as _
from ..topology import bisection_bandwidth, build_system_graph
from ._answers import Question, answer, register
from ._core import Case, Result, check_function, rng_for, safe_checker

__all__ = ["answer", "switch_bisection", "ring_bisection"]


def _switch_systems() -> list[catalog.System]:
    return [s for s in catalog.systems().values() if s.topology in ("nvswitch", "nvl72")]


@safe_checker
def switch_bisection(fn) -> Result:
    """``fn(gpus, links_per_gpu, link_GBps_dir)`` → bisection bandwidth (GB/s per direction) of a
    non-blocking NVSwitch domain."""
    cases = []
    for s in _switch_systems():
        g, L, b = s.gpus_per_domain, s.links_per_gpu, s.link.line_GBps_dir
        exp = bisection_bandwidth(build_system_graph(s.id)).GBps_dir
        cases.append(Case((g, L, b), exp, {
            _("You counted every GPU: only the g/2 GPUs on one side send across the cut."): g * L * b,
            _("That is both directions added; give GB/s per direction."): 2 * exp,
        }, s.id))
    rng = rng_for("switch_bisection")
    for g, L, b in zip(rng.integers(1, 37, 4) * 2, rng.integers(1, 19, 4), rng.choice([20.0, 25.0, 50.0], 4)):
        g, L, b = int(g), int(L), float(b)
        exp = g / 2 * L * b
        cases.append(Case((g, L, b), exp, {
            _("You counted every GPU: only the g/2 GPUs on one side send across the cut."): g * L * b,
        }, "random"))
    return check_function("switch_bisection", fn, ["gpus", "links_per_gpu", "link_GBps_dir"], cases,
                          what="GB/s per direction",
                          hint=_("Split the GPUs in two halves: everything one half sends to the other leaves through "
                               "its own links into a non-blocking switch."),
                          success=_("A non-blocking switch's bisection is set by the GPUs' own links, not the switch."))


@safe_checker
def ring_bisection(fn) -> Result:
    """``fn(n, link_GBps_dir)`` → bisection bandwidth (GB/s per direction) of a ring of n ≥ 4 GPUs (n even)."""
    cases = []
    for n in (4, 6, 8, 16, 72):
        for b in (25.0, 50.0):
            exp = 2 * b  # any balanced cut of a cycle crosses at least two of its edges
            cases.append(Case((n, b), exp, {
                _("A ring closes on itself: any cut into two halves crosses two links, not one."): b,
                _("Only the two links cut by the best split count, not n/2 of them."): n / 2 * b if n != 4 else None,
            }))
    return check_function("ring_bisection", fn, ["n", "link_GBps_dir"], cases, what="GB/s per direction",
                          hint=_("Draw 8 GPUs in a circle and cut it into two halves of 4: how many links do you cut?"),
                          success=_("A ring's bisection does not grow with n: why large rings need switches."))


def _h100_bisection() -> float:
    return bisection_bandwidth(build_system_graph("dgx-h100")).GBps_dir


register(
    Question(
        "03.dgx_h100_bisection",
        _("Bisection bandwidth of one DGX H100 (8 GPUs, NVSwitch), GB/s per direction?"),
        _h100_bisection,
        unit="GB/s",
        hint=_("Cut the 8 GPUs into two halves of 4: each GPU of one half sends its whole NVLink rate (per "
               "direction) across the cut."),
        variants=lambda: {
            _("That adds both directions (NVIDIA's headline style); give one direction."): 2 * _h100_bisection(),
            _("That counts all 8 GPUs; only the 4 on one side send across the cut."): 2 * _h100_bisection(),
            _("That is one GPU's NVLink bandwidth: 4 GPUs send across the cut."): catalog.get_system(
                "dgx-h100"
            ).scaleup_GBps_dir,
        },
        explain=lambda: localize_numbers(_("4 GPUs × {links} links × {rate} GB/s = {total} GB/s per direction.").format(
            links=catalog.get_system("dgx-h100").links_per_gpu, rate=f"{catalog.get_link('nvlink4').line_GBps_dir:g}",
            total=f"{_h100_bisection():g}")),
    )
)

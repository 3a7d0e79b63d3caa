"""Checkers for chapter 06d, the bring-up and fault runbook.

The inputs are real lines from public pastes (the ``%%``-headed fixtures of the runbook and the threads named in
``nvcourse/data/runbook.toml``); expected answers come from :mod:`nvcourse.runbook` (the PCIe
arithmetic, the drill's answer) or from the rule each exercise states, never typed in as results.
Use in a notebook as ``from nvcourse.checks import ch06d as check``.
"""

from __future__ import annotations

from ..i18n import translate as _
from ..runbook import drill_verdict, link_fraction, raw
from ._core import (
    FAIL,
    PASS,
    TODO,
    Case,
    CheckError,
    Result,
    call_learner,
    check_function,
    fmt,
    learner_value,
    require_callable,
    safe_checker,
)

__all__ = ["acs_redirects", "lane_fraction", "gid_index", "drill"]

# ACSCtl lines as lspci prints them (the first two from NVIDIA/nccl#304, the third from NVIDIA/nccl#606, the
# fourth from NVIDIA/nccl#629), and whether peer-to-peer requests are redirected upstream (ReqRedir+ or CmpltRedir+).
_ACS = (
    ("ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-", True),
    ("ACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-", False),
    ("                ACSCtl: SrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-", False),
    ("\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-", True),
    ("ACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir+ UpstreamFwd- EgressCtrl- DirectTrans-", True),
)


def _try(fn, *args):
    try:
        return call_learner(fn, *args), None
    except CheckError:
        raise
    except Exception as exc:  # call_learner wraps what the learner's code raised (its .exc)
        inner = getattr(exc, "exc", exc)
        return None, _("raised {error}: {message}").format(error=type(inner).__name__, message=inner)


@safe_checker
def acs_redirects(fn) -> Result:
    """``fn(acsctl_line) -> bool``: does this bridge redirect peer-to-peer traffic to the root complex?"""
    require_callable("acs_redirects", fn, "acs_redirects")
    right, wrong, hint = [], [], ""
    for line, want in _ACS:
        got, err = _try(fn, line)
        shown = line.strip().replace("\t", " ")
        if err or not isinstance(got, bool):
            error = err or _("returned {got}, not True or False").format(got=fmt(got))
            wrong.append(_("{line}: your code {error}").format(line=shown, error=error))
            continue
        if got == want:
            right.append(f"{shown}: {want}")
            continue
        wrong.append(_("{line}: returned {got}, expected {want}").format(line=shown, got=got, want=want))
        if got and not want and "SrcValid+" in line:
            hint = hint or _("SrcValid+ only checks who sent a request; it is ReqRedir+ and CmpltRedir+ that send "
                             "peer-to-peer requests and completions up to the root complex.")
        elif not got and want and "ReqRedir-" in line:
            hint = hint or _("Completions redirected (CmpltRedir+) break P2P too: look at both redirect bits.")
    if not wrong:
        return Result("acs_redirects", PASS, _("right on all {n} real ACSCtl lines.").format(n=len(_ACS)),
                      right=right,
                      notes=[_("Fix: turn ACS off on the bridges between GPUs and NICs (BIOS or setpci at every "
                               "boot); in a VM that needs ACS, enable ATS instead.")])
    return Result("acs_redirects", FAIL, _("wrong on {bad} of {n} lines.").format(bad=len(wrong), n=len(_ACS)),
                  right=right, wrong=wrong, hint=hint or _("Look for '+' after ReqRedir or CmpltRedir."))


@safe_checker
def lane_fraction(fn) -> Result:
    """``fn(cap_GTps, cap_width, sta_GTps, sta_width) -> fraction`` of the capable per-direction bandwidth kept."""
    combos = [(16.0, 16, 2.5, 16), (5.0, 16, 5.0, 1), (16.0, 16, 16.0, 8), (32.0, 16, 16.0, 16),
              (32.0, 16, 8.0, 4), (8.0, 16, 5.0, 16), (32.0, 16, 2.5, 8)]
    cases = [Case(c, link_fraction(*c), {
        _("You compared transfer rates only: below 8 GT/s each byte costs 10 bits on the wire (8b/10b), from "
          "8 GT/s 130 bits per 128 (128b/130b)."): (c[2] * c[3]) / (c[0] * c[1]),
        _("That is the inverse: the capable link over the trained one."): 1 / link_fraction(*c),
        _("You left out the lanes: bandwidth scales with the width as well as the speed."):
            link_fraction(c[0], c[1], c[2], c[1]) if c[1] != c[3] else None,
    }) for c in combos]
    return check_function("lane_fraction", fn, ["cap_GTps", "cap_width", "sta_GTps", "sta_width"], cases,
                          what="a fraction", rtol=1e-3,
                          hint=_("GB/s per direction = lanes × GT/s × encoding / 8 (8/10 up to 5 GT/s, 128/130 "
                                 "from 8 GT/s); divide the trained link's by the capable link's."),
                          success=_("The riser in the cited case kept about an eighth of its link: a GPU there "
                                    "feeds a ring at a fraction of its peers' rate, and the whole ring waits for it."))


# GID tables as (index, gid, version): the first from NVIDIA/nccl#769 (ibv_devinfo), the second from
# NVIDIA/nccl#1510 (show_gids, one HCA's rows). The answer is the routable IPv4-mapped address of type RoCE v2.
_GIDS = (
    [(0, "fe80:0000:0000:0000:0ac0:ebff:feda:1cfb", "v1"), (1, "fe80::ac0:ebff:feda:1cfb", "v2"),
     (2, "0000:0000:0000:0000:0000:ffff:c800:d106", "v1"), (3, "::ffff:200.0.209.6", "v2")],
    [(4, "0000:0000:0000:0000:0000:ffff:0a0c:0015", "v1"), (5, "0000:0000:0000:0000:0000:ffff:0a0c:0015", "v2"),
     (6, "fe80:0000:0000:0000:9cbb:b7ff:feb3:937a", "v1"), (7, "fe80:0000:0000:0000:9cbb:b7ff:feb3:937a", "v2")],
)
_GID_ANSWERS = (3, 5)


@safe_checker
def gid_index(fn) -> Result:
    """``fn(rows: list[(index, gid, version)]) -> index`` for NCCL_IB_GID_INDEX on a routed RoCE fabric."""
    require_callable("gid_index", fn, "gid_index")
    right, wrong, hint = [], [], ""
    for rows, want in zip(_GIDS, _GID_ANSWERS, strict=True):
        got, err = _try(fn, list(rows))
        label = _("table with indices {first}-{last}").format(first=rows[0][0], last=rows[-1][0])
        if err:
            wrong.append(_("{label}: your code {error}").format(label=label, error=err))
            continue
        if got == want:
            right.append(f"{label}: {want}")
            continue
        wrong.append(_("{label}: returned {got}, expected {want}").format(label=label, got=fmt(got), want=want))
        picked = {r[0]: r for r in rows}.get(got)
        if picked and picked[1].startswith("fe80"):
            hint = _("fe80:... is a link-local address: it is not routed between switches (NVIDIA/nccl#769).")
        elif picked and picked[2] != "v2":
            hint = _("That entry is RoCE v1 (layer 2 only); a routed fabric needs RoCE v2 (UDP/IP).")
    if not wrong:
        return Result("gid_index", PASS, _("right on both real GID tables."), right=right,
                      notes=[_("NCCL 2.21 and later pick this entry themselves when NCCL_IB_GID_INDEX is unset "
                               "(NCCL_IB_ADDR_FAMILY=AF_INET6 for IPv6); on an older NCCL set the same index on "
                               "every node, and test it with ib_write_bw -x <index> before NCCL.")])
    return Result("gid_index", FAIL, _("wrong on {bad} of {n} tables.").format(bad=len(wrong), n=len(_GIDS)),
                  right=right, wrong=wrong,
                  hint=hint or _("Pick the RoCE v2 entry whose GID holds the IPv4 address (::ffff:a.b.c.d or "
                                 "0000:...:ffff:xxxx:xxxx)."))


@safe_checker
def drill(cause, steps=None) -> Result:
    """The drill: ``cause`` is a signature id from the runbook, ``steps`` the commands run, in order; or ``cause``
    is a function returning ``(cause, steps)``."""
    if steps is None and callable(cause):
        value = learner_value(cause, "drill")
        if isinstance(value, Result):  # the stub (not done) or an exception
            return value
        if not (isinstance(value, (tuple, list)) and len(value) == 2):
            raise CheckError(_("your answer is {value}; it must be (cause, steps).").format(value=repr(value)))
        cause, steps = value
    sigs = raw()["signatures"]
    if cause is None or steps is None:
        raise CheckError(_("set `cause` to a signature id and `steps` to the list of steps you ran."), status=TODO)
    if cause not in sigs:
        return Result("drill", FAIL, _("{cause} is not a signature id of the runbook.").format(cause=repr(cause)),
                      hint=_("Use one of: {ids}.").format(ids=", ".join(sigs)))
    if not isinstance(steps, (list, tuple)) or not all(s in raw()["drill"]["steps"] for s in steps):
        return Result("drill", FAIL, _("`steps` must be a list of step names from the drill's dropdown."),
                      hint=_("Step names: {names}.").format(names=", ".join(raw()["drill"]["steps"])))
    ok, words = drill_verdict(cause, list(steps))
    if ok:
        return Result("drill", PASS, words, notes=[raw()["drill"]["why"]])
    return Result("drill", FAIL, words, hint=_("Which step's output names a layer without needing another? Read "
                                               "the NCCL log's 'GPU Direct RDMA' line to the end: does it give a "
                                               "distance?"))

"""Checkers for chapter 06b, NCCL in practice: diagnose real nccl-tests outputs and NCCL logs.

Expected answers are computed by the course's readers (:mod:`nvcourse.nccl`) on the real outputs shipped in
``nvcourse/data/nccl`` and from the catalog, never typed in. Importing this module registers its questions
(``check.answer("06b.quote_busbw", ...)``); the function checkers are :func:`gdr_state`, :func:`nvls_state`
and :func:`slow_node`.
"""

from __future__ import annotations

import re
from itertools import combinations

from .. import catalog
from ..i18n import translate as _
from ..nccl.diagnose import cases
from ..nccl.ncclog import read_text as read_log
from ..nccl.nccltests import read_text as read_run
from ..nccl.samples import sample_text
from ._answers import Question, answer, register
from ._core import FAIL, PASS, CheckError, Result, call_learner, fmt, require_callable, rng_for, safe_checker

__all__ = ["answer", "gdr_state", "nvls_state", "slow_node", "sample", "unlabelled_sample", "pair_table"]


def sample(name: str) -> str:
    """Text of a shipped sample (:func:`nvcourse.nccl.samples.sample_text`)."""
    return sample_text(name)


def unlabelled_sample(name: str) -> str:
    """A sample as a quiz shows it: its ``%%`` header lines (which name the binary that ran) dropped, its source URL
    kept. The readers skip ``%%`` lines, so what they report is unchanged."""
    out = []
    for line in sample_text(name).splitlines():
        if not line.startswith("%%"):
            out.append(line)
        elif line[2:].strip().startswith("source:") and (url := re.search(r"https?://[^\s)\"',;]+", line)):
            out.append(f"%% source: {url.group(0)}")
    return "\n".join(out) + "\n"


def _run(name: str):
    return read_run(sample(name))


def _nic_GBps(system: str) -> tuple[float, float, float]:
    """(achievable per node, line per node, achievable per GPU) NIC GB/s for a catalog system."""
    s = catalog.get_system(system)
    link = catalog.get_link(s.nic_link)
    node = link.line_GBps_dir * link.efficiency * s.nics_per_host
    return node, link.line_GBps_dir * s.nics_per_host, node / s.gpus_per_host


# ---------------------------------------------------------------- questions on real outputs
_A100 = "a100_2nodes_16ranks_oke.txt"

register(Question(
    "06b.quote_busbw",
    _("2 nodes x 8 A100 (a100_2nodes_16ranks_oke.txt): which busbw in GB/s describes what this fabric delivers "
      "to large all-reduces?"),
    lambda: _run(_A100).rows[-1]["oop_busbw_GBps"], unit="GB/s", rtol=0.01,
    variants=lambda: {
        _("That is `# Avg bus bandwidth`: the mean over every size, latency-bound ones (busbw ~0) included. "
          "Quote the large-size rows."): _run(_A100).avg_busbw_GBps,
        _("That is algbw (S / time). busbw = algbw x 2(n-1)/n for all-reduce."):
            _run(_A100).rows[-1]["oop_algbw_GBps"],
        _("That is the smallest size's figure; the last rows are the bandwidth-bound ones."):
            _run(_A100).rows[0]["oop_busbw_GBps"],
    },
    hint=_("Read the busbw column of the largest sizes, not the footer."),
    explain=_("Large sizes are bandwidth-bound: their busbw is the figure to compare with links. The footer "
              "averages all sizes and is dominated by the small, latency-bound ones."),
))

register(Question(
    "06b.which_op",
    _("sendrecv_a40_2nodes_truncated.txt never names its test. Which one ran?"),
    lambda: "c",
    choices={"a": "all_reduce_perf", "b": "broadcast_perf", "c": "sendrecv_perf", "d": "all_gather_perf"},
    wrong_choice={
        "a": _("With 2 ranks all-reduce's factor 2(n-1)/n is also 1, so busbw = algbw fits; but nccl-tests checks "
               "in-place all-reduce, and here every in-place #wrong is N/A."),
        "b": _("broadcast prints its root (0 by default); here root is -1."),
        "d": _("all_gather prints redop 'none' and busbw = algbw x (n-1)/n = half of algbw on 2 ranks."),
    },
    explain=_("busbw = algbw (factor 1), redop sum, root -1 and in-place not checked (N/A): sendrecv."),
))


def _top() -> float:
    return _run(_A100).rows[-1]["oop_busbw_GBps"]


register(Question(
    "06b.beats_nic",
    _("2 nodes x 8 A100 (a100_2nodes_16ranks_oke.txt) on nodes with a DGX A100's NICs (catalog dgx-a100: 8 x HDR "
      "200 Gb/s). The largest size's busbw is how many times what all 8 NICs of a node carry (line rate x "
      "efficiency)?"),
    lambda: _top() / _nic_GBps("dgx-a100")[0], rtol=0.02,
    variants=lambda: {
        _("You divided by the line rate; use the achievable rate (line x efficiency from the catalog)."):
            _top() / _nic_GBps("dgx-a100")[1],
        _("You compared with one NIC; across nodes a ring's busbw can reach all the node's NICs together."):
            _top() / _nic_GBps("dgx-a100")[2],
        _("Those are Gb/s: divide by 8 for GB/s."): _top() / (8 * 200),
        _("That is the inverse: NIC rate / busbw."): _nic_GBps("dgx-a100")[0] / _top(),
    },
    hint=_("Node NIC rate = 8 x catalog.get_link('ib-hdr').line_GBps_dir x efficiency."),
))

register(Question(
    "06b.beats_nic_cause",
    _("Why can busbw exceed the NICs' rate on this 2-node run?"),
    lambda: "b",
    choices={"a": _("a measurement error: busbw can never exceed a link"),
             "b": _("NCCL's tree on 2 nodes sends about S per node across the network instead of the ring's "
                    "2S(n-1)/n"),
             "c": _("NVLS reduces data inside the NICs"), "d": _("NCCL compresses the data")},
    wrong_choice={"a": _("busbw is normalised with the ring's factor; an algorithm that moves fewer bytes over the "
                         "network than the ring can show busbw above the link."),
                  "c": _("NVLS reduces in the NVSwitch, inside a node; it does not shrink inter-node traffic by "
                         "itself."),
                  "d": _("NCCL does not compress.")},
    explain=lambda: _("Cited case: {url} (NCCL_ALGO=Ring measures the network).").format(
        url=cases()["tree_beats_nic"]["source"]),
))


# ---------------------------------------------------------------- function checkers on real logs
_GDR_LOGS = ("ib_cumem_gdrdma_2nodes_aks30.log", "efa_aws_libfabric_mpirun_tagged.log",
             "ib_v2_7_a100_gdr_env_nccl707.log", "h800_nvls_not_available_nccl892.log",
             "socket_lo_gdr_disabled_topo_nccl1053.log")
_NVLS_LOGS = ("h800_nvls_not_available_nccl892.log", "nvls_available_h100_2nodes_nccl1357.log",
              "ib_cumem_gdrdma_2nodes_aks30.log", "ib_v2_7_a100_gdr_env_nccl707.log")


def _try(fn, arg):
    try:
        return call_learner(fn, arg), None
    except CheckError:
        raise
    except Exception as exc:  # call_learner wraps what the learner's code raised (its .exc)
        inner = getattr(exc, "exc", exc)
        return None, _("raised {error}: {message}").format(error=type(inner).__name__, message=inner)


def _gdr_hint(name: str, got, want) -> str:
    if name.startswith("socket_lo") and got is True:
        return _("'GPU Direct RDMA Disabled' contains 'GPU Direct RDMA': read the whole line, it says Disabled.")
    if want is None and got is False:
        return _("A log with no network connection lines says nothing about GDR: return None, not False.")
    if want is False and got is None:
        return _("Network channel lines ('via NET/...') without '/GDRDMA' are evidence that GDR is off: return "
                 "False.")
    if want is True and got is not True:
        return _("Look for 'via NET/<net>/<dev>/GDRDMA' in the channel lines.")
    return ""


@safe_checker
def gdr_state(fn) -> Result:
    """``fn(log_text) -> True | False | None``: GPUDirect RDMA on, off, or not shown by the log."""
    require_callable("gdr_state", fn, "gdr_state")
    return _check_logs("gdr_state", fn, _GDR_LOGS, lambda log: log.gdr, _gdr_hint, (True, False, None))


def _nvls(log) -> str:
    if log.nvls["supported"] is False or log.nvls["channels"] == 0:
        return "off"
    if log.nvls["supported"] is True:
        return "on"
    return "unknown"


def _nvls_hint(name: str, got, want) -> str:
    if want == "off" and got == "on":
        return _("NCCL_ALGO lists NVLS, but what NCCL did is in 'NVLS multicast support is ...' and '... nvls "
                 "channels'.")
    if want == "unknown" and got == "off":
        return _("Absence of NVLS lines is not evidence (a grep-filtered or 2.7-era log): return 'unknown'.")
    if want == "on" and got != "on":
        return _("'NVLS multicast support is available' (and NVLS Head lines) mean NVLS is on.")
    return ""


@safe_checker
def nvls_state(fn) -> Result:
    """``fn(log_text) -> 'on' | 'off' | 'unknown'``."""
    require_callable("nvls_state", fn, "nvls_state")
    return _check_logs("nvls_state", fn, _NVLS_LOGS, _nvls, _nvls_hint, ("on", "off", "unknown"))


def _check_logs(name, fn, files, truth, hint_for, allowed) -> Result:
    right, wrong, hints = [], [], []
    for f in files:
        want = truth(read_log(sample(f)))
        got, err = _try(fn, sample(f))
        if err:
            wrong.append(_("{file}: your code {error}").format(file=f, error=err))
            continue
        if not any(got is a or (isinstance(a, str) and got == a) for a in allowed):
            wrong.append(_("{file}: returned {got}; allowed: {allowed}").format(
                file=f, got=fmt(got), allowed=", ".join(map(repr, allowed))))
            continue
        if got is want or (isinstance(want, str) and got == want):
            right.append(f"{f}: {want!r}")
        else:
            wrong.append(_("{file}: returned {got}, the log shows {want}").format(file=f, got=repr(got),
                                                                                 want=repr(want)))
            hints.append(hint_for(f, got, want))
    if not wrong:
        return Result(name, PASS, _("right on all {n} real logs.").format(n=len(files)), right=right)
    hint = next((h for h in hints if h), _("Compare your answer with the lines of that log."))
    return Result(name, FAIL, _("wrong on {bad} of {n} real logs.").format(bad=len(wrong), n=len(files)),
                  right=right, wrong=wrong, hint=hint)


# ---------------------------------------------------------------- find the slow node
def pair_table(slow: str, nodes: int = 5, seed: int = 0, noise: float = 0.05) -> dict[tuple[str, str], float]:
    """2-node all-reduce busbw (GB/s) for every pair of nodes n1..nN; pairs with ``slow`` run at the bad level.

    The two levels are the ones reported in the cited case (nccl-tests#106); the node names are made up.
    """
    c = cases()["slow_rank"]
    rng = rng_for(f"pair_table{seed}")
    names = [f"n{i}" for i in range(1, nodes + 1)]
    out = {}
    for a, b in combinations(names, 2):
        level = c["bad_pair_busbw_GBps"] if slow in (a, b) else c["good_pair_busbw_GBps"]
        out[(a, b)] = round(float(level * (1 + rng.uniform(-noise, noise))), 2)
    return out


@safe_checker
def slow_node(fn) -> Result:
    """``fn(pairs: dict[(node, node), busbw_GBps]) -> node``: the node that makes its pairs slow."""
    require_callable("slow_node", fn, "slow_node")
    right, wrong, hint = [], [], ""
    for seed, (slow, n) in enumerate((("n3", 5), ("n1", 4), ("n6", 8), ("n2", 6))):
        table = pair_table(slow, n, seed)
        got, err = _try(fn, dict(table))
        if err:
            wrong.append(_("{n} nodes: your code {error}").format(n=n, error=err))
            continue
        if isinstance(got, (tuple, list)):
            wrong.append(_("{n} nodes: returned {got}, a pair").format(n=n, got=repr(got)))
            hint = _("A pair is not a node: the slow node is the one that belongs to every slow pair.")
        elif got == slow:
            right.append(_("{n} nodes: {slow}").format(n=n, slow=slow))
        else:
            worst = min(table, key=table.get)
            wrong.append(_("{n} nodes: returned {got}, the slow node is {slow}").format(n=n, got=repr(got),
                                                                                       slow=repr(slow)))
            if got in worst:
                hint = _("{got} is in the slowest pair {pair}, but its other pairs are fast: look for the node "
                         "whose pairs are all slow (e.g. the lowest mean busbw over its pairs).").format(
                    got=repr(got), pair=worst)
    status = PASS if not wrong else FAIL
    summary = (_("found the slow node every time.") if not wrong
               else _("wrong on {bad} of 4 tables.").format(bad=len(wrong)))
    return Result("slow_node", status, summary, right=right, wrong=wrong, hint=hint)

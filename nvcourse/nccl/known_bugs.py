"""NCCL bugs of a given release range that an nccl-tests paste can show, each tied to the NCCL commit that fixed it.

Only bugs the fix's own commit describes are here; the hint names the release that has the fix, so an engineer can
retry below the limit or on a newer NCCL. Sizes in bytes (nccl-tests' S).
"""

from __future__ import annotations

from typing import Any

from ..i18n import translate as _
from .ncclog_faults import version_tuple
from .nccltests_ranks import option_counts

__all__ = ["ALLGATHER_4G_FIX", "allgather_4g_hint"]

#: NCCL c38f174 (2020-02-12), "Fix Allgather operations above 4G with multiple GPUs per process. Fixes nccl-tests#37.
#: Direct offsets were still on 32 bits in the low-level primitives." (src/collectives/device/primitives.h: the
#: directOffset arguments went from int to ssize_t); first released in NCCL 2.6.4
ALLGATHER_4G_FIX = "https://github.com/NVIDIA/nccl/commit/c38f174bd436031dbc79dce19ff969f377976a8a"
_FIXED_IN = (2, 6, 4)
_4G = 2**32


def _before_fix(version: str | None) -> bool:
    """Whether NCCL ``version`` ("2.5.6") predates the fix; True when the paste does not print it."""
    v = version_tuple(version)
    return v is None or v < _FIXED_IN


def allgather_4g_hint(run: Any) -> str | None:
    """The hint for a wrong allgather of 4 GiB (2^32 B) or more run with several GPUs per process (nccl-tests ``-g``
    or the header's nGpus above 1) on an NCCL older than the fix, or of unknown version; None otherwise."""
    per_process = (run.header or {}).get("ngpus") or option_counts((run.launch or {}).get("args") or []).get("g", 1)
    if run.op != "allgather" or per_process < 2 or not _before_fix(run.nccl_version):
        return None
    if not any(r["bytes"] >= _4G for r in run.rows):
        return None
    hint = _("the size is 4 GiB (2^32 B) or more, in an allgather with {n} GPUs per process: NCCL before 2.6.4 kept "
             "the offsets of its low-level copy primitives on 32 bits, which broke allgather above 4 GiB with several "
             "GPUs per process (fixed in NCCL 2.6.4); retry just below 4 GiB, or with NCCL 2.6.4 or newer [{source}]"
             ).format(n=per_process, source=ALLGATHER_4G_FIX)
    if not run.nccl_version:  # the hint fits only an older NCCL, which the paste cannot confirm
        hint = _("if this NCCL is older than 2.6.4 (the paste does not print its version): {hint}").format(hint=hint)
    return hint

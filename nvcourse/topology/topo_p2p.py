"""The ``nvidia-smi topo -p2p`` matrix people paste after ``topo -m``: which GPU pairs have CUDA peer-to-peer.

``nvidia-smi topo -p2p r|w|n|a|p`` prints one capability (read, write, NVLink, atomics, prop) per GPU pair, in the
same layout as ``topo -m``: a header of GPU names, one row per GPU, ``X`` on the diagonal, and the statuses ``OK``,
``CNS`` (chipset not supported), ``GNS`` (GPU not supported), ``TNS`` (topology not supported), ``NS`` (not
supported), ``DR`` (disabled by regkey), ``U`` (unknown). NCCL reads the same NVML statuses, read and write, for two
GPUs of one host (``src/graph/paths.cc`` ``ncclTopoCheckP2p``): any status but OK turns peer-to-peer off between
them, so NCCL copies their data through host memory (its SHM transport); for GPUs joined by NVLink it stops with an
error instead, unless ``NCCL_IGNORE_DISABLED_P2P=1``.

:func:`read_p2p` finds such a matrix in the lines after the ``topo -m`` one and :func:`p2p_notes` says what it
means; anything that does not read as one is left alone (it is text after the matrix), never an error.
"""

from __future__ import annotations

import re

__all__ = ["P2P_STATUS", "read_p2p", "p2p_notes"]

#: nvidia-smi's P2P statuses (its legend), X aside
P2P_STATUS = {"OK": "status OK", "CNS": "chipset not supported", "GNS": "GPU not supported",
              "TNS": "topology not supported", "NS": "not supported", "DR": "disabled by regkey", "U": "unknown"}
_GPU = re.compile(r"^GPU\d+$")
_MODE = re.compile(r"(?:-p2p|--p2pstatus)\s+([rwnap])\b")
_CAPABILITY = {"r": "read", "w": "write", "n": "NVLink", "a": "atomics", "p": "prop"}


def _matrix_at(lines: list[str], at: int, gpus: list[str]) -> dict[tuple[str, str], str] | None:
    """The statuses of a -p2p matrix whose header is line ``at``, or None when what follows is not one."""
    head = lines[at].split()
    if len(head) < 2 or len(set(head)) != len(head) or not all(h in gpus for h in head):
        return None
    rows: dict[str, list[str]] = {}
    for line in lines[at + 1:]:
        toks = line.split()
        if not toks:
            if rows:
                break
            continue
        label, cells = toks[0], toks[1:]
        if label not in head or label in rows or len(cells) != len(head):
            break
        if any((c == "X") != (h == label) or (c != "X" and c not in P2P_STATUS) for h, c in zip(head, cells)):
            break
        rows[label] = cells
    if set(rows) != set(head):
        return None
    return {(a, b): rows[a][j] for a in head for j, b in enumerate(head) if a != b}


def read_p2p(lines: list[str], start: int, gpus: list[str]) -> tuple[dict[tuple[str, str], str], str | None]:
    """``({(a, b): status}, capability)`` from the first ``topo -p2p`` matrix at or after line ``start``, the
    capability (``'read'`` ...) when the command line above it names one; ``({}, None)`` when there is none."""
    for at in range(start, len(lines)):
        toks = lines[at].split()
        if toks and _GPU.match(toks[0]) and (statuses := _matrix_at(lines, at, gpus)) is not None:
            modes = [m.group(1) for line in lines[:at] for m in _MODE.finditer(line)]
            return statuses, (_CAPABILITY[modes[-1]] if modes else None)
    return {}, None


def p2p_notes(statuses: dict[tuple[str, str], str], capability: str | None, codes: dict[tuple[str, str], str],
              order: list[str]) -> list[str]:
    """One note on the GPU pairs whose status is not OK (either way round): what NCCL does with them."""
    pairs = {(a, b): "/".join(dict.fromkeys(s for s in (statuses[(a, b)], statuses[(b, a)]) if s != "OK"))
             for i, a in enumerate(order) for b in order[i + 1:] if (a, b) in statuses}
    pairs = {pair: s for pair, s in pairs.items() if s}
    if not pairs:
        return []
    said = ", ".join(f"{a}-{b} {s}" for (a, b), s in pairs.items())
    kinds = sorted({s for s in statuses.values() if s != "OK"}, key=list(P2P_STATUS).index)
    legend = P2P_STATUS[kinds[0]] if len(kinds) == 1 else "; ".join(f"{s}: {P2P_STATUS[s]}" for s in kinds)
    nvlinked = [f"{a}-{b}" for a, b in pairs if codes.get((a, b), "").startswith("NV")]
    tail = ("" if not nvlinked else
            f"; for GPUs joined by NVLink ({', '.join(nvlinked)}) NCCL stops with an error instead, unless "
            "NCCL_IGNORE_DISABLED_P2P=1")
    # NCCL asks NVML only for pairs already within its P2P level (src/graph/paths.cc ncclTopoCheckP2p: PXB by default,
    # any distance for 2 GPUs on AMD x86, or NCCL_P2P_LEVEL); a pair beyond it gets SHM whatever NVML says
    beyond = [f"{a}-{b}" for a, b in pairs if codes.get((a, b)) in ("PHB", "NODE", "SYS")]
    tail += ("; NCCL uses P2P only for pairs within NCCL_P2P_LEVEL (PXB by default; any distance for 2 GPUs on AMD "
             "CPUs) and for those it also requires these statuses")
    if beyond:
        tail += f"; {', '.join(beyond)} {'is' if len(beyond) == 1 else 'are'} beyond the default level anyway"
    if capability in ("read", "write"):
        return [f"nvidia-smi topo -p2p ({capability}): no CUDA peer-to-peer for {said} ({legend}): NCCL checks this "
                f"status and copies between such GPUs through host memory (SHM){tail}"]
    if capability is None:
        return [f"an nvidia-smi topo -p2p matrix gives {said} ({legend}); if it is the read or write one (-p2p r or "
                "w, the statuses NCCL checks), CUDA peer-to-peer is off between them and NCCL copies through host "
                f"memory (SHM){tail}"]
    return [f"nvidia-smi topo -p2p ({capability}): {said} ({legend}); NCCL checks the read and write statuses "
            "(-p2p r and w), which this matrix does not give"]

"""Words before use: every glossary term is explained in the chapter the glossary names, and a chapter that uses
a term before that chapter links the glossary in the cell where it first uses it.

The glossary is ``docs/glossary.md``: one table row per term, ``<a id="ANCHOR"></a>**term** | [NN](...)``. The
patterns below say how each term is spelled in the prose; a term added to the glossary needs one here.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs" / "glossary.md"

#: How each glossary entry (by anchor) shows in the chapters' Markdown.
TERMS = {
    "all-reduce": r"\ball-reduces?\b",
    "collectives": r"\breduce-scatter\b|\ball-gather\b|\ball-to-all\b",
    "parallelism": r"\b(DP|TP|PP|EP)\b|[Tt]ensor parallel|[Pp]ipeline parallel|[Ee]xpert parallel",
    "moe": r"\bMoE\b|mixture of experts",
    "dispatch": r"\bdispatch\b|\bcombine\b",
    "dense": r"\bdense\b",
    "zero": r"\bZeRO\b|\bFSDP\b",
    "hbm": r"\bHBM\b",
    "bubble": r"\bbubble\b",
    "nvlink": r"\bNVLinks?\b",
    "nic": r"\bNICs?\b",
    "alpha-beta": r"α",
    "n-half": r"n_\{1/2\}|n½",
    "latency-bound": r"latency-bound|bandwidth-bound",
    "line-rate": r"\bline rates?\b|\bachievable\b",
    "protocol": r"\bLL128\b|\bLL\b",
    "p2p": r"peer-to-peer|\bP2P\b|\bPIX\b|\bPXB\b",
    "nvswitch": r"NVSwitch",
    "hgx": r"\bHGX\b",
    "bisection": r"\bbisection\b",
    "nvl72": r"\bNVL72\b",
    "p2c": r"\bP2C\b",
    "algbw": r"\balgbw\b",
    "busbw": r"\bbusbw\b|\b[Bb]us bandwidth\b",
    "ring": r"\brings?\b",
    "channel": r"\bchannels?\b",
    "thread-block": r"\bthread blocks?\b",
    "tuner": r"\btuner\b",
    "nvls": r"\bNVLS\b|NVLink SHARP",
    "sharp": r"\bSHARP\b|\bCollNet\b",
    "symmetric-kernels": r"symmetric-memory|symmetric window",
    "nvlstree": r"\bNVLSTree\b",
    "double-binary-tree": r"\bdouble binary tree\b",
    "pat": r"\bPAT\b",
    "infiniband": r"InfiniBand",
    "roce": r"\bRoCE\b",
    "gpudirect-rdma": r"GPUDirect|\bGDR\b",
    "rail": r"\brails?\b",
    "fat-tree": r"\bfat-tree|\boversubscri",
    "clos": r"\bClos\b",
    "ecmp": r"\bECMP\b",
    "pfc-ecn": r"\bPFC\b|\bECN\b|\bDCQCN\b|\bCNPs?\b",
    "queue-pair": r"\bqueue pairs?\b|\bQPs?\b",
    "mfu": r"\bMFU\b",
    "kv-cache": r"\bKV cache\b",
    "sm": r"\bSMs?\b",
    "cuda-stream": r"\bCUDA streams?\b",
    "ffn": r"\bFFN\b",
    "gemm": r"\bGEMMs?\b",
    "pue": r"\bPUE\b",
    "context-parallel": r"[Cc]ontext parallel",
    "verbs": r"\bverbs\b",
    "dmodk": r"[Dd]-mod-k",
    "ufm": r"\bUFM\b",
    "acs": r"\bACS\b",
    "gid": r"\bGIDs?\b",
    "fec": r"\bFEC\b",
    "mla": r"\bMLA\b",
    "ttft": r"\bTTFT\b",
    "slo": r"\bSLOs?\b",
    "gqa": r"\bGQA\b",
    "nvshmem": r"\bNVSHMEM\b",
    "cuda-graph": r"\bCUDA graphs?\b",
    "wide-ep": r"\bwide-EP\b",
    "goodput": r"\bgoodput\b|\bMTBI\b",
    "dcgm": r"\bDCGM\b",
    "xid": r"\bXids?\b|\bXID\b",
    "pxn": r"\bPXN\b",
    "numa": r"\bNUMA\b",
    "ddp": r"\bDDP\b",
    "sequence-parallel": r"[Ss]equence parallel",
    "ras": r"\bRAS\b",
    "communicator": r"\bcommunicators?\b",
    "imex": r"\bIMEX\b",
    "hca": r"\bHCAs?\b",
    "head-of-line": r"[Hh]ead-of-line",
    "m-key": r"\bM_Key\b",
    "vl-sl": r"\bVLs?\b|\bSLs?\b|[Vv]irtual lanes?",
    "ets": r"\bETS\b",
    "tee-io": r"TEE-I/O|\bTDX\b",
    "gsp": r"\bGSP\b",
    "rma": r"\bRMA\b",
    "icrc-vcrc": r"\bICRC\b|\bVCRC\b",
    "rdma": r"\bRDMA\b",
    "incast": r"\bincast\b",
    "veth": r"\bveth\b",
    "sxm": r"\bSXM\b",
    "top-k": r"\btop-k\b",
    "gradient-accumulation": r"[Gg]radient accumulation",
    "watchdog": r"\bwatchdogs?\b",
    "nccl": r"\bNCCL\b",
    "nccl-tests": r"\bnccl-tests\b",
    "ats": r"\bATS\b",
    "libfabric": r"\bLibfabric\b",
    "srd": r"\bSRD\b",
    "nvlsm": r"\bNVLSM\b",
    "mnnvl": r"\bMNNVL\b",
    "userbuffers": r"\buserbuffers\b",
    "nmx": r"\bNMX\b",
    "bf16": r"\bBF16\b|\bFP32\b|\bFP8\b",
    "gt-s": r"\bGT/s\b",
    "gpu-generations": r"\bVolta\b|\bAmpere\b|\bHopper\b|\bBlackwell\b",
    "ib-generations": r"\b(EDR|HDR|NDR|XDR)\b",
    "max-min": r"[Mm]ax-min fair",
    "proxy-thread": r"\b[Pp]roxy threads?\b",
    "copy-engine": r"\b[Cc]opy engines?\b",
}

_ROW = re.compile(r'^\| <a id="([a-z0-9-]+)"></a>\*\*(.+?)\*\* \| \[(\w+)\]\((\.\./notebooks/[^)]+)\) \| (.+) \|$')


def glossary() -> dict[str, tuple[str, str, str]]:
    """anchor -> (term, chapter, notebook path) for every row of the glossary."""
    rows = {}
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        if m := _ROW.match(line):
            rows[m.group(1)] = (m.group(2), m.group(3), m.group(4).removeprefix("../"))
    return rows


def chapters() -> list[tuple[str, list[dict]]]:
    """(chapter number, Markdown cells) for every chapter, in course order (00, 01, ..., 04, 04b, 05, ...)."""
    out = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        out.append((path.name.split("_")[0], [c for c in cells if c["cell_type"] == "markdown"]))
    return out


def _order(chapter: str) -> int:
    return [c for c, _ in chapters()].index(chapter)


def test_every_glossary_row_parses_and_has_a_spelling():
    rows = glossary()
    lines = [ln for ln in GLOSSARY.read_text(encoding="utf-8").splitlines() if ln.startswith("| <a id=")]
    assert len(rows) == len(lines) > 20, "a glossary row does not have the expected form"
    assert set(rows) == set(TERMS)
    for _, chapter, path in rows.values():
        assert (ROOT / path).exists() and Path(path).name.split("_")[0] == chapter


@pytest.mark.parametrize("anchor", sorted(TERMS))
def test_the_named_chapter_uses_the_term(anchor):
    _, chapter, path = glossary()[anchor]
    cells = json.loads((ROOT / path).read_text(encoding="utf-8"))["cells"]
    assert any(re.search(TERMS[anchor], "".join(c["source"])) for c in cells if c["cell_type"] == "markdown")


@pytest.mark.parametrize("anchor", sorted(TERMS))
def test_a_term_used_before_its_chapter_links_the_glossary_there(anchor):
    term, chapter, _ = glossary()[anchor]
    missing = []
    for number, cells in chapters():
        if _order(number) >= _order(chapter):
            break
        first = next((c for c in cells if re.search(TERMS[anchor], "".join(c["source"]))), None)
        if first is not None and "glossary.md" not in "".join(first["source"]):
            missing.append(f"{number} (cell {first.get('id')})")
    assert not missing, f"{term!r} is explained in {chapter} but used earlier without a glossary link: {missing}"


#: Terms the chapters name without explaining them in their own text: the glossary is their only explanation,
#: so the first cell that uses each, in the whole course, links its glossary entry.
GLOSSARY_ONLY = ("ats", "libfabric", "nvlsm", "mnnvl", "userbuffers", "nmx")


@pytest.mark.parametrize("anchor", GLOSSARY_ONLY)
def test_a_term_explained_only_in_the_glossary_links_it_at_first_use(anchor):
    for number, cells in chapters():
        first = next((c for c in cells if re.search(TERMS[anchor], "".join(c["source"]))), None)
        if first is not None:
            assert f"glossary.md#{anchor}" in "".join(first["source"]), f"{anchor}: {number} cell {first.get('id')}"
            return
    pytest.fail(f"no chapter uses {anchor!r}")

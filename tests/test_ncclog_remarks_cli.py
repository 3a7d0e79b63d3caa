"""`nvcourse ncclog` prints each informational remark on its own line with its source, under the problems, and the
JSON keeps them in ``remarks`` (``{"remark", "source"}``)."""

import json
from pathlib import Path

from cli_runs import run_main

FIX = Path(__file__).parent / "fixtures"
# line 13: "comm 0x55f08a1c83d0 rank 0 nranks 1 ..."; line 10: "NET/Socket : Using [0]ens7:10.128.0.32<0>"
SINGLE_RANK = FIX / "ncclog" / "socket_v2_19_single_rank_nccl1267.log"
# line 6: "NCCL INFO NCCL_ALGO set by environment to Tree"
TREE = FIX / "ncclog" / "tuning_table_h800_tree_nccl1154.log"
AWS = FIX / "pasted_heldout2" / "awsofinccl24_horovod_ompi_tags_libfabric_old_ring_lines_warn.log"


def _listed(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.startswith("  - ")]


def test_a_remark_gets_its_own_line_with_its_source(capsys):
    code, out, _ = run_main(["ncclog", str(SINGLE_RANK)], capsys)
    listed = _listed(out)
    assert code == 0 and len(listed) == 1
    assert listed[0].startswith("  - no fault here: no RDMA device found") and "nranks 1" in listed[0]
    assert listed[0].endswith("[https://github.com/NVIDIA/nccl/issues/1121]")


def test_the_json_remarks_match_the_printed_lines(capsys):
    _, out, _ = run_main(["ncclog", str(TREE)], capsys)
    printed = _listed(out)
    _, js, _ = run_main(["ncclog", str(TREE), "--json"], capsys)
    remarks = json.loads(js)["remarks"]
    assert any("NCCL_ALGO=Tree" in r["remark"] and r["source"].startswith("https://") for r in remarks)
    # a setting is listed to be checked, never called harmless: no "no fault here" before it
    assert [f"  - {'' if r.get('setting') else 'no fault here: '}{r['remark']} [{r['source']}]"
            for r in remarks] == printed
    assert any(r.get("setting") for r in remarks) and not any("no fault here: set by" in ln for ln in printed)


def test_remarks_follow_the_problems(capsys):
    _, out, _ = run_main(["ncclog", str(AWS)], capsys)
    listed = _listed(out)
    # the fatal plugin error ("NET/OFI Couldn't open AV. RC: -22") first, the GPUDirect RDMA remark after it
    assert "Couldn't open AV" in listed[0] and not listed[0].startswith("  - no fault here")
    assert listed[-1].startswith("  - no fault here: network connections without GDRDMA")

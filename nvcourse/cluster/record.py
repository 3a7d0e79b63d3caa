"""Run the lab's experiments on the emulated cluster and keep them, or read the kept run.

``python -m nvcourse.cluster.record`` (root) brings clusters up and down itself and writes
``nvcourse/data/cluster_run.json``: the flat vs hierarchical sweep, two jobs sharing an oversubscribed
leaf uplink, and a straggler NIC. The notebook shows that file when it cannot run live (not root).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from shutil import which

from ..collectives.engines import torch_available
from . import model as _model
from .spec import parse_link_rate

DATA = Path(__file__).resolve().parent.parent / "data" / "cluster_run.json"
CLI = [sys.executable, "-m", "nvcourse", "cluster"]


def _cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"cluster {args[0]} failed (exit {proc.returncode}): {proc.stderr.strip()[-400:]}")
    return proc


def can_run_live() -> bool:
    """Root on Linux with ip, tc and torch: the experiments can run here."""
    return (hasattr(os, "geteuid") and os.geteuid() == 0 and which("ip") is not None and which("tc") is not None
            and torch_available())


def hier_sweep(*, nodes: int = 2, ranks_per_node: int = 2, nic: str = "1Gbit", min_bytes: str = "1MiB",
               max_bytes: str = "256MiB", iters: int = 3) -> dict:
    """Flat vs hierarchical all-reduce on a fresh cluster (brought down afterwards, also on failure)."""
    _cli("up", "--nodes", str(nodes), "--ranks-per-node", str(ranks_per_node), "--nic", nic)
    try:
        out = _cli("run", "--", "python", "-m", "nvcourse.cluster.hier", "--min-bytes", min_bytes,
                   "--max-bytes", max_bytes, "--iters", str(iters)).stdout
    finally:
        _cli("down")
    for line in out.splitlines():
        if line.startswith("NVCOURSE_HIER "):
            return dict(json.loads(line[len("NVCOURSE_HIER "):]), nic=nic, nic_Bps=parse_link_rate(nic, what="nic"))
    raise RuntimeError("the hierarchical sweep printed no result")


def _bench(hosts: str, procs: int, nbytes: str, iters: int) -> dict:
    out = _cli("run", "--hosts", hosts, "--", "nvcourse", "bench", "allreduce", "--procs", str(procs),
               "--bytes", nbytes, "--iters", str(iters), "--warmup", "1", "--json").stdout
    return json.loads(out[out.index("["):])[0]


def _flat(hosts: str, nbytes: str, iters: int, start_at: float) -> dict:
    out = _cli("run", "--hosts", hosts, "--", "python", "-m", "nvcourse.cluster.hier", "--flat-only",
               "--min-bytes", nbytes, "--max-bytes", nbytes, "--iters", str(iters), "--start-at", str(start_at)).stdout
    for line in out.splitlines():
        if line.startswith("NVCOURSE_HIER "):
            return json.loads(line[len("NVCOURSE_HIER "):])["rows"][0]
    raise RuntimeError("the flat all-reduce printed no result")


def contention(*, nic: str = "1Gbit", nbytes: str = "32MiB", iters: int = 8) -> dict:
    """Two 2-rank jobs whose rings both cross leaf 0's 2:1 oversubscribed uplink: alone, then together.

    Job A runs on nodes 0 and 2, job B on nodes 1 and 3 (leaf 0 = nodes 0, 1; leaf 1 = nodes 2, 3), so each
    uplink direction carries one flow of each job. Together they start at the same instant (``--start-at``).
    """
    _cli("up", "--nodes", "4", "--ranks-per-node", "1", "--nic", nic, "--nodes-per-leaf", "2",
         "--oversubscription", "2:1")
    try:
        alone = _flat("0,2", nbytes, iters, 0.0)
        start = time.time() + 25.0  # both jobs' torchrun and process groups are up by then
        with ThreadPoolExecutor(2) as pool:
            a, b = pool.map(lambda h: _flat(h, nbytes, iters, start), ["0,2", "1,3"])
    finally:
        _cli("down")
    s = alone["bytes"]
    return {"nic": nic, "nic_Bps": parse_link_rate(nic, what="nic"), "uplink_Bps": parse_link_rate(nic, what="nic"),
            "bytes": s, "alone_busbw_GBps": _model.busbw_GBps(s, alone["flat_s"], 2),
            "together_busbw_GBps": [_model.busbw_GBps(s, a["flat_s"], 2), _model.busbw_GBps(s, b["flat_s"], 2)]}


def straggler(*, nic: str = "1Gbit", slow: str = "250Mbit", nbytes: str = "32MiB", iters: int = 5) -> dict:
    """A 2 × 2 ring with every NIC at ``nic``, then with node 1's NIC at ``slow``."""
    out = {"nic": nic, "slow": slow, "nic_Bps": parse_link_rate(nic, what="nic"),
           "slow_Bps": parse_link_rate(slow, what="straggler")}
    for key, extra in (("normal", []), ("straggler", ["--straggler", f"1:{slow}"])):
        _cli("up", "--nodes", "2", "--ranks-per-node", "2", "--nic", nic, *extra)
        try:
            out[f"{key}_busbw_GBps"] = _bench("0,1", 4, nbytes, iters)["busbw_GBps"]
        finally:
            _cli("down")
    return out


def record(path: Path = DATA, *, max_bytes: str = "256MiB") -> dict:
    """Run all three experiments and write them to ``path`` (JSON)."""
    import torch

    rec = {"recorded": time.strftime("%Y-%m-%d", time.gmtime()),
           "machine": {"kernel": platform.release(), "cpus": os.cpu_count(), "torch": torch.__version__,
                       "note": "2 shared vCPUs; rate shaped with tbf; this kernel has no sch_netem, so no delay"},
           "hier": hier_sweep(max_bytes=max_bytes),
           "hier_slow_nic": hier_sweep(nic="250Mbit", max_bytes="64MiB"),
           "contention": contention(), "straggler": straggler()}
    path.write_text(json.dumps(rec, indent=1) + "\n")
    return rec


def load(path: Path = DATA) -> dict:
    return json.loads(path.read_text())


def compare_hier(rec: dict, key: str = "hier") -> list[dict]:
    """Measured vs model per size: flat ring (whole call) and the hierarchical network phase."""
    h = rec[key]
    beta, alpha, n, r = _model.payload_Bps(h["nic_Bps"]), h["alpha_s"], h["nodes"], h["ranks_per_node"]
    rows = []
    for row in h["rows"]:
        s = row["bytes"]
        flat = _model.flat_ring_s(s, n, r, alpha, beta)
        net = _model.hier_network_s(s, n, alpha, beta)
        rows.append({"bytes": s, "flat_s": row["flat_s"], "flat_model_s": flat,
                     "flat_err": abs(row["flat_s"] - flat) / row["flat_s"],
                     "hier_s": row["hier_s"], "hier_network_s": row["hier_network_s"], "hier_network_model_s": net,
                     "hier_err": abs(row["hier_network_s"] - net) / row["hier_network_s"],
                     "hier_local_s": row["hier_local_s"],
                     "flat_busbw_GBps": _model.busbw_GBps(s, row["flat_s"], n * r),
                     "flat_model_busbw_GBps": _model.busbw_GBps(s, flat, n * r)})
    return rows


if __name__ == "__main__":
    print(json.dumps(record(max_bytes=sys.argv[1] if len(sys.argv) > 1 else "256MiB"), indent=1))

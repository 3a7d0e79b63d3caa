"""Build, inspect and remove the emulated cluster (needs root, ``ip`` and ``tc``).

Everything happens inside namespaces named by :mod:`.spec`; removing a namespace removes its veths,
bridges and qdiscs with it, so :func:`down` only has to stop what runs in them and delete them.
The cluster's shape is kept in ``/run/nvcourse-cluster/<prefix>state.json`` for ``status`` and ``run``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from . import spec as _spec


def state_dir() -> Path:
    """Where the cluster's shape is kept (``NVCOURSE_CLUSTER_STATE``, default ``/run/nvcourse-cluster``)."""
    return Path(os.environ.get("NVCOURSE_CLUSTER_STATE", "/run/nvcourse-cluster"))


class ClusterError(RuntimeError):
    """A runtime failure of the emulated cluster (exit status 1, one line)."""


def _state_file() -> Path:
    return state_dir() / f"{_spec.prefix()}state.json"


def check_host() -> None:
    """Raise ClusterError (one line) unless we are root on Linux with ``ip`` and ``tc``."""
    if not hasattr(os, "geteuid") or not Path("/proc/self/ns/net").exists():
        raise ClusterError("cluster needs Linux network namespaces (this system has none)")
    if os.geteuid() != 0:
        raise ClusterError("cluster needs root (network namespaces and tc); run it with sudo on a Linux machine")
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise ClusterError(f"cluster needs the '{tool}' command (Debian/Ubuntu: apt-get install iproute2)")


def _run(cmd: list[str], *, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        err = " ".join(proc.stderr.split())[:300]
        raise ClusterError(f"'{' '.join(cmd)}' failed: {err}")
    return proc


def ours() -> list[str]:
    """Our namespaces that exist now (fabric and nodes with our prefix, nothing else)."""
    pat = re.compile(re.escape(_spec.prefix()) + r"(fabric|node\d+)")
    out = _run(["ip", "netns", "list"], check=False).stdout
    return [w.split()[0] for w in out.splitlines() if w.split() and pat.fullmatch(w.split()[0])]


def netem_available() -> bool:
    """Whether the kernel has sch_netem (probed on a dummy device inside a throw-away namespace of ours)."""
    probe = f"{_spec.prefix()}probe"
    _run(["ip", "netns", "add", probe], check=False)
    try:
        _run(["ip", "-n", probe, "link", "add", "d0", "type", "dummy"], check=False)
        r = _run(["ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "d0", "root", "netem", "delay", "1us"],
                 check=False)
        return r.returncode == 0
    finally:
        _run(["ip", "netns", "del", probe], check=False)


def load_state() -> dict | None:
    try:
        return json.loads(_state_file().read_text())
    except (FileNotFoundError, ValueError):
        return None


def up(cluster: _spec.ClusterSpec) -> dict:
    """Create the cluster; idempotent for the same shape. Cleans up after itself on failure or Ctrl-C."""
    check_host()
    state, present = load_state(), ours()
    want = _spec.namespaces(cluster)
    if state and state.get("spec") == cluster.to_dict() and sorted(present) == sorted(want):
        return dict(state, already_up=True)
    if present:
        raise ClusterError(f"another cluster is up ({len(present) - 1} nodes); run 'nvcourse cluster down' first")
    netem = netem_available()
    old = signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        for cmd in _spec.build_commands(cluster, netem=netem):
            _run(cmd)
        state = {"prefix": _spec.prefix(), "spec": cluster.to_dict(), "delay_emulated": netem or cluster.latency_s == 0,
                 "netem": netem, "created": time.time(),
                 "nodes": [{"node": i, "namespace": _spec.node_ns(i), "address": _spec.node_addr(i),
                            "leaf": cluster.leaf_of(i), "nic_Bps": cluster.node_rate(i)} for i in range(cluster.nodes)]}
        state_dir().mkdir(parents=True, exist_ok=True)
        _state_file().write_text(json.dumps(state, indent=1))
    except BaseException:
        down()
        raise
    finally:
        signal.signal(signal.SIGTERM, old)
    return dict(state, already_up=False)


def raise_interrupt(signum, frame):  # SIGTERM during up/run: clean up as for Ctrl-C
    raise KeyboardInterrupt


def kill_inside(ns: str) -> int:
    """SIGKILL the processes running in namespace ``ns`` (all started by ``cluster run``); their count."""
    pids = [int(p) for p in _run(["ip", "netns", "pids", ns], check=False).stdout.split() if p.isdigit()]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return len(pids)


def down() -> dict:
    """Stop what runs in our namespaces and delete them (with their veths, bridges, qdiscs). Safe twice."""
    check_host()
    removed, killed = [], 0
    for ns in ours():
        killed += kill_inside(ns)
    for ns in ours():
        _run(["ip", "netns", "del", ns], check=False)
        removed.append(ns)
    _state_file().unlink(missing_ok=True)
    left = ours()
    if left:
        raise ClusterError(f"could not remove namespaces: {', '.join(left)}")
    return {"removed": removed, "killed": killed}


def _qdisc_stats(ns: str, dev: str) -> dict:
    out = _run(["ip", "netns", "exec", ns, "tc", "-s", "qdisc", "show", "dev", dev], check=False).stdout
    m = re.search(r"rate (\S+) burst", out)
    sent = re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", out)
    return {"rate": m.group(1) if m else None, "sent_bytes": int(sent.group(1)) if sent else 0,
            "dropped": int(sent.group(3)) if sent else 0}


def status() -> dict:
    """The cluster as it is now: ``up``, its shape, and per node and uplink the tc rate and counters."""
    check_host()
    present, state = ours(), load_state()
    if not state or not present:
        return {"up": False, "prefix": _spec.prefix(), "namespaces": present}
    cluster = _spec.ClusterSpec.from_dict(state["spec"])
    fab = _spec.fabric_ns()
    nodes = [dict(n, present=n["namespace"] in present, nic_tx=_qdisc_stats(n["namespace"], "eth0"),
                  port_tx=_qdisc_stats(fab, f"n{n['node']}")) for n in state["nodes"]]
    uplinks = [{"leaf": j, "up": _qdisc_stats(fab, f"l{j}up"), "down": _qdisc_stats(fab, f"s{j}dn")}
               for j in range(cluster.leaves)]
    return {"up": sorted(present) == sorted(_spec.namespaces(cluster)), "prefix": state["prefix"],
            "spec": state["spec"], "delay_emulated": state["delay_emulated"], "netem": state["netem"],
            "leaves": cluster.leaves, "oversubscription": cluster.oversubscription, "nodes": nodes,
            "uplinks": uplinks}

"""``cluster run``: start one launcher per node namespace — torchrun (static rendezvous on node 0's
namespace address) or one ``mpirun`` whose daemons enter each node's namespace — and wait for all.

Output: the first node's stdout is passed through unchanged (rank 0 prints the results there, so
``--json`` output stays parseable); everything else goes to stderr prefixed with ``[node i]``. A
launcher that fails, a timeout or Ctrl-C stops every launcher (their whole process groups).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from importlib.util import find_spec
from pathlib import Path

from .._validate import choice
from ..collectives.engines import mpirun_command
from . import netns as _netns
from . import spec as _spec

BACKENDS = ("torch", "mpi")


def _command(command: list[str], backend: str) -> list[str]:
    """``nvcourse ...`` runs with this interpreter (this tree); ``nvcourse bench`` gets ``--backend``."""
    if not command:
        raise ValueError("command: give the command to run after '--', e.g. -- nvcourse bench allreduce --procs 4")
    cmd = list(command)
    if Path(cmd[0]).name == "nvcourse":  # also a path to it (.venv/bin/nvcourse): the same CLI
        cmd = [sys.executable, "-m", "nvcourse", *cmd[1:]]
        if len(cmd) > 3 and cmd[3] == "bench" and not any(a == "--backend" or a.startswith("--backend=") for a in cmd):
            cmd.append(f"--backend={backend}")
    elif cmd[0].endswith(".py"):
        cmd = [sys.executable, *cmd]
    return cmd


def _env(node: int) -> dict[str, str]:
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env.update({"GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1", "NVCOURSE_CLUSTER_NODE": str(node),
                "PYTHONUNBUFFERED": "1", "TORCH_CPP_LOG_LEVEL": "ERROR"})
    env.pop("MASTER_ADDR", None)
    return env


def torch_commands(cluster: _spec.ClusterSpec, command: list[str], hosts: list[int], port: int) -> list[list[str]]:
    """One ``ip netns exec NODE torchrun ...`` per host; node ranks follow ``hosts``' order."""
    cmds = []
    for k, node in enumerate(hosts):
        cmds.append(["ip", "netns", "exec", _spec.node_ns(node), sys.executable, "-m", "torch.distributed.run",
                     "--nnodes", str(len(hosts)), "--nproc-per-node", str(cluster.ranks_per_node),
                     "--node-rank", str(k), "--master-addr", _spec.node_addr(hosts[0]), "--master-port", str(port),
                     "--no-python", *command])
    return cmds


def rsh_agent_script(hosts: list[int]) -> str:
    """A stand-in for ssh that mpirun calls as ``AGENT [opts] HOST CMD...``: runs CMD in HOST's namespace."""
    cases = "\n".join(f'  {_spec.node_addr(i)}) ns={_spec.node_ns(i)} ;;' for i in hosts)
    return f"""#!/bin/sh
# nvcourse cluster: mpirun's remote launcher, entering a node namespace instead of ssh-ing to a host
while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
host=$1; shift
case "$host" in
{cases}
  *) echo "nvcourse cluster: unknown host $host" >&2; exit 1 ;;
esac
exec ip netns exec "$ns" /bin/sh -c "$*"
"""


def mpi_command(cluster: _spec.ClusterSpec, command: list[str], hosts: list[int], workdir: Path) -> list[list[str]]:
    """One ``mpirun`` in the first host's namespace with a hostfile; its daemons start in each namespace."""
    hostfile = workdir / "hostfile"
    hostfile.write_text("".join(f"{_spec.node_addr(i)} slots={cluster.ranks_per_node}\n" for i in hosts))
    agent = workdir / "rsh-agent"
    agent.write_text(rsh_agent_script(hosts))
    agent.chmod(0o755)
    base = mpirun_command(len(hosts) * cluster.ranks_per_node)
    mca = ["--mca", "plm_rsh_agent", str(agent), "--mca", "plm_rsh_no_tree_spawn", "1",
           "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", f"{_spec.SUBNET}.0/24",
           "--mca", "oob_tcp_if_include", f"{_spec.SUBNET}.0/24", "--hostfile", str(hostfile), "--map-by", "slot",
           "-x", "PATH", "-x", "PYTHONPATH", "-x", "OMP_NUM_THREADS", "-x", "PYTHONUNBUFFERED"]
    return [["ip", "netns", "exec", _spec.node_ns(hosts[0]), base[0], *base[1:], *mca, *command]]


def _pump(stream, out, tag: str) -> None:
    for line in iter(stream.readline, ""):
        out.write(tag + line)
        out.flush()
    stream.close()


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 5
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def run(command: list[str], *, backend: str = "torch", hosts: list[int] | None = None,
        timeout_s: float = 1800.0, port: int | None = None) -> int:
    """Run ``command`` across the cluster's nodes; the exit status is the worst launcher's."""
    choice("backend", backend, BACKENDS)
    if timeout_s <= 0:
        raise ValueError(f"timeout must be > 0 seconds; got {timeout_s}")
    _netns.check_host()
    state = _netns.load_state()
    if not state or not _netns.ours():
        raise _netns.ClusterError("no cluster is up; start one with 'nvcourse cluster up --nodes 2 --ranks-per-node 2'")
    cluster = _spec.ClusterSpec.from_dict(state["spec"])
    hosts = list(range(cluster.nodes)) if hosts is None else hosts
    if not hosts or len(set(hosts)) != len(hosts) or any(not 0 <= h < cluster.nodes for h in hosts):
        raise ValueError(f"hosts must be distinct node numbers from 0 to {cluster.nodes - 1}; got {hosts}")
    if backend == "torch":
        if find_spec("torch") is None:  # not imported here: the launchers import it, this process need not
            raise _netns.ClusterError("backend torch needs PyTorch: pip install torch==2.13.0 (CPU)")
    cmd = _command(command, backend)
    with tempfile.TemporaryDirectory(prefix="nvcourse-cluster-") as tmp:
        if backend == "torch":
            port = port or _spec.MASTER_PORT + (hosts[0] * 7 + len(hosts)) % 50  # two jobs at once differ
            launchers = torch_commands(cluster, cmd, hosts, port)
        else:
            launchers = mpi_command(cluster, cmd, hosts, Path(tmp))
        return _wait(launchers, hosts, timeout_s)


def _wait(launchers: list[list[str]], hosts: list[int], timeout_s: float) -> int:
    procs: list[subprocess.Popen] = []
    threads = []
    in_main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGTERM, _netns.raise_interrupt) if in_main else None
    try:
        for k, cmd in enumerate(launchers):
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=_env(hosts[k]), start_new_session=True, stdin=subprocess.DEVNULL)
            procs.append(p)
            tag = f"[node {hosts[k]}] "
            threads += [threading.Thread(target=_pump, args=(p.stdout, sys.stdout, "" if k == 0 else tag), daemon=True),
                        threading.Thread(target=_pump, args=(p.stderr, sys.stderr, tag), daemon=True)]
            threads[-1].start()
            threads[-2].start()
        deadline = time.monotonic() + timeout_s
        while any(p.poll() is None for p in procs):
            if any(p.poll() not in (None, 0) for p in procs):
                break  # one launcher failed: the others would wait for it forever
            if time.monotonic() > deadline:
                _stop(procs)
                raise _netns.ClusterError(f"cluster run timed out after {timeout_s:g} s; all launchers stopped")
            time.sleep(0.2)
        _stop(procs)
        for t in threads:
            t.join(5)
        return max(abs(p.returncode or 0) for p in procs)
    except BaseException:
        _stop(procs)
        raise
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)

"""``nvcourse cluster``: the plan of ip/tc commands (pure), the launchers' command lines, the model, the
CLI's errors, and — as root with network namespaces — the real lifecycle with torch and MPI across
namespaces. Nothing may be left behind: the fixture checks namespaces, host links and host qdiscs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from nvcourse import cli
from nvcourse.cluster import launch, model, netns, record, spec
from nvcourse.collectives import engines

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
HAS_NETNS = shutil.which("ip") is not None and shutil.which("tc") is not None and os.path.exists("/proc/self/ns/net")
needs_root = pytest.mark.skipif(not (IS_ROOT and HAS_NETNS),
                                reason="needs root, ip and tc (network namespaces); not available here")
needs_torch = pytest.mark.skipif(not engines.torch_available(),
                                 reason="torch not installed (pip install torch==2.13.0)")
needs_mpi = pytest.mark.skipif(not engines.mpi_available(), reason="mpi4py/Open MPI not installed")


# -- shape and commands (pure) ------------------------------------------------------------------
def test_spec_rates_and_oversubscription():
    s = spec.make_spec(4, 2, nic="1Gbit", oversubscription="2:1", nodes_per_leaf=2)
    assert s.nic_Bps == 125e6 and s.leaves == 2
    assert s.leaf_uplink_Bps() == 125e6  # 2 NICs of 1 Gb/s down, 2:1 -> 1 Gb/s up
    assert s.oversubscription == 2.0
    assert spec.make_spec(2, 1, nic="500Mbit").leaf_uplink_Bps() == 2 * 62.5e6  # non-blocking by default
    assert spec.make_spec(4, 1, leaf_uplink="3Gb/s").leaf_uplink_Bps() == 375e6
    st = spec.make_spec(2, 2, straggler="1:100Mbit")
    assert st.node_rate(1) == 12.5e6 and st.node_rate(0) == 125e6
    assert spec.ClusterSpec.from_dict(json.loads(json.dumps(st.to_dict()))) == st


@pytest.mark.parametrize("kw, word", [
    ({"nodes": 0, "ranks_per_node": 1}, "nodes"), ({"nodes": 2, "ranks_per_node": 0}, "ranks-per-node"),
    ({"nodes": 2, "ranks_per_node": 1, "nic": "fast"}, "nic"),
    ({"nodes": 2, "ranks_per_node": 1, "oversubscription": "2"}, "oversubscription"),
    ({"nodes": 2, "ranks_per_node": 1, "leaf_uplink": "1Gbit", "oversubscription": "2:1"}, "leaf-uplink"),
    ({"nodes": 2, "ranks_per_node": 1, "straggler": "5:1Gbit"}, "straggler"),
    ({"nodes": 2, "ranks_per_node": 1, "latency": "1s"}, "latency"),
])
def test_spec_bad_input_names_the_parameter(kw, word):
    with pytest.raises(ValueError, match=word):
        spec.make_spec(**kw)


def test_every_command_stays_inside_our_namespaces(monkeypatch):
    monkeypatch.setenv("NVCOURSE_CLUSTER_PREFIX", "nvq-")
    s = spec.make_spec(4, 1, nic="1Gbit", oversubscription="2:1", straggler="3:100Mbit")
    cmds = spec.build_commands(s, netem=False)
    ours = {"nvq-fabric", *(f"nvq-node{i}" for i in range(4))}
    for c in cmds:
        assert c[0] == "ip"
        named = c[2] if c[1] in ("-n", "netns") else None
        assert named in ours or (c[1] == "netns" and c[2] in ("add", "exec") and c[3] in ours), c
    assert sum(c[1:3] == ["netns", "add"] for c in cmds) == 5
    tbf = {(c[3], c[8]): c[c.index("rate") + 1] for c in cmds if "tbf" in c}
    assert tbf[("nvq-node0", "eth0")] == "1000000000bit" and tbf[("nvq-fabric", "n0")] == "1000000000bit"
    assert tbf[("nvq-node3", "eth0")] == "100000000bit" and tbf[("nvq-fabric", "n3")] == "100000000bit"
    assert tbf[("nvq-fabric", "l0up")] == tbf[("nvq-fabric", "s1dn")] == "1000000000bit"
    assert not any("netem" in c for c in cmds)
    assert any("netem" in c for c in spec.build_commands(spec.make_spec(2, 1, latency="50us"), netem=True))


def test_prefix_is_checked(monkeypatch):
    monkeypatch.setenv("NVCOURSE_CLUSTER_PREFIX", "eth")
    with pytest.raises(ValueError, match="NVCOURSE_CLUSTER_PREFIX"):
        spec.prefix()


# -- launchers ----------------------------------------------------------------------------------
def test_nvcourse_bench_runs_this_tree_with_the_backend():
    cmd = launch._command(["nvcourse", "bench", "allreduce", "--procs", "4"], "mpi")
    assert cmd[:3] == [sys.executable, "-m", "nvcourse"] and cmd[-1] == "--backend=mpi"
    assert launch._command(["nvcourse", "bench", "allreduce", "--backend", "torch"], "mpi")[-1] == "torch"
    assert launch._command(["train.py", "--x"], "torch") == [sys.executable, "train.py", "--x"]
    with pytest.raises(ValueError, match="command"):
        launch._command([], "torch")


def test_torchrun_per_node_with_rendezvous_on_the_first_hosts_address():
    s = spec.make_spec(4, 2)
    cmds = launch.torch_commands(s, ["python", "x.py"], [2, 3], 29513)
    assert [c[3] for c in cmds] == [spec.node_ns(2), spec.node_ns(3)]
    for k, c in enumerate(cmds):
        assert c[c.index("--master-addr") + 1] == "10.213.0.3" and c[c.index("--node-rank") + 1] == str(k)
        assert c[c.index("--nnodes") + 1] == "2" and c[c.index("--nproc-per-node") + 1] == "2"


def test_rsh_agent_maps_addresses_to_namespaces(tmp_path):
    script = launch.rsh_agent_script([0, 1])
    assert "10.213.0.2) ns=" + spec.node_ns(1) in script and 'exec ip netns exec "$ns"' in script


@needs_mpi
def test_mpirun_uses_a_hostfile_and_our_agent(tmp_path):
    (cmd,) = launch.mpi_command(spec.make_spec(2, 3), ["python", "x.py"], [0, 1], tmp_path)
    assert cmd[:4] == ["ip", "netns", "exec", spec.node_ns(0)]
    assert (tmp_path / "hostfile").read_text() == "10.213.0.1 slots=3\n10.213.0.2 slots=3\n"
    assert cmd[cmd.index("plm_rsh_agent") + 1] == str(tmp_path / "rsh-agent") and cmd[-2:] == ["python", "x.py"]


# -- model --------------------------------------------------------------------------------------
def test_model_flat_ring_vs_hierarchical():
    beta = model.payload_Bps(125e6)
    assert beta == pytest.approx(125e6 * 1448 / 1514)
    S = 64 * 2**20
    assert model.flat_ring_s(S, 2, 2, 0.0, beta) == pytest.approx(1.5 * S / beta)  # 2(P-1)/P with P = 4
    assert model.hier_network_s(S, 2, 0.0, beta) == pytest.approx(1.0 * S / beta)  # 2(N-1)/N with N = 2
    assert model.flat_ring_s(S, 2, 2, 1e-3, beta) - model.flat_ring_s(S, 2, 2, 0.0, beta) == pytest.approx(6e-3)
    assert model.busbw_GBps(S, model.flat_ring_s(S, 2, 2, 0.0, beta), 4) == pytest.approx(beta / 1e9)
    assert model.shared_rate_Bps(125e6, 2) == 62.5e6
    with pytest.raises(ValueError, match="nodes"):
        model.flat_ring_s(S, 1, 4, 0.0, beta)


def test_recorded_run_meets_the_target():
    rec = record.load()
    rows = record.compare_hier(rec)
    assert [r["bytes"] for r in rows][0] == 2**20 and rows[-1]["bytes"] == 256 * 2**20
    assert all(r["correct"] for r in rec["hier"]["rows"])
    errs = sorted(r["flat_err"] for r in rows) + sorted(r["hier_err"] for r in rows)
    assert sorted(errs)[len(errs) // 2] <= 0.25
    assert all(r["hier_network_s"] < r["flat_s"] for r in rows if r["bytes"] >= 16 * 2**20)


# -- command line without root ------------------------------------------------------------------
def test_cli_bad_input_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["cluster", "up", "--nodes", "0"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "nodes must be" in err and "Traceback" not in err


@pytest.mark.parametrize("action", [["up", "--nodes", "2"], ["down"], ["status"], ["run", "--", "true"]])
def test_cli_not_root_is_one_line_exit_1(action, monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert cli.main(["cluster", *action]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "needs root" in err


# -- real cluster (root) ------------------------------------------------------------------------
def _host_view() -> tuple[str, str]:
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    qdiscs = subprocess.run(["tc", "qdisc", "show"], capture_output=True, text=True).stdout
    return " ".join(sorted(line.split(":")[1] for line in links.splitlines())), qdiscs


@pytest.fixture
def clean_cluster(monkeypatch, tmp_path):
    """A private prefix and state dir; afterwards nothing of ours may remain and the host is unchanged."""
    monkeypatch.setenv("NVCOURSE_CLUSTER_PREFIX", "nvct-")
    monkeypatch.setenv("NVCOURSE_CLUSTER_STATE", str(tmp_path))
    before = _host_view()
    yield
    netns.down()
    assert not [n for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
                if n.startswith("nvct-")]
    assert _host_view() == before


@needs_root
def test_lifecycle_up_idempotent_status_down_twice(clean_cluster, capsys):
    assert cli.main(["cluster", "up", "--nodes", "3", "--ranks-per-node", "1", "--nic", "500Mbit",
                     "--oversubscription", "2:1"]) == 0
    assert "cluster up" in capsys.readouterr().out
    assert cli.main(["cluster", "up", "--nodes", "3", "--ranks-per-node", "1", "--nic", "500Mbit",
                     "--oversubscription", "2:1"]) == 0
    assert "already up" in capsys.readouterr().out
    assert cli.main(["cluster", "up", "--nodes", "2"]) == 1  # another shape is up
    assert "cluster down" in capsys.readouterr().err
    assert cli.main(["cluster", "status", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["up"] and st["leaves"] == 2 and st["oversubscription"] == 2.0
    assert [n["address"] for n in st["nodes"]] == ["10.213.0.1", "10.213.0.2", "10.213.0.3"]
    assert st["nodes"][0]["nic_tx"]["rate"] == "500Mbit" and st["uplinks"][0]["up"]["rate"] == "500Mbit"
    # node 2 reaches node 0 across the spine; nothing else is routable from a node
    probe = "import socket; socket.create_connection(('10.213.0.1', 22), timeout=2)"
    r = subprocess.run(["ip", "netns", "exec", "nvct-node2", sys.executable, "-c", probe],
                       capture_output=True, text=True)
    assert "ConnectionRefused" in r.stderr  # reached the node, no one listening
    routes = subprocess.run(["ip", "-n", "nvct-node2", "route"], capture_output=True, text=True).stdout
    assert "default" not in routes
    assert cli.main(["cluster", "down"]) == 0 and cli.main(["cluster", "down"]) == 0
    assert "nothing to remove" in capsys.readouterr().out


@needs_root
def test_interrupted_up_removes_what_it_made(clean_cluster, monkeypatch):
    real, calls = netns._run, []

    def flaky(cmd, check=True):
        calls.append(cmd)
        if len(calls) == 12:
            raise KeyboardInterrupt
        return real(cmd, check=check)

    monkeypatch.setattr(netns, "_run", flaky)
    with pytest.raises(KeyboardInterrupt):
        netns.up(spec.make_spec(2, 1))
    monkeypatch.setattr(netns, "_run", real)
    assert netns.ours() == [] and netns.load_state() is None


@needs_root
@needs_torch
def test_torch_allreduce_across_namespaces(clean_cluster, capfd):
    netns.up(spec.make_spec(2, 2, nic="1Gbit"))
    rc = launch.run(["nvcourse", "bench", "allreduce", "--procs", "4", "--bytes", "4MiB", "--iters", "3", "--json"],
                    backend="torch", timeout_s=300)
    out = capfd.readouterr().out
    (row,) = json.loads(out[out.index("["):])
    assert rc == 0 and row["correct"] and row["backend"] == "torch" and row["procs"] == 4
    assert row["busbw_GBps"] < model.payload_Bps(125e6) / 1e9 * 1.05  # the shaped NIC is the bottleneck


@needs_root
@needs_mpi
def test_mpi_allreduce_across_namespaces(clean_cluster, capfd):
    netns.up(spec.make_spec(2, 1, nic="1Gbit"))
    rc = launch.run(["nvcourse", "bench", "allreduce", "--procs", "2", "--bytes", "1MiB", "--iters", "3", "--json"],
                    backend="mpi", timeout_s=300)
    out = capfd.readouterr().out
    (row,) = json.loads(out[out.index("["):])
    assert rc == 0 and row["correct"] and row["backend"] == "mpi" and row["procs"] == 2
    assert row["busbw_GBps"] < model.payload_Bps(125e6) / 1e9 * 1.05


@needs_root
@needs_torch  # backend="torch" starts torchrun on each node
def test_failing_launcher_stops_the_others(clean_cluster, capfd):
    netns.up(spec.make_spec(2, 1))
    rc = launch.run(["sh", "-c", 'if [ "$NVCOURSE_CLUSTER_NODE" = 1 ]; then exit 3; fi; sleep 60'],
                    backend="torch", timeout_s=120)
    assert rc != 0
    assert all(not netns.kill_inside(ns) for ns in netns.ours())  # nothing still running in the namespaces


@needs_root
@needs_torch
def test_bench_inside_a_cluster_run_measures_the_nic_not_shared_memory(clean_cluster, capfd):
    # No --backend anywhere, and a command the launcher does not rewrite: bench itself must pick torchrun's engine.
    netns.up(spec.make_spec(2, 2, nic="1Gbit"))
    rc = launch.run([sys.executable, "-m", "nvcourse", "bench", "allreduce", "--procs", "4", "--bytes", "16MiB",
                     "--iters", "3", "--warmup", "1", "--json"], backend="torch", timeout_s=300)
    out = capfd.readouterr().out
    (row,) = json.loads(out[out.index("["):])
    assert rc == 0 and row["correct"] and row["backend"] == "torch"
    nic = model.payload_Bps(125e6) / 1e9  # the shaped 1 Gb/s NIC's payload rate, GB/s
    # Shared memory on this machine gives GB/s (16-30x the NIC); across the namespaces the NIC bounds the bus rate.
    assert 0.3 * nic < row["busbw_GBps"] < 1.05 * nic


@needs_root
def test_shm_inside_a_cluster_run_is_refused(clean_cluster, capfd):
    netns.up(spec.make_spec(2, 1, nic="1Gbit"))
    rc = launch.run([sys.executable, "-m", "nvcourse", "bench", "allreduce", "--backend", "shm", "--procs", "2"],
                    backend="torch", timeout_s=300)
    err = capfd.readouterr().err
    # bench exits 2 with one line in every rank; torchrun reports its failed workers with status 1
    assert rc != 0 and "error: backend: shm measures one node's shared memory" in err


def test_a_path_to_nvcourse_is_the_same_cli():
    cmd = launch._command(["/opt/venv/bin/nvcourse", "bench", "allreduce"], "torch")
    assert cmd[:3] == [sys.executable, "-m", "nvcourse"] and cmd[-1] == "--backend=torch"

"""``nvcourse cluster``: a small multi-node cluster on this Linux machine, made of network namespaces.

    nvcourse cluster up --nodes 2 --ranks-per-node 2 --nic 1Gbit [--latency 50us]
                        [--leaf-uplink 2Gbit | --oversubscription 2:1] [--nodes-per-leaf 2] [--straggler 1:100Mbit]
    nvcourse cluster run [--backend torch|mpi] [--hosts 0,1] -- nvcourse bench allreduce --procs 4 --bytes 64MiB
    nvcourse cluster status [--json]
    nvcourse cluster down

Exit status: 0 ok; 1 runtime failure (not root, ``ip``/``tc`` missing, a launcher failed); 2 bad input;
130 Ctrl-C (the cluster run is stopped; ``up`` interrupted removes what it made). ``status --json`` keys:
``up, prefix, spec, delay_emulated, netem, leaves, oversubscription, nodes[{node, namespace, address, leaf,
nic_Bps, present, nic_tx, port_tx}], uplinks[{leaf, up, down}]`` (``*_tx``: ``rate, sent_bytes, dropped``).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..i18n import translate as _
from ..units import format_rate
from . import launch, netns, spec


def register(subparsers) -> None:
    p = subparsers.add_parser("cluster", help=_("emulated multi-node cluster on network namespaces (root, Linux)"),
                              description=_("Nodes as network namespaces, leaf/spine bridges, tc-shaped NICs."))
    sub = p.add_subparsers(dest="cluster_command", metavar="ACTION")
    sub.required = True
    u = sub.add_parser("up", help=_("create the cluster (idempotent)"))
    u.add_argument("--nodes", type=int, required=True, help=_("number of nodes (namespaces), 1-16"))
    u.add_argument("--ranks-per-node", type=int, default=1, help=_("processes per node (default 1)"))
    u.add_argument("--nic", default="1Gbit", help=_("NIC rate per node, e.g. 1Gbit, 500Mbit (default 1Gbit)"))
    u.add_argument("--latency", default="0us", help=_("one-way delay per NIC, e.g. 50us (needs sch_netem)"))
    u.add_argument("--nodes-per-leaf", type=int, default=2, help=_("nodes on each leaf bridge (default 2)"))
    g = u.add_mutually_exclusive_group()
    g.add_argument("--leaf-uplink", default=None, help=_("leaf-to-spine rate, e.g. 2Gbit (default: non-blocking)"))
    g.add_argument("--oversubscription", default=None, help=_("leaf down:up capacity, e.g. 2:1"))
    u.add_argument("--straggler", default=None, help=_("one slow NIC, NODE:RATE, e.g. 1:100Mbit"))
    u.add_argument("--json", action="store_true", help=_("print the state as JSON"))
    u.set_defaults(handler=_up)
    r = sub.add_parser("run", help=_("run a command on every node (torchrun or mpirun)"))
    r.add_argument("--backend", default="torch", help=_("torch (torchrun per node) or mpi (mpirun + hostfile)"))
    r.add_argument("--hosts", default=None, help=_("nodes to use, e.g. 0,2 (default: all)"))
    r.add_argument("--timeout", type=float, default=1800.0, help=_("seconds before every launcher is stopped"))
    r.add_argument("cmd", nargs=argparse.REMAINDER, help="-- COMMAND ...")
    r.set_defaults(handler=_run)
    s = sub.add_parser("status", help=_("show the cluster and its link counters"))
    s.add_argument("--json", action="store_true")
    s.set_defaults(handler=_status)
    d = sub.add_parser("down", help=_("remove everything (safe to run twice)"))
    d.set_defaults(handler=_down)


def _fail(exc: RuntimeError) -> int:
    print(_("nvcourse: error: {message}").format(message=" ".join(str(exc).split())), file=sys.stderr)
    return 1


def _up(args: argparse.Namespace) -> int:
    cluster = spec.make_spec(args.nodes, args.ranks_per_node, nic=args.nic, latency=args.latency,
                             leaf_uplink=args.leaf_uplink, oversubscription=args.oversubscription,
                             nodes_per_leaf=args.nodes_per_leaf, straggler=args.straggler)
    try:
        state = netns.up(cluster)
    except RuntimeError as exc:
        return _fail(exc)
    if args.json:
        print(json.dumps(state, indent=2))
        return 0
    word = "already up" if state["already_up"] else "up"
    print(f"cluster {word}: {cluster.nodes} nodes x {cluster.ranks_per_node} ranks, NIC "
          f"{format_rate(cluster.nic_Bps, bits=True)}, {cluster.leaves} leaves, uplink "
          f"{format_rate(cluster.leaf_uplink_Bps(), bits=True)} ({cluster.oversubscription:g}:1)")
    if cluster.latency_s > 0 and not state["netem"]:
        print("note: this kernel has no sch_netem; --latency is not emulated (rate shaping only)", file=sys.stderr)
    return 0


def _run(args: argparse.Namespace) -> int:
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    hosts = None
    if args.hosts is not None:
        try:
            hosts = [int(h) for h in args.hosts.split(",")]
        except ValueError:
            raise ValueError(_("hosts must be comma-separated node numbers, e.g. 0,2; got {value}").format(
                value=repr(args.hosts))) from None
    try:
        return launch.run(cmd, backend=args.backend, hosts=hosts, timeout_s=args.timeout)
    except RuntimeError as exc:
        return _fail(exc)


def _status(args: argparse.Namespace) -> int:
    try:
        st = netns.status()
    except RuntimeError as exc:
        return _fail(exc)
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    if not st["up"]:
        print("cluster: down" + (f" (partial: {', '.join(st['namespaces'])})" if st.get("namespaces") else ""))
        return 0
    print(f"cluster: up, {len(st['nodes'])} nodes, {st['leaves']} leaves, oversubscription "
          f"{st['oversubscription']:g}:1, delay emulated: {'yes' if st['delay_emulated'] else 'no (no sch_netem)'}")
    for n in st["nodes"]:
        print(f"  node {n['node']}  {n['namespace']:<14} {n['address']:<12} leaf {n['leaf']}  NIC "
              f"{format_rate(n['nic_Bps'], bits=True):>10}  sent {n['nic_tx']['sent_bytes']:>12} B  "
              f"received {n['port_tx']['sent_bytes']:>12} B")
    for u in st["uplinks"]:
        print(f"  leaf {u['leaf']} uplink {u['up']['rate']}: up {u['up']['sent_bytes']} B "
              f"(dropped {u['up']['dropped']} pkt), down {u['down']['sent_bytes']} B")
    return 0


def _down(args: argparse.Namespace) -> int:
    try:
        res = netns.down()
    except RuntimeError as exc:
        return _fail(exc)
    n = len(res["removed"])
    print(f"cluster down: removed {n} namespaces" if n else "cluster down: nothing to remove")
    return 0

"""The shape of an emulated cluster and the exact ``ip``/``tc`` commands that build it (pure: no root needed).

Layout (every object lives inside namespaces this module names; the host's own interfaces, routes and
addresses are never touched, and nothing outside the namespaces can be reached: no default route):

* one network namespace per node, ``<prefix>node<i>``, with ``lo`` and one "NIC" ``eth0`` at
  ``10.213.0.<i+1>/24``;
* one fabric namespace, ``<prefix>fabric``, holding the Linux bridges: a leaf bridge ``leaf<j>`` per
  ``nodes_per_leaf`` nodes and one ``spine`` bridge, joined by veth pairs ``l<j>up`` / ``s<j>dn``;
* each node's ``eth0`` is a veth whose peer ``n<i>`` is a port of its leaf bridge.

Shaping with ``tc`` (egress of each device, so both directions of every cable are shaped): the NIC rate
on ``eth0`` (node → fabric) and on ``n<i>`` (fabric → node), the uplink rate on ``l<j>up`` (leaf →
spine) and ``s<j>dn`` (spine → leaf). Rate uses ``tbf``; delay uses ``netem`` when the kernel has it
(``sch_netem``), otherwise delay is not emulated and :attr:`Plan.delay_emulated` says so.

The prefix (default ``nvc-``) comes from ``NVCOURSE_CLUSTER_PREFIX`` so that tests never touch a cluster
a learner has up.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import asdict, dataclass, field

from ..i18n import translate as _
from ..units import parse_rate, parse_time

SUBNET = "10.213.0"  # a /24 that exists only inside the namespaces
MAX_NODES = 16
MAX_RANKS_PER_NODE = 16
MASTER_PORT = 29513
# TCP/IPv4 over Ethernet with a 1500 B MTU: 1448 B of payload (20 IP + 32 TCP-with-timestamps header
# bytes) per 1514 B that tc counts (14 B Ethernet header; tc does not see preamble, FCS or gap).
MTU_B = 1500
TCP_PAYLOAD_B = MTU_B - 20 - 32
FRAME_B = MTU_B + 14


def prefix() -> str:
    """Name prefix of every namespace we create (``NVCOURSE_CLUSTER_PREFIX``, default ``nvc-``)."""
    p = os.environ.get("NVCOURSE_CLUSTER_PREFIX", "nvc-")
    if not re.fullmatch(r"[a-z][a-z0-9]{1,5}-", p):
        raise ValueError(_("NVCOURSE_CLUSTER_PREFIX must be 2-6 lowercase letters/digits and a '-'; got "
                           "{value}").format(value=repr(p)))
    return p


_BIT_UNITS = {"kbit": "kb/s", "mbit": "Mb/s", "gbit": "Gb/s"}


def parse_link_rate(text: str, *, what: str) -> float:
    """Bytes per second from ``1Gbit``/``500Mbit`` (tc's spelling) or anything :func:`parse_rate` reads."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([kKmMgG]bit)\s*", str(text))
    try:
        if m:
            return parse_rate(f"{m.group(1)}{_BIT_UNITS[m.group(2).lower()]}", what=what)
        return parse_rate(text, what=what)
    except ValueError:
        raise ValueError(_("{what} must be a rate such as 1Gbit, 500Mbit or 10Gb/s; got {value}").format(
            what=what, value=repr(text))) from None


def tc_rate(bytes_per_s: float) -> str:
    """A rate in tc's syntax (bits per second)."""
    return f"{round(bytes_per_s * 8)}bit"


@dataclass(frozen=True)
class ClusterSpec:
    """What ``nvcourse cluster up`` builds. Rates in bytes/s, latency in seconds (one way, per NIC)."""

    nodes: int
    ranks_per_node: int
    nic_Bps: float
    latency_s: float = 0.0
    nodes_per_leaf: int = 2
    uplink_Bps: float = 0.0  # 0: non-blocking (nic_Bps x nodes in the leaf)
    slow_nodes: dict[int, float] = field(default_factory=dict)  # node -> its NIC rate (a straggler)

    @property
    def leaves(self) -> int:
        return math.ceil(self.nodes / self.nodes_per_leaf)

    def leaf_of(self, node: int) -> int:
        return node // self.nodes_per_leaf

    def node_rate(self, node: int) -> float:
        return self.slow_nodes.get(node, self.nic_Bps)

    def leaf_uplink_Bps(self) -> float:
        return self.uplink_Bps or self.nic_Bps * self.nodes_per_leaf

    @property
    def oversubscription(self) -> float:
        """Leaf down-capacity over up-capacity (1.0 = non-blocking)."""
        return self.nic_Bps * self.nodes_per_leaf / self.leaf_uplink_Bps()

    def to_dict(self) -> dict:
        d = asdict(self)
        d["slow_nodes"] = {str(k): v for k, v in self.slow_nodes.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ClusterSpec:
        d = dict(d)
        d["slow_nodes"] = {int(k): float(v) for k, v in d.get("slow_nodes", {}).items()}
        return cls(**d)


def make_spec(nodes: int, ranks_per_node: int, *, nic: str = "1Gbit", latency: str = "0us",
              leaf_uplink: str | None = None, oversubscription: str | None = None, nodes_per_leaf: int = 2,
              straggler: str | None = None) -> ClusterSpec:
    """Validate command-line style inputs (ValueError naming the parameter) into a :class:`ClusterSpec`."""
    if not isinstance(nodes, int) or not 1 <= nodes <= MAX_NODES:
        raise ValueError(_("{name} must be an integer from {minimum} to {maximum}; got {value}").format(
            name="nodes", minimum=1, maximum=MAX_NODES, value=nodes))
    if not isinstance(ranks_per_node, int) or not 1 <= ranks_per_node <= MAX_RANKS_PER_NODE:
        raise ValueError(_("{name} must be an integer from {minimum} to {maximum}; got {value}").format(
            name="ranks-per-node", minimum=1, maximum=MAX_RANKS_PER_NODE, value=ranks_per_node))
    if not isinstance(nodes_per_leaf, int) or not 1 <= nodes_per_leaf <= MAX_NODES:
        raise ValueError(_("{name} must be an integer from {minimum} to {maximum}; got {value}").format(
            name="nodes-per-leaf", minimum=1, maximum=MAX_NODES, value=nodes_per_leaf))
    nic_Bps = parse_link_rate(nic, what="nic")
    if not 1e5 <= nic_Bps <= 5e9:
        raise ValueError(_("nic must be between 800kbit and 40Gbit; got {value}").format(value=repr(nic)))
    lat = parse_time(latency, what="latency")
    if lat > 0.1:
        raise ValueError(_("latency must be at most 100ms; got {value}").format(value=repr(latency)))
    if leaf_uplink is not None and oversubscription is not None:
        raise ValueError(_("leaf-uplink and oversubscription: give one, not both"))
    uplink = 0.0
    if leaf_uplink is not None:
        uplink = parse_link_rate(leaf_uplink, what="leaf-uplink")
    elif oversubscription is not None:
        m = re.fullmatch(r"\s*([0-9.]+)\s*:\s*([0-9.]+)\s*", str(oversubscription))
        if not m or float(m.group(1)) <= 0 or float(m.group(2)) <= 0:
            raise ValueError(_("oversubscription must look like 2:1; got {value}").format(value=repr(oversubscription)))
        uplink = nic_Bps * nodes_per_leaf * float(m.group(2)) / float(m.group(1))
    slow: dict[int, float] = {}
    if straggler is not None:
        m = re.fullmatch(r"\s*(\d+)\s*[:=]\s*(\S+)\s*", straggler)
        if not m or int(m.group(1)) >= nodes:
            raise ValueError(_("straggler must be NODE:RATE with NODE from 0 to {last}, e.g. 1:100Mbit; got "
                               "{value}").format(last=nodes - 1, value=repr(straggler)))
        slow[int(m.group(1))] = parse_link_rate(m.group(2), what="straggler")
    return ClusterSpec(nodes, ranks_per_node, nic_Bps, lat, nodes_per_leaf, uplink, slow)


def node_ns(i: int, pfx: str | None = None) -> str:
    return f"{pfx or prefix()}node{i}"


def fabric_ns(pfx: str | None = None) -> str:
    return f"{pfx or prefix()}fabric"


def node_addr(i: int) -> str:
    return f"{SUBNET}.{i + 1}"


def namespaces(spec: ClusterSpec, pfx: str | None = None) -> list[str]:
    return [fabric_ns(pfx), *(node_ns(i, pfx) for i in range(spec.nodes))]


def _shape(ns: str, dev: str, rate_Bps: float, delay_s: float, netem: bool) -> list[list[str]]:
    """tc commands for one device's egress: tbf for rate (+ netem child for delay when available)."""
    # burst: at least two 64 KiB GSO super-packets (veth segments lazily), or 1 ms at the rate.
    burst = max(2 * 65536 + 2 * FRAME_B, int(rate_Bps * 1e-3))
    cmds = [["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "tbf",
             "rate", tc_rate(rate_Bps), "burst", str(burst), "latency", "50ms"]]
    if netem and delay_s > 0:
        cmds.append(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "parent", "1:1", "handle",
                     "10:", "netem", "delay", f"{delay_s * 1e6:.0f}us", "limit", "100000"])
    return cmds


def build_commands(spec: ClusterSpec, *, netem: bool, pfx: str | None = None) -> list[list[str]]:
    """Every command ``cluster up`` runs, in order (all of them name one of our namespaces)."""
    fab = fabric_ns(pfx)
    ipf = ["ip", "-n", fab]
    cmds: list[list[str]] = [["ip", "netns", "add", ns] for ns in namespaces(spec, pfx)]
    cmds += [[*ipf, "link", "set", "lo", "up"], [*ipf, "link", "add", "spine", "type", "bridge"],
             [*ipf, "link", "set", "spine", "up"]]
    for j in range(spec.leaves):
        up, dn = f"l{j}up", f"s{j}dn"
        cmds += [[*ipf, "link", "add", f"leaf{j}", "type", "bridge"], [*ipf, "link", "set", f"leaf{j}", "up"],
                 [*ipf, "link", "add", up, "type", "veth", "peer", "name", dn],
                 [*ipf, "link", "set", up, "master", f"leaf{j}"], [*ipf, "link", "set", dn, "master", "spine"],
                 [*ipf, "link", "set", up, "up"], [*ipf, "link", "set", dn, "up"]]
        rate = spec.leaf_uplink_Bps()
        cmds += _shape(fab, up, rate, 0.0, netem) + _shape(fab, dn, rate, 0.0, netem)
    for i in range(spec.nodes):
        ns, port = node_ns(i, pfx), f"n{i}"
        ipn = ["ip", "-n", ns]
        cmds += [[*ipf, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns],
                 [*ipf, "link", "set", port, "master", f"leaf{spec.leaf_of(i)}"], [*ipf, "link", "set", port, "up"],
                 [*ipn, "link", "set", "lo", "up"], [*ipn, "addr", "add", f"{node_addr(i)}/24", "dev", "eth0"],
                 [*ipn, "link", "set", "eth0", "up"]]
        rate = spec.node_rate(i)
        cmds += _shape(ns, "eth0", rate, spec.latency_s, netem) + _shape(fab, port, rate, 0.0, netem)
    return cmds

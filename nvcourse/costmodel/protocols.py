"""What NCCL charges for one (algorithm, protocol) pair: its latency formula and protocol bandwidths.

NCCL moves data with one of three *protocols* (constants in ``data/nccl_tuning.toml``):

* **LL** (low latency): every 8-byte store carries 4 B of data and a 4 B flag, so a receiver polls the
  data itself, with no fence. Cheapest per step (0.6 µs over NVLink in NCCL's model), half the bandwidth.
* **LL128**: 128-byte lines of 120 B data + 8 B flag; needs 128-byte stores that arrive whole, so NCCL
  enables it only where a node's GPUs talk over NVLink, on Volta and later, and then across the network too
  (the NIC on the GPU's PCIe switch: tuning.cc lines 514-536; by release, :func:`.tuning.ll128_allowed`).
  1.9 µs per NVLink step, 4.0 µs per network step, 92 % bandwidth.
* **Simple**: large chunks, then a memory fence and a flag. Full bandwidth, the largest per-step cost
  (3.4 µs NVLink, 5.7 µs PCIe, 14 µs network: the α values of the catalog are these).

and runs each collective on several **channels** (parallel rings or trees, each driven by one thread
block with its share of the bandwidth; caps per channel are in the data).

For each pair this module builds a :class:`~nvcourse.costmodel.model.Cost`:

* latency = NCCL's ``baseLatencies[algo][proto]`` + its per-step ``hwLatencies`` times the steps that
  cross each link class, by the formulas of ``ncclTopoTuneModel`` (``tuning.cc`` lines 384-435);
* seconds per byte = the course's own Simple-protocol bandwidth (:func:`nvcourse.costmodel.model.cost`,
  from the catalog, validated at large sizes) divided by NCCL's protocol efficiency, and never faster
  than NCCL's caps (``llMaxBw``, per-channel LL128 caps) converted to algorithm bandwidth. NVLS and
  NVLSTree add what NCCL's NVLS graph sets: at most 32 heads, and a per-channel cap across nodes
  (:mod:`.nvls_graph`).

>>> from nvcourse.costmodel.model import configure
>>> c = configure("dgx-h100", 8)
>>> round(nccl_cost("allreduce", "ring", "LL", c).latency_s * 1e6, 2)   # 6.6 + 14 steps x 0.6 us
15.0
"""

from __future__ import annotations

from . import corrections, nccl_table, nvls_graph, p2p, pipeline, tuning
from .config import Config, tree_network_s_per_byte
from .costs import Cost
from .latency import NCCL_NAMES, latency_s, nsteps
from .model import cost

__all__ = ["NCCL_NAMES", "protocols_for", "latency_s", "simple_s_per_byte", "nccl_cost", "arch_of"]

#: Algorithms NCCL runs with the Simple protocol only (tuning.cc line 301, 302-304, 338-339).
_SIMPLE_ONLY = ("nvls", "nvlstree", "collnet", "pat")


def arch_of(c: Config) -> str:
    return tuning.gpu_arch(c.system.gpu)


def protocols_for(op: str, algo: str, c: Config) -> tuple[str, ...]:
    """Protocols NCCL would consider for ``algo`` here (LL128 only where NCCL enables it by default)."""
    if algo in _SIMPLE_ONLY or algo not in NCCL_NAMES or op in ("alltoall", "sendrecv"):
        return ("Simple",)
    out = ["LL"]
    if tuning.ll128_allowed(c.system.gpu, c.system.has_nvlink, c.nccl_version):
        out.append("LL128")
    out.append("Simple")
    return tuple(out)


def simple_s_per_byte(op: str, algo: str, c: Config) -> float:
    """Seconds per byte with the Simple protocol: the course's bandwidth model (catalog figures), with NCCL's
    NVLS heads (at most 32) and NVLSTree cap for NVLS and NVLSTree (:mod:`.nvls_graph`)."""
    if algo == "nvls":
        return nvls_graph.nvls_s_per_byte(op, c)
    if algo == "nvlstree":
        # the NVLS part in each node, the trees between nodes, and NCCL's per-channel NVLSTree cap
        return max(nvls_graph.nvls_s_per_byte(op, c), tree_network_s_per_byte(c),
                   nvls_graph.nvlstree_cap_s_per_byte(c))
    return cost(op, algo, c).s_per_byte


def _cap_GBps(op: str, algo: str, proto: str, c: Config) -> float | None:
    """NCCL's cap on this pair's bus bandwidth, GB/s, or None."""
    arch, k = arch_of(c), c.nodes
    nch = tuning.coll_channels(arch)
    if proto == "LL" and algo in ("ring", "tree"):
        return tuning.ll_max_bw_GBps(arch, k, c.system.host_cpu, c.nccl_version)
    if proto == "LL128" and algo in ("ring", "tree") and nch is not None:
        kind = "ring_ll128" if algo == "ring" else "tree_ll128"
        return nch * tuning.per_channel_max_GBps(kind, arch, k, c.nccl_version, op) or None
    return None


def _proto_efficiency(op: str, algo: str, proto: str, c: Config) -> float:
    v = c.nccl_version
    if proto == "Simple":
        return tuning.efficiency("pat", v) if algo == "pat" else 1.0
    if algo == "ring":
        name = "ring_ll" if proto == "LL" else "ring_ll128"
        return tuning.efficiency(name, v, op=op, nodes=c.nodes, gpus_per_node=c.gpus)
    if proto == "LL":
        return tuning.efficiency("tree_ll", v)
    return tuning.efficiency("tree_ll128_one_node" if c.nodes == 1 else "tree_ll128_multi_node", v)


def _pipeline_fill(op: str, algo: str, c: Config) -> pipeline.PipelineFill | None:
    """The warp-group pipeline of an NVLS all-reduce whose fill NCCL's tuner leaves out (:mod:`.pipeline`): NVLS on
    one domain, and NVLSTree across nodes on NCCL's own network transport. Not over a cloud fabric's net plugin: there
    the model already times NVLSTree's network steps at the latency the plugin reports to steer NCCL's choice
    (``data/nccl_tuning.toml`` ``[nvlstree_pipeline]``). The course's textbook α-β cost (model.cost) has none."""
    if op != "allreduce":
        return None
    if algo == "nvls" and c.nodes == 1:
        return pipeline.nvls_allreduce(c.system.gpu, c.gpus)
    if algo == "nvlstree" and p2p.own_transport(c):
        return pipeline.nvlstree_allreduce(c.system.gpu, nvls_graph.heads(c), c.nodes)
    return None


def nccl_cost(op: str, algo: str, proto: str, c: Config) -> Cost:
    """The :class:`Cost` NCCL's model gives (``algo``, ``proto``) for ``op`` on ``c`` (see the module doc)."""
    if proto not in protocols_for(op, algo, c):
        allowed = ", ".join(protocols_for(op, algo, c))
        raise ValueError(f"proto {proto!r} is not used by NCCL with {algo} for {op} here; allowed: {allowed}")
    spb = simple_s_per_byte(op, algo, c) / _proto_efficiency(op, algo, proto, c)
    cap = _cap_GBps(op, algo, proto, c)
    if cap is not None:
        spb = max(spb, 1.0 / (cap * 1e9 * nccl_table.algbw_ratio(op, algo, c.ranks)))
    steps = nsteps(op, c.ranks) if algo == "ring" else 1
    fill = _pipeline_fill(op, algo, c)
    ramp = corrections.channel_ramp(algo, proto, c)
    # timed with the model's latency, chosen with NCCL's (they differ on AWS EFA p5 with LL: latency.py, cloud.py)
    lat, nccl_lat = latency_s(op, algo, proto, c, time=True), latency_s(op, algo, proto, c)
    # timed with the links' rate, chosen with NCCL's table (its search's channels x speed) where the model has it, and
    # then as NCCL chooses: by its formula alone, without the NVLS fill it leaves out (a 6-H100 NCCL 2.29 log picks
    # NVLS at 256-512 MiB, where NCCL's table rates NVLS and the ring alike and the fill would tip the model to a ring)
    table = nccl_table.algbw_GBps(op, algo, proto, c)
    return Cost(lat, spb, steps, fill, corrections.for_pair(op, algo, proto, c), ramp,
                None if nccl_lat == lat else nccl_lat, pick_with_pipeline=algo != "nvlstree" and table is None,
                choice_s_per_byte=None if table is None else 1.0 / (table * 1e9))

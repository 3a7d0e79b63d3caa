"""The hardware catalog: links, GPUs and systems, read from ``data/catalog.toml``.

Every figure comes from the TOML file, where it carries a source; this module only loads, validates
and derives. Field names carry their units (``line_GBps_dir`` = GB/s, 10^9 B/s, one direction).

>>> from nvcourse import catalog
>>> catalog.get_link("nvlink4").line_GBps_dir
25.0
>>> catalog.get_system("dgx-h100").scaleup_GBps_dir     # 18 links x 25 GB/s
450.0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from . import _data

__all__ = [
    "Source",
    "Link",
    "GPU",
    "System",
    "COUNT_FIELDS",
    "UNIT_SUFFIXES",
    "raw",
    "sources",
    "links",
    "gpus",
    "systems",
    "get_link",
    "get_gpu",
    "get_system",
    "describe_source",
]

#: Unit suffixes allowed on numeric fields of the TOML file (see its header).
UNIT_SUFFIXES: tuple[str, ...] = (
    "_GBps_dir",
    "_GBps_bidir",
    "_Gbps_dir",
    "_GTps",
    "_us",
    "_GB",
    "_TBps",
    "_TFLOPS",
    "_W",
)
#: Numeric fields that are counts, years or ratios, so they have no unit.
COUNT_FIELDS: frozenset[str] = frozenset(
    {
        "generation",
        "lanes",
        "year",
        "efficiency",
        "nvlink_links",
        "gpus_per_host",
        "gpus_per_domain",
        "links_per_gpu",
        "nvswitch_count",
        "switch_trays",
        "switch_chip_ports",
        "switch_tray_ports",
        "switch_links_per_gpu",
        "nvls_min_gpus",
        "nics_per_host",
        "nvlink_pairs",
        "gpu_socket",
        "gpu_pcie_leaf",
    }
)
LINK_KINDS = ("pcie", "nvlink", "infiniband", "ethernet")
#: Host CPU vendors as NCCL's topology tells them apart (``NCCL_TOPO_CPU_VENDOR_*``, Arm its own arch).
HOST_CPUS = ("intel", "amd", "arm")


@dataclass(frozen=True)
class Source:
    key: str
    title: str
    url: str


@dataclass(frozen=True)
class Link:
    """One link: an NVLink link, a PCIe x16 slot, or one NIC port.

    Attributes:
        line_GBps_dir: line rate, GB/s (10^9 B/s) in ONE direction.
        alpha_us: per-step latency charged by NCCL's cost model for this link class, µs.
        efficiency: achievable / line rate for large messages (0-1).
    """

    id: str
    name: str
    kind: str
    generation: int
    line_GBps_dir: float
    alpha_us: float
    efficiency: float
    notes: str = ""
    lanes: int | None = None
    lane_rate_GTps: float | None = None
    lane_rate_Gbps_dir: float | None = None
    line_GBps_bidir: float | None = None
    line_Gbps_dir: float | None = None
    src: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def achievable_GBps_dir(self) -> float:
        """What software reaches for large messages, GB/s per direction: line rate x efficiency."""
        return self.line_GBps_dir * self.efficiency

    @property
    def alpha_s(self) -> float:
        """Per-message latency α in seconds."""
        return self.alpha_us * 1e-6

    @property
    def beta_Bps(self) -> float:
        """Achievable bandwidth β in bytes per second, one direction."""
        return self.achievable_GBps_dir * 1e9


@dataclass(frozen=True)
class GPU:
    """A GPU model. ``memory_GB`` is the vendor's decimal figure; ``bf16_TFLOPS`` is dense (no sparsity);
    ``bf16_sparse_TFLOPS`` is the vendor's headline with 2:4 sparsity (0 where the catalog does not quote it)."""

    id: str
    name: str
    year: int
    memory_GB: float
    memory_TBps: float
    bf16_TFLOPS: float
    power_W: float
    pcie: str
    bf16_sparse_TFLOPS: float = 0.0
    nvlink: str | None = None
    nvlink_links: int = 0
    nvlink_GBps_bidir: float = 0.0
    notes: str = ""
    src: dict[str, str] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class System:
    """A node design (or a rack-scale NVLink domain) with its scale-up and scale-out links.

    A *host* is one server (one compute tray in an NVL72); the *domain* is the set of GPUs joined by
    NVLink (1 when there is none).
    """

    id: str
    name: str
    gpu: str
    scale_up_link: str
    gpus_per_host: int
    gpus_per_domain: int
    links_per_gpu: int
    nvswitch_count: int
    in_switch_reduction: bool
    nics_per_host: int
    nic_link: str
    topology: str
    notes: str = ""
    switch_links_per_gpu: tuple[int, ...] = ()
    switch_trays: int | None = None
    #: NVLink ports of one NVSwitch chip (Hopper's third-generation NVSwitch: 64)
    switch_chip_ports: int | None = None
    #: NVLink ports of one NVL72 switch tray (two chips) and its switching capacity, both directions added (GB/s)
    switch_tray_ports: int | None = None
    switch_tray_GBps_bidir: float | None = None
    nvls_min_gpus: int | None = None
    nvlink_pairs: tuple[tuple[int, int, int], ...] = ()
    gpu_socket: tuple[int, ...] = ()
    gpu_pcie_leaf: tuple[int, ...] = ()
    inter_socket_GBps_dir: float | None = None
    #: the host CPU's vendor as NCCL classes it ("intel", "amd", "arm"; "" unknown): NCCL's tuner charges an
    #: AMD host more per network step and caps LL differently across nodes (``data/nccl_tuning.toml``)
    host_cpu: str = ""
    src: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def nvlink_map(self) -> dict[tuple[int, int], int]:
        """Switchless NVLink mesh (DGX-1): ``{(gpu_a, gpu_b): links}``, empty for switched systems."""
        return {(a, b): n for a, b, n in self.nvlink_pairs}

    @property
    def gpu_spec(self) -> GPU:
        return get_gpu(self.gpu)

    @property
    def link(self) -> Link:
        """The scale-up link type between GPUs (NVLink generation, or PCIe without NVLink)."""
        return get_link(self.scale_up_link)

    @property
    def nic(self) -> Link:
        """The scale-out NIC port type."""
        return get_link(self.nic_link)

    @property
    def has_nvlink(self) -> bool:
        return self.link.kind == "nvlink"

    @property
    def scaleup_GBps_dir(self) -> float:
        """Line rate of one GPU's scale-up links, GB/s per direction (links x per-link rate)."""
        return self.links_per_gpu * self.link.line_GBps_dir

    @property
    def scaleup_achievable_GBps_dir(self) -> float:
        """Achievable scale-up bandwidth per GPU, GB/s per direction."""
        return self.scaleup_GBps_dir * self.link.efficiency

    @property
    def nics_per_domain(self) -> int:
        return self.nics_per_host * max(1, self.gpus_per_domain // self.gpus_per_host)

    @property
    def scaleout_GBps_dir_per_gpu(self) -> float:
        """NIC line rate available to one GPU, GB/s per direction."""
        return self.nics_per_host * self.nic.line_GBps_dir / self.gpus_per_host


def raw() -> dict[str, Any]:
    """The parsed TOML file, as plain dictionaries (for integrity tests and the JSON output)."""
    return _data.load("catalog")


def _build(cls: type, key: str, record: dict[str, Any]):
    names = set(cls.__dataclass_fields__)
    unknown = set(record) - names
    if unknown:
        raise ValueError(f"catalog: {cls.__name__.lower()} {key!r} has unknown fields {sorted(unknown)}")
    values = dict(record)
    for name in ("switch_links_per_gpu", "gpu_socket", "gpu_pcie_leaf"):
        if name in values:
            values[name] = tuple(values[name])
    if "nvlink_pairs" in values:
        values["nvlink_pairs"] = tuple(tuple(pair) for pair in values["nvlink_pairs"])
    return cls(id=key, **values)


@cache
def sources() -> dict[str, Source]:
    return {k: Source(k, v["title"], v["url"]) for k, v in raw()["sources"].items()}


@cache
def links() -> dict[str, Link]:
    return {k: _build(Link, k, v) for k, v in raw()["links"].items()}


@cache
def gpus() -> dict[str, GPU]:
    return {k: _build(GPU, k, v) for k, v in raw()["gpus"].items()}


@cache
def systems() -> dict[str, System]:
    return {k: _build(System, k, v) for k, v in raw()["systems"].items()}


def _get(table: dict[str, Any], key: str, what: str):
    if not isinstance(key, str) or key not in table:
        raise ValueError(f"unknown {what} {key!r}; allowed: {', '.join(table)}")
    return table[key]


def get_link(link_id: str) -> Link:
    """Return the link with this id (e.g. ``'nvlink4'``, ``'pcie5'``, ``'ib-ndr'``); ValueError lists the ids."""
    return _get(links(), link_id, "link")


def get_gpu(gpu_id: str) -> GPU:
    return _get(gpus(), gpu_id, "GPU")


def get_system(system_id: str) -> System:
    """Return the system with this id (e.g. ``'dgx-h100'``); ValueError lists the ids."""
    return _get(systems(), system_id, "system")


def describe_source(ref: str) -> str:
    """Human-readable text for a ``src`` entry: a source title with URL, a derivation or an assumption."""
    if ref.startswith("derived:"):
        return f"derived: {ref.removeprefix('derived:')}"
    if ref.startswith("assumption:"):
        return f"ASSUMPTION: {ref.removeprefix('assumption:')}"
    s = sources()[ref]
    return f"{s.title} <{s.url}>"

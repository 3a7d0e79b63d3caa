"""Cloud fabrics as NICs of the cost model (``data/cloud_fabrics.toml``): AWS EFA on p4d, p4de and p5.

A cloud fabric is a NIC tied to an instance type, so it brings its own count per host, and the latency its NCCL
net plugin reports to NCCL (``ncclNetProperties_t.latency``), which NCCL's tuner adds to every network step from
2.12 on (:func:`inter_latency_us`). NCCL's own IB and socket transports report 0: a catalog NIC changes nothing.

>>> f = fabric("efa-p5")
>>> f.nics_per_host, f.link.line_GBps_dir, f.plugin_latency_us
(32, 12.5, 75.0)
>>> inter_latency_us(14.0, 75.0, "Simple", "2.30"), inter_latency_us(2.7, 75.0, "LL", "2.14")
(164.0, 75.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from .. import _validate, catalog
from .._data import load

__all__ = ["CloudFabric", "fabrics", "fabric", "inter_latency_us", "step_time_us"]


@dataclass(frozen=True)
class CloudFabric:
    """One instance type's NICs: ``link`` is one NIC (line rate per direction), ``nics_per_host`` how many the
    instance has, ``plugin_latency_us`` what its net plugin reports to NCCL, µs."""

    id: str
    instance: str
    nics_per_host: int
    plugin_latency_us: float
    link: catalog.Link
    #: time of one LL network step, µs, as the plugin vendor's own tuner charges it (None: none published)
    ll_step_us: float | None = None
    #: NICs the plugin joins into one NCCL device: a GPU's point-to-point message is striped over them
    rails_per_device: int = 1
    #: the plugin's smallest stripe, bytes: a message of b bytes runs on ceil(b / min_stripe_bytes) rails
    min_stripe_bytes: float = 0.0


def _raw() -> dict[str, Any]:
    return load("cloud_fabrics")


def _build(key: str, rec: dict[str, Any]) -> CloudFabric:
    link = catalog.Link(
        id=key, name=rec["name"], kind="ethernet", generation=0, line_GBps_dir=rec["line_Gbps_dir"] / 8,
        alpha_us=rec["alpha_us"], efficiency=rec["efficiency"], notes=rec.get("notes", ""),
        line_Gbps_dir=rec["line_Gbps_dir"], src=dict(rec.get("src", {})),
    )  # fmt: skip
    step = rec.get("ll_step_us")
    return CloudFabric(key, rec["instance"], int(rec["nics_per_host"]), float(rec["plugin_latency_us"]), link,
                       None if step is None else float(step), int(rec.get("rails_per_device", 1)),
                       float(rec.get("min_stripe_bytes", 0)))


@cache
def fabrics() -> dict[str, CloudFabric]:
    """Every cloud fabric, by id."""
    return {k: _build(k, v) for k, v in _raw()["fabrics"].items()}


def fabric(fabric_id: str) -> CloudFabric:
    """The cloud fabric ``fabric_id``; ValueError lists the ids."""
    table = fabrics()
    return table[_validate.choice("cloud fabric", fabric_id, table)]


def _version(v: str) -> tuple[int, int]:
    major, minor = v.split(".")[:2]
    return int(major), int(minor)


def inter_latency_us(hw_net_us: float, plugin_us: float, proto: str, nccl_version: str) -> float:
    """NCCL's latency of one network step, µs: its ``hwLatencies[NET]`` figure ``hw_net_us`` with the plugin's
    reported latency ``plugin_us`` as release ``nccl_version`` (``X.Y``) uses it (data ``[latency_inter]``)."""
    if not plugin_us:
        return hw_net_us
    rule = _raw()["latency_inter"]
    v = _version(nccl_version)
    if v < _version(rule["replaces_from"]):
        return hw_net_us
    if v < _version(rule["added_from"]):
        return plugin_us
    return hw_net_us + plugin_us * (2 if proto == "Simple" else 1)


def step_time_us(ll_step_us: float | None, proto: str) -> float | None:
    """The time of one network step, µs, that the model charges instead of NCCL's figure: the vendor's ``ll_step_us``
    for LL (data ``[fabrics.*] ll_step_us``), None otherwise (NCCL's figure stays: the vendor's tuner gives LL128 and
    Simple steps the same few µs, which leaves the calibration runs' LL128 and Simple sizes up to 59 % too fast)."""
    if ll_step_us is None or proto != "LL":
        return None
    return ll_step_us

"""``nvcourse systems`` and ``nvcourse links``: print the hardware catalog."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from . import catalog
from .i18n import localize_numbers, number
from .i18n import translate as _
from .textio import print_json
from .units import format_size


def system_record(system: catalog.System) -> dict:
    """One system as JSON-ready data: catalog fields, derived totals and the sources of each figure."""
    record = {k: v for k, v in asdict(system).items() if k != "src"}
    record["switch_links_per_gpu"] = list(system.switch_links_per_gpu)
    record.update(
        scaleup_GBps_dir=system.scaleup_GBps_dir,
        scaleup_achievable_GBps_dir=round(system.scaleup_achievable_GBps_dir, 3),
        nic_line_GBps_dir=system.nic.line_GBps_dir,
        scaleout_GBps_dir_per_gpu=system.scaleout_GBps_dir_per_gpu,
        sources={k: catalog.describe_source(v) for k, v in system.src.items()},
    )
    return record


def link_record(link: catalog.Link) -> dict:
    record = {k: v for k, v in asdict(link).items() if k != "src" and v is not None}
    record.update(
        achievable_GBps_dir=round(link.achievable_GBps_dir, 3),
        half_bandwidth_bytes=round(link.alpha_s * link.beta_Bps),
        sources={k: catalog.describe_source(v) for k, v in link.src.items()},
    )
    return record


def _systems(args: argparse.Namespace) -> int:
    items = list(catalog.systems().values())
    if args.json:
        print_json([system_record(s) for s in items])
        return 0
    # the _() calls stand outside the f-string: the catalog's extractor does not look inside one
    per_host, domain, link, links = _("GPUs/host"), _("NVLink dom."), _("scale-up link"), _("links")
    red, nics = _("in-switch red."), _("NICs/host")
    header = f"{'id':<13} {'GPU':<10} {per_host:>9} {domain:>11} {link:<14} " \
             f"{links:>5} {'GB/s/dir':>8} {'NVSwitch':>8} {red:>14} {nics:>9} " \
             f"{'NIC':<10}"
    print(header)
    print("-" * len(header))
    yes, no = _("yes"), _("no")
    for s in items:
        print(
            f"{s.id:<13} {s.gpu:<10} {s.gpus_per_host:>9} {s.gpus_per_domain:>11} {s.scale_up_link:<14} "
            f"{s.links_per_gpu:>5} {number(s.scaleup_GBps_dir, '>8.1f')} {s.nvswitch_count:>8} "
            f"{yes if s.in_switch_reduction else no:>14} {s.nics_per_host:>9} {s.nic_link:<10}"
        )
    print("\n" + _("GB/s/dir = line rate of one GPU's scale-up links, 10^9 bytes/s in one direction."))
    print(_("Sources: nvcourse systems --json (every figure with its source)."))
    return 0


def _links(args: argparse.Namespace) -> int:
    items = list(catalog.links().values())
    if args.json:
        print_json([link_record(link) for link in items])
        return 0
    kind, line, eff, ach, alpha = _("kind"), _("line GB/s/dir"), _("efficiency"), _("achievable"), _("alpha µs")
    header = (f"{'id':<10} {kind:<10} {line:>13} {eff:>10} {ach:>10} "
              f"{alpha:>8} {'n½':>10}")
    print(header)
    print("-" * len(header))
    for link in items:
        print(
            f"{link.id:<10} {link.kind:<10} {number(link.line_GBps_dir, '>13.2f')} "
            f"{number(link.efficiency, '>10.3f')} {number(link.achievable_GBps_dir, '>10.2f')} "
            f"{number(link.alpha_us, '>8.1f')} {localize_numbers(format_size(link.alpha_s * link.beta_Bps)):>10}"
        )
    print("\n" + _("NVLink rows are ONE link; a GPU has several (nvcourse systems). n½ = α·β, the size reaching "
                   "half of β."))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("systems", help=_("list the systems of the hardware catalog"))
    p.add_argument("--json", action="store_true", help=_("machine-readable output with every figure's source"))
    p.set_defaults(handler=_systems)
    p = sub.add_parser("links", help=_("list link types with the alpha-beta parameters"))
    p.add_argument("--json", action="store_true", help=_("machine-readable output with every figure's source"))
    p.set_defaults(handler=_links)

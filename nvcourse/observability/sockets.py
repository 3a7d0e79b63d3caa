"""Which TCP ports a process tree listens on, and on which address — read from Linux ``/proc``.

A distributed job's control plane (torch.distributed's TCPStore, gloo's pairs, NCCL's bootstrap) is plain
TCP without authentication: whoever can reach the port can join or disturb the job. This module answers
the operator's question "what does this job expose, and to whom?" the way ``ss -ltnp`` does, from
``/proc/net/tcp``, ``/proc/net/tcp6`` and ``/proc/<pid>/fd`` (Linux only).

Address decoding follows the kernel's ``/proc/net/tcp`` format (``Documentation/networking/proc_net_tcp.rst``):
the local address is the IPv4 address as one 32-bit word in host byte order, in hex (little-endian machines
print ``0100007F`` for 127.0.0.1), then ``:`` and the port in hex; IPv6 is four such words; state ``0A`` is LISTEN.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Listener", "parse_proc_net_tcp", "descendants", "socket_inodes", "listeners_of", "is_loopback"]

_LISTEN = "0A"


@dataclass(frozen=True)
class Listener:
    """One listening TCP socket: its address (``ipaddress`` object), port and kernel inode."""

    address: ipaddress.IPv4Address | ipaddress.IPv6Address
    port: int
    inode: int

    @property
    def loopback(self) -> bool:
        return is_loopback(self.address)

    def __str__(self) -> str:
        host = f"[{self.address}]" if self.address.version == 6 else str(self.address)
        return f"{host}:{self.port}"


def _decode_address(hexaddr: str, byteorder: str = sys.byteorder) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """``0100007F`` → 127.0.0.1 (on a little-endian host); 32 hex digits → an IPv6 address (4 words)."""
    words = [hexaddr[i : i + 8] for i in range(0, len(hexaddr), 8)]
    if len(hexaddr) not in (8, 32):
        raise ValueError(f"address must be 8 or 32 hex digits, got {hexaddr!r}")
    raw = b"".join(int(w, 16).to_bytes(4, byteorder) for w in words)
    return ipaddress.ip_address(raw)


def parse_proc_net_tcp(text: str, *, byteorder: str = sys.byteorder) -> list[Listener]:
    """The LISTEN sockets of a ``/proc/net/tcp`` or ``/proc/net/tcp6`` text (header line skipped)."""
    out = []
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 10 or f[3] != _LISTEN:
            continue
        addr, port = f[1].split(":")
        out.append(Listener(_decode_address(addr, byteorder), int(port, 16), int(f[9])))
    return out


def is_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """127.0.0.0/8, ::1, or an IPv4-mapped loopback (``::ffff:127.0.0.1``); 0.0.0.0 and :: are *every* interface."""
    if address.version == 6 and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def descendants(pid: int, proc: Path = Path("/proc")) -> list[int]:
    """``pid`` and every process below it (children, grandchildren...), from ``/proc/<pid>/stat``."""
    parent: dict[int, int] = {}
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue  # the process ended while we looked
        # the command name (field 2) is in parentheses and may contain spaces: split after the last ')'
        parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += [c for c, pp in parent.items() if pp == p]
    return out


def socket_inodes(pid: int, proc: Path = Path("/proc")) -> set[int]:
    """Inodes of the sockets a process holds open (``/proc/<pid>/fd/* -> socket:[inode]``)."""
    out = set()
    try:
        fds = list((proc / str(pid) / "fd").iterdir())
    except OSError:
        return out
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(int(target[8:-1]))
    return out


def listeners_of(pid: int, proc: Path = Path("/proc")) -> list[Listener]:
    """Every TCP socket that ``pid`` or one of its descendants listens on."""
    inodes: set[int] = set()
    for p in descendants(pid, proc):
        inodes |= socket_inodes(p, proc)
    found = []
    for name in ("tcp", "tcp6"):
        try:
            text = (proc / "net" / name).read_text()
        except OSError:
            continue
        found += [s for s in parse_proc_net_tcp(text) if s.inode in inodes]
    return found

"""The course's own multi-process demo keeps its control plane on loopback (chapter 08b, section 2).

torch.distributed's TCPStore and gloo's pairs are unauthenticated TCP. The test starts the torch backend
of ``nvcourse bench`` and reads ``/proc/net/tcp(6)`` while it runs: every socket its process tree listens on
must be on 127.0.0.1 (or ::1), never 0.0.0.0 / [::] (every interface).
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nvcourse.observability.sockets import is_loopback, listeners_of, parse_proc_net_tcp

ROOT = Path(__file__).resolve().parents[1]

# Lines in the format of the kernel's Documentation/networking/proc_net_tcp.rst
# (https://www.kernel.org/doc/Documentation/networking/proc_net_tcp.txt): its example connection
# 010310AC:9C4C -> 030310AC:1770 is 172.16.3.1:40012 -> 172.16.3.3:6000 (state 01, ESTABLISHED).
PROC_NET_TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:8D0B 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 81224 1 0 100 0 0 10 0
   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 15012 1 0 100 0 0 10 0
  46: 010310AC:9C4C 030310AC:1770 01 00000000:00000000 00:00000000 00000000  1000        0 54165785 4 0 20 4 -1
"""
_ZERO6 = "0" * 32
_TAIL = " 0A 00000000:00000000 00:00000000 00000000  1000        0 {inode} 1 0 100 0 0 10 0"
PROC_NET_TCP6 = "\n".join([
    "  sl  local_address remote_address st tx_queue rx_queue tr tm->when retrnsmt uid timeout inode",
    f"   0: {_ZERO6}:DF6B {_ZERO6}:0000" + _TAIL.format(inode=90001),  # [::]:57195
    f"   1: {'0' * 24}01000000:1F90 {_ZERO6}:0000" + _TAIL.format(inode=90002),  # [::1]:8080
])


def test_parse_ipv4_listeners_and_skip_other_states():
    got = parse_proc_net_tcp(PROC_NET_TCP, byteorder="little")
    assert [(str(s.address), s.port, s.inode) for s in got] == [("127.0.0.1", 36107, 81224), ("0.0.0.0", 22, 15012)]
    assert [s.loopback for s in got] == [True, False]  # 0.0.0.0 is every interface, not loopback


def test_parse_ipv6_any_and_loopback():
    got = parse_proc_net_tcp(PROC_NET_TCP6, byteorder="little")
    assert [(str(s), s.loopback) for s in got] == [("[::]:57195", False), ("[::1]:8080", True)]


def test_ipv4_mapped_loopback_counts_as_loopback():
    assert is_loopback(ipaddress.ip_address("::ffff:127.0.0.1"))
    assert not is_loopback(ipaddress.ip_address("::ffff:10.0.0.1"))


def _torch_installed() -> bool:
    try:
        import torch.distributed  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.slow  # spawns two torch processes: ~10 s idle, over a minute on a loaded machine
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux /proc/net/tcp")
@pytest.mark.skipif(not _torch_installed(), reason="PyTorch is not installed (pip install torch, CPU build)")
def test_bench_torch_backend_listens_on_loopback_only():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "nvcourse", "bench", "allreduce", "--backend", "torch", "--procs", "2",
           "--bytes", "1MiB", "--iters", "200", "--warmup", "1", "--timeout", "60"]
    p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = {}
    try:
        deadline = time.monotonic() + 120
        while p.poll() is None and time.monotonic() < deadline:
            for s in listeners_of(p.pid):
                seen[str(s)] = s.loopback
            time.sleep(0.02)
    finally:
        if p.poll() is None:
            p.kill()
        out, err = p.communicate()
    assert p.returncode == 0, err.decode()[-2000:]
    assert seen, "saw no listening socket while the benchmark ran (TCPStore must listen somewhere)"
    exposed = [a for a, lo in seen.items() if not lo]
    assert not exposed, f"the torch backend listens on non-loopback addresses: {exposed}"


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux /proc/net/tcp")
def test_listeners_of_finds_a_socket_this_process_opens():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        found = [x for x in listeners_of(os.getpid()) if x.port == port]
        assert len(found) == 1 and found[0].loopback and str(found[0]) == f"127.0.0.1:{port}"
    assert not [x for x in listeners_of(os.getpid()) if x.port == port]  # closed: gone

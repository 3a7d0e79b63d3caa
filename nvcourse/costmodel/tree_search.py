"""NCCL's search for a tree graph on one switch domain, step by step: what its depth-first search finds in its budget.

NCCL builds an all-reduce tree on one node by searching for as many tree channels as the ring has (``minChannels =
maxChannels``), each a chain of every GPU, at one speed per channel (``src/graph/search.cc`` ``ncclTopoCompute``). On
a switch a chain's hop from GPU a to GPU b is charged on a's link to the switch and on the switch's link to b, so a
chain of n GPUs uses n - 1 of each kind: at best n/(n-1) x a GPU's bandwidth. Whether the search reaches that depends
on the order it tries chains in and on its step budget, which a closed form cannot say; this module runs the same
search, and :func:`.nccl_table.tree_graph` takes its result.

What the emulation copies (NCCL 2.30's ``search.cc``; ``data/nccl_tuning.toml`` ``[tree_search]`` for the budgets):

* the links: every GPU has one link up to the switch and one down, each of ``port`` GB/s, and the search subtracts a
  channel's speed from both links of each hop, rounded to 1e-3 GB/s in single precision (``SUB_ROUND``);
* the order: the first channel tries GPUs in PCI order (0, 1, 2, ...), every later one first replays the previous
  chain, then (unless the search forces the same chain on every channel) starts from each GPU in turn; on a switch a
  chain goes from a GPU only to its neighbours by index, the next one first (``ncclTopoSearchNextGpuSort``): the next
  or the previous for the balanced tree, the next only for the simpler tree;
* the budget: each visit of a GPU costs one step; 256 steps while the channels must repeat one chain, 16,384
  otherwise; a search stops at its first complete set of channels;
* the outer loop: same chains, then different chains; on Hopper and later the simpler tree pattern (which NCCL 2.26+
  then rates x0.85 in its tuner); then the next slower speed; then, from the solution, faster speeds with as many
  channels (pass 2), while below twice the speed found (NCCL raises bwIntra only; bwInter stays).

Left out, because they cannot act here: the 0.49 rule on slower speeds and the global budget (both act only once a
solution exists, and the first solution is final: minChannels = maxChannels), the path types (every GPU-to-GPU path
is NVLink), the network and cross-NIC steps (one node), ncclTopoDupChannels (maxChannels is the channel count, so it
divides by 1). Where no speed holds the channels NCCL falls back to one channel of 0.1 GB/s; the port returns None.

>>> h100 = (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0)   # 2.21+; 18 NVLinks x 20.6 GB/s
>>> [search_tree(n, 370.8, 12, h100, True).speed_GBps for n in (2, 3, 4, 8)]
[60.0, 40.0, 30.0, 30.0]
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field

import numpy as np

from . import tuning

__all__ = ["TreeSearch", "search_tree", "search_chains"]

_F = np.float32


@dataclass(frozen=True)
class TreeSearch:
    """What NCCL's tree search settles on: ``channels`` chains of ``speed_GBps`` (bwIntra, GB/s per channel, one
    direction), with the ``pattern`` that found them (``balanced_tree`` or ``tree``) and the steps it spent;
    ``inter_GBps`` is the speed pass 1 found (bwInter, which pass 2 leaves)."""

    channels: int
    speed_GBps: float
    pattern: str
    steps: int
    inter_GBps: float = 0.0


def _budgets() -> dict[str, int]:
    t = tuning.raw()["tree_search"]
    return {k: int(t[k]) for k in ("same_channels_steps", "steps")}


def _sub_round(a: np.float32, b: np.float32) -> np.float32:
    """``SUB_ROUND``: a - b rounded to 1e-3, in single precision, halves away from zero as roundf does."""
    x = _F(_F(a - b) * _F(1000))
    r = _F(np.floor(np.abs(x) + _F(0.5))) * _F(np.sign(x))
    return _F(r / _F(1000))


@dataclass
class _Search:
    """One call of ncclTopoSearchRec and everything below it, on ``n`` GPUs with links of ``port`` GB/s."""

    n: int
    channels: int
    speed: np.float32
    pattern: str
    same_channels: bool
    time: int
    up: list[np.float32] = field(default_factory=list)
    down: list[np.float32] = field(default_factory=list)
    chains: list[list[int]] = field(default_factory=list)
    found: list[list[int]] | None = None
    visits: int = 0

    def _hop(self, a: int, b: int, sign: int) -> bool:
        """followPath on a -> switch -> b: charge (or give back) the speed on both links, or charge nothing."""
        bw = _F(self.speed * sign)
        if sign > 0 and self.up[a] < bw:
            return False
        if sign > 0 and self.down[b] < bw:
            return False
        self.up[a] = _sub_round(self.up[a], bw)
        self.down[b] = _sub_round(self.down[b], bw)
        return True

    def _neighbours(self, g: int, used: set[int]) -> list[int]:
        """The GPUs a chain may go to next from ``g`` on a switch, in NCCL's order."""
        nxt, prev = (g + 1) % self.n, (g - 1) % self.n
        first = [nxt] if self.pattern == "tree" else [nxt, prev]
        return [x for x in dict.fromkeys(first) if x not in used]

    def rec(self) -> None:
        """ncclTopoSearchRec: start the next channel (PCI order, then a replay, then every GPU)."""
        if not self.chains:
            self._try(None, 0, "pci", [])
        else:
            self._try(None, self.chains[-1][0], "replay", [])
        if not self.same_channels or not self.chains:
            for g in range(self.n):
                self._try(None, g, "normal", [])

    def _try(self, frm: int | None, g: int, order: str, chain: list[int]) -> None:
        """ncclTopoSearchTryGpu: go to GPU ``g`` if the hop's links hold the speed, search on, then undo."""
        if frm is not None and not self._hop(frm, g, 1):
            return
        self._visit(g, order, [*chain, g])
        if frm is not None:
            self._hop(frm, g, -1)

    def _visit(self, g: int, order: str, chain: list[int]) -> None:
        """ncclTopoSearchRecGpu for a chain that has reached ``g``."""
        if self.time <= 0:
            return
        self.time -= 1
        self.visits += 1
        step = len(chain) - 1
        if step < self.n - 1:
            if order == "pci":
                nexts = [step + 1]
            elif order == "replay":
                nexts = [self.chains[-1][step + 1]]
            else:
                nexts = self._neighbours(g, set(chain))
            for x in nexts:
                self._try(g, x, order, chain)
            return
        self._close(chain)

    def _close(self, chain: list[int]) -> None:
        """A chain is complete: the channel counts (the step of ``step == ngpus``), and the search goes on."""
        if self.time <= 0:
            return
        self.time -= 1
        self.visits += 1
        self.chains.append(chain)
        if len(self.chains) == self.channels:
            self.found = [list(c) for c in self.chains]
            self.time = -1
        else:
            self.rec()
        self.chains.pop()


def search_chains(n: int, port_GBps: float, channels: int, speed_GBps: float, pattern: str, same: bool,
                  budget: int) -> tuple[list[list[int]] | None, int, int]:  # fmt: skip
    """One search of ``channels`` chains of ``speed_GBps`` on ``n`` GPUs with links of ``port_GBps``: the chains
    found (GPU indices) or None, the budget left (-1 once found, 0 when spent, more when every chain was tried)
    and the GPU visits it made."""
    s = _Search(n, channels, _F(speed_GBps), pattern, same, budget)
    s.up = [_F(port_GBps)] * n
    s.down = [_F(port_GBps)] * n
    # the search nests one call per GPU of every channel (NCCL's own recursion is as deep): up to 72 x 32 x 3 frames
    # of pure Python, which do not grow the C stack from Python 3.11 on
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 3 * channels * (n + 1) + 1000))
    try:
        s.rec()
    finally:
        sys.setrecursionlimit(limit)
    return s.found, s.time, s.visits


def _first_speed(speeds: list[float], port: float, channels: int, n: int) -> int:
    """The first speed NCCL tries: at most the port, and channels x speed within n/(n-1) x the port (a tree's
    search counts that much of the system's bandwidth)."""
    total = _F(_F(port) * _F(n / (n - 1)))
    i = 0
    while i < len(speeds) - 1 and (speeds[i] > port or _F(speeds[i] * channels) > total):
        i += 1
    return i


def _pass_one(n: int, port: float, channels: int, speeds: list[float],
              hopper_or_later: bool) -> tuple[int, str, bool, int] | None:  # fmt: skip
    """Pass 1 of ncclTopoCompute: from the first speed down, each speed tried with the same chain on every channel,
    then different chains, in the balanced tree and then (Hopper and later) the simpler tree. The first complete set
    of channels ends it: (speed index, pattern, same chains, GPU visits). The global budget ends a search only once
    a solution exists, which here is never (minChannels = maxChannels: the first solution is final)."""
    budgets, visits = _budgets(), 0
    patterns = ("balanced_tree", "tree") if hopper_or_later else ("balanced_tree",)
    for i in range(_first_speed(speeds, port, channels, n), len(speeds)):
        for pattern in patterns:
            for same in (True, False):
                budget = budgets["same_channels_steps"] if same else budgets["steps"]
                found, _, v = search_chains(n, port, channels, speeds[i], pattern, same, budget)
                visits += v
                if found is not None:
                    return i, pattern, same, visits
    return None


@functools.lru_cache(maxsize=256)
def search_tree(n: int, port_GBps: float, channels: int, speeds: tuple[float, ...],
                hopper_or_later: bool) -> TreeSearch | None:  # fmt: skip
    """NCCL's tree graph on one switch domain of ``n`` GPUs with links of ``port_GBps`` (GB/s per direction), as many
    channels as the ring's ``channels``, trying ``speeds`` (the release's intra-node array; ``hopper_or_later``: the
    compute capability is 9.0 or more), found as NCCL's search finds it (see the module doc); None where no speed
    holds the channels."""
    first = _pass_one(n, port_GBps, channels, list(speeds), hopper_or_later)
    if first is None:
        return None
    i, pattern, same, visits = first
    budgets = _budgets()
    # pass 2, "increase bwIntra for trees": faster speeds with as many channels while a search finds them and the
    # speed is below twice the one pass 1 found (bwInter stays there)
    found_at = speeds[i]
    while i > 0 and speeds[i] < 2 * found_at:
        budget = budgets["same_channels_steps"] if same else budgets["steps"]
        chains, _, v = search_chains(n, port_GBps, channels, speeds[i - 1], pattern, same, budget)
        visits += v
        if chains is None:
            break
        i -= 1
    return TreeSearch(channels, float(speeds[i]), pattern, visits, float(found_at))

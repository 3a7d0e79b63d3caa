"""One figure, one value: a quantity the course states in several places is stated the same way everywhere.

The corpus is what a learner reads: the Markdown and printed output of every notebook (chapters and solutions), the
docs and the README. Each quantity below is found by its *context* (words that must share a sentence with it) and
its *unit*; every value found must agree with every other one, within the rounding it is printed with, and with the
model or data file it comes from where there is one. A new sentence that states one of these quantities with another
value — the drift this guards against — fails here and names the file and the sentence.
"""

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[1]
NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"


@cache
def corpus() -> tuple[tuple[str, str], ...]:
    """(file, sentence) for every sentence a learner reads (Markdown, printed output, docs, README)."""
    out = []
    paths = sorted(ROOT.glob("notebooks/*.ipynb")) + sorted(ROOT.glob("solutions/*.ipynb"))
    for p in paths:
        nb = json.loads(p.read_text(encoding="utf-8"))
        for c in nb["cells"]:
            parts = [("".join(c["source"]), True)] if c["cell_type"] == "markdown" else []
            parts += [("".join(o.get("text", "")), False) for o in c.get("outputs", [])
                      if o.get("output_type") == "stream"]
            parts += [("".join(o.get("data", {}).get(kind, "")), True) for o in c.get("outputs", [])
                      for kind in ("text/html", "text/markdown")]
            for part, html in parts:
                out += [(p.name, s) for s in _sentences(part, html)]
    for p in [*sorted(ROOT.glob("docs/*.md")), ROOT / "README.md"]:
        out += [(p.name, s) for s in _sentences(p.read_text(encoding="utf-8"), True)]
    return tuple(out)


def _sentences(text: str, html: bool = False) -> list[str]:
    """Sentences, printed lines and table rows, each with its whitespace collapsed."""
    if html:  # an HTML output: a table row, a readout line is one statement; the tags go
        text = re.sub(r"</tr>|<br>|</p>", "\n", text)
        text = re.sub(r"<[^>]+>", " ", text).replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&")
    out = []
    for line in text.split("\n"):
        line = re.sub(r"\s+", " ", line)
        out += [s for s in re.split(r"(?<=[.!?])\s+| \| ", line) if s.strip()]
    return out


def _value(text: str) -> float:
    return float(text.replace(",", ""))


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def same(a: str, b: str) -> bool:
    """Two printed values agree when the more precise one rounds to the less precise one."""
    d = min(_decimals(a), _decimals(b))
    return round(_value(a), d) == round(_value(b), d) or abs(_value(a) - _value(b)) <= 0.5 * 10**-d + 1e-12


@dataclass(frozen=True)
class Quantity:
    """A quantity: the words that must share its sentence, the pattern of its value (one group), and, where the
    course computes it, the values the model or the data give (as printed, any precision)."""

    context: tuple[str, ...]
    value: str
    expected: Callable[[], set[str]] | None = None
    exclude: tuple[str, ...] = field(default=())

    def found(self) -> list[tuple[str, str, str]]:
        hits = []
        for name, s in corpus():
            if all(re.search(c, s) for c in self.context) and not any(re.search(x, s) for x in self.exclude):
                hits += [(name, next(g for g in m.groups() if g is not None), s) for m in re.finditer(self.value, s)]
        return hits


def _nvl72_1gib() -> set[str]:
    from nvcourse.chapters import ch05_nvl72

    ring, nvls, gain = ch05_nvl72.nvls_vs_ring(2**30, 72)
    return {f"{ring.time_s * 1e3:.3f}", f"{nvls.time_s * 1e3:.3f}"}


def _nvl72_1gib_gain() -> set[str]:
    """The gain at 1 GiB, and the two factors the same sentences explain it with: bytes per GPU 2(g-1)/(g+1) and
    the bandwidth term 2(g-1)η/(g+1) (Blackwell η)."""
    from nvcourse.chapters import ch05_nvl72
    from nvcourse.costmodel import factors

    g, eta = 72, factors.NVLS_EFFICIENCY["blackwell"]
    return {f"{ch05_nvl72.nvls_vs_ring(2**30, 72)[2]:.3f}", f"{2 * (g - 1) / (g + 1):.3f}",
            f"{2 * (g - 1) * eta / (g + 1):.3f}"}


def _nvl72_4gib_gain() -> set[str]:
    from nvcourse.chapters import ch05_nvl72
    from nvcourse.costmodel import validation

    rows = {r.case.algo: r for r in validation.compare([k for k in validation.cases()
                                                        if k.id.startswith("nvl72-allreduce")])}
    published = rows["nvls"].case.busbw_GBps / rows["ring"].case.busbw_GBps
    return {f"{ch05_nvl72.nvls_vs_ring(2**32, 72)[2]:.3f}", f"{published:.3f}"} | _nvl72_1gib_gain()


def _step_levels() -> set[str]:
    from nvcourse.observability import counters

    pol = counters.alert_policy()
    return {f"{pol.step_ratio_warn:.3f}", f"{pol.step_ratio_critical:.3f}"}


def _a100_nics() -> set[str]:
    from nvcourse import catalog

    s = catalog.get_system("dgx-a100")
    return {f"{s.nics_per_host * catalog.get_link(s.nic_link).achievable_GBps_dir:.1f}"}


def _roce200_nics() -> set[str]:
    from nvcourse import catalog

    nic = catalog.get_link("roce-200g").achievable_GBps_dir
    return {f"{8 * nic:g}"}


def _nvl72_switch_chips() -> set[str]:
    from nvcourse import catalog

    return {str(catalog.get_system("gb200-nvl72").nvswitch_count)}


def _idle_links() -> set[str]:
    from nvcourse.fabric import ecmp

    return {f"{1 - ecmp.expected_busy_links(32, 32) / 32:.4f}"}


def _link_downed() -> set[str]:
    from nvcourse.observability import counters

    pol = counters.alert_policy()
    return {f"{pol.link_downed_warn_per_day:g}", f"{pol.link_downed_critical_per_day:g}"}


def _nvls_min() -> set[str]:
    from nvcourse import catalog

    return {str(s.nvls_min_gpus) for s in catalog.systems().values() if s.nvls_min_gpus}


def _llama3(key: str) -> Callable[[], set[str]]:
    """A figure of Meta's Llama 3 RoCE fabric from data/ethernet_ai.toml, as prose writes it."""

    def get() -> set[str]:
        from nvcourse import _data

        v = next(x for x in _data.load("ethernet_ai").values() if isinstance(x, dict) and key in x)[key]
        return {str(v).split(":")[-1]} if isinstance(v, str) else {f"{v:g}"}

    return get


QUANTITIES = {
    # chapter 05 / 08b: a 1 GiB all-reduce on the 72 GPUs of an NVL72, ring and NVLS times (NCCL's model)
    "NVL72, 1 GiB on 72 GPUs: ring and NVLS time (ms)": Quantity(
        (r"1 GiB", r"72 GPUs|whole rack"), rf"({NUM}) ?ms\b", _nvl72_1gib),
    "NVL72, 1 GiB on the whole rack (chapter 08b's split, NVLS)": Quantity(
        (r"whole rack: 72 GPUs, nvls",), rf"({NUM}) ?ms\b", _nvl72_1gib),
    "NVL72, 1 GiB on 72 GPUs: NVLS gain over the ring (×)": Quantity(
        (r"1 GiB", r"72 GPUs|NVL72", r"NVLS|in-switch"), rf"(?<![·/\d.])({NUM}) ?[×x](?! ?\d)", _nvl72_1gib_gain),
    "NVL72, 4 GiB: NVLS / ring (×), model and published": Quantity(
        (r"4 GiB", r"NVLS"), rf"(?<![·/\d.])({NUM}) ?[×x](?! ?\d)", _nvl72_4gib_gain,
        exclude=(r"busbw model|GB/s", r"about 1\.\d+× faster than the ring")),
    # chapters 08, 08b, 09: the step-time alert levels (one policy)
    "step time / baseline alert levels": Quantity(
        (r"step ?(?:time)? ?(?:/|vs)", r"baseline|median"), r"(?:>|above|at|/|median|\s)\s?(1\.\d+)\b(?! ?[×x%])",
        _step_levels),
    # chapters 08, 08b, 09: a port's link flaps, warn and critical (one policy)
    "LinkDowned alert levels (flaps)": Quantity(
        (r"LinkDowned|link flaps|flaps",),
        r"LinkDowned(?:Counter)?\)? ?(?:>|≥|>=) ?(\d+)|(?:≥|>=|>) ?(\d+) (?:per day|a day|/day|flaps?)", _link_downed),
    # chapter 05 and the catalog: where the course lets NVLS start (an estimate, not NCCL's rule)
    "nvls_min_gpus as stated": Quantity((r"nvls_min_gpus|where NVLS pays|NVLS starts to pay",),
                                        r"(?:nvls_min_gpus ?=? ?|where NVLS pays: |NVLS starts to pay: )(\d+)",
                                        _nvls_min),
    # chapter 06b: what the NICs of a DGX A100 carry together (catalog)
    "DGX A100 / 2 x 8 A100 NICs together (GB/s)": Quantity(
        (r"A100|NICs (?:carry|together)", r"NICs?\b", r"carry|together"), rf"({NUM}) GB/s", _a100_nics,
        exclude=(r"busbw 238", r"376", r"NDR", r"RoCE NICs carry")),
    # chapter 06b: the same node's run on RoCE 200 GbE NICs (catalog roce-200g, achievable), eight of them
    "8 x RoCE 200 GbE NICs together (GB/s)": Quantity(
        (r"RoCE NICs carry",), rf"= ({NUM}) GB/s", _roce200_nics),
    # chapters 03, 05, code comments: NVSwitch chips in an NVL72
    "NVSwitch chips in an NVL72": Quantity(
        (r"NVL72|72 GPUs",), r"(?<![-\d])(\d+) (?:NVLink )?(?:NVSwitch|switch) chips(?! (?:each|per))",
        _nvl72_switch_chips, exclude=(r"per (?:switch )?tray|each tray|trays? hold",)),
    # chapter 06 and its exercise: nodes in a SuperPOD scalable unit
    "nodes per SuperPOD SU": Quantity(
        (r"\bSU\b|scalable units?",),
        r"\b(\d+)[ -]nodes? (?:per )?(?:SU|scalable unit)\b|(?:SU|units?)\)? of (\d+) nodes"),
    # chapter 06c (and wherever Llama 3's fabric is described): Meta's RoCE cluster, from the data file
    "Llama 3 fabric: GPUs per pod": Quantity((r"pod",), r"(\d[\d,]*)-GPU pods?", _llama3("gpus_per_pod")),
    "Llama 3 fabric: flows per GPU pair": Quantity((r"flows",), r"(\d+) flows (?:per|between two) GPU",
                                                   _llama3("flows_per_gpu_pair")),
    "Llama 3 fabric: oversubscription above the pods": Quantity((r"Llama|\bpods?\b", r"above|aggregation|oversubscri"),
                                                                r"\b1:(\d+)\b",
                                                                _llama3("aggregation_oversubscription")),
    # chapter 06's exercise: idle links with 32 flows on 32 up-links
    "32 flows on 32 links: idle fraction": Quantity(
        (r"1/32\)\^32",), r"1/32\)\^32 (?:=|≈) ?(0\.\d+)", _idle_links),
}


@pytest.mark.parametrize("name", sorted(QUANTITIES))
def test_one_quantity_one_value(name):
    q = QUANTITIES[name]
    hits = q.found()
    assert hits, f"{name}: no sentence matched any more: update its context"
    if q.expected is not None:
        allowed = q.expected()
        bad = [(f, v, s[:160]) for f, v, s in hits if not any(same(v, a) for a in allowed)]
        assert not bad, f"{name}: the model/data give {sorted(allowed)}; typed otherwise: {bad}"
    else:
        first = hits[0][1]
        bad = [(f, v, s[:160]) for f, v, s in hits if not same(v, first)]
        assert not bad, f"{name}: {first} in {hits[0][0]}, but: {bad}"


def test_the_detector_catches_a_drift():
    # a sentence typed with the old, formula-only value is caught
    q = QUANTITIES["NVL72, 1 GiB on 72 GPUs: ring and NVLS time (ms)"]
    s = "For 1 GiB over 72 GPUs the ring takes 3.42 ms against 2.06 ms for NVLS."
    vals = [m.group(1) for m in re.finditer(q.value, s)]
    assert not all(any(same(v, a) for a in q.expected()) for v in vals)
    assert same("2.33", "2.330") and same("1.47", "1.4700904") and not same("2.06", "2.33")


def test_the_hdr_per_nic_figure_cites_one_source():
    # 24 GB/s per 200 Gb/s HDR NIC: the catalog's efficiency and chapter 02's measurement table cite the same issue
    from nvcourse import _data, catalog

    cat = _data.load("catalog")
    src_id = cat["links"]["ib-hdr"]["src"]["efficiency"]
    url = cat["sources"][src_id]["url"]
    hdr = [m for m in _data.load("link_measurements")["measurement"] if m["link"] == "ib-hdr"]
    assert hdr and all(m["source"] == url for m in hdr)
    assert {m["measured_GBps_dir"] for m in hdr} == {catalog.get_link("ib-hdr").achievable_GBps_dir}

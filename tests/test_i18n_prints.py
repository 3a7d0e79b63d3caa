"""What the code cells of chapters 01, 04, 07, 08 and 10 print speaks the learner's language: the cells call
chapter-module functions that build each line with ``_()`` (the code cells are shared by the English and French
editions, so a line a cell built itself would stay English in French).

For each chapter a walk (tests/i18n_walks.py) runs every one of those functions in a fresh interpreter, as the
notebook calls them and on inputs that reach each branch (a singular and a plural); every ``_()`` message in those
functions, read from the source by Babel as ``tasks.py i18n extract`` reads it, must be shown: in English its fixed
parts (between ``{field}`` placeholders), in French its translation's, with no long English message left. In
English the lines are the ones the notebooks printed before (checked on a few, the numbers read from the data)."""

from __future__ import annotations

from pathlib import Path

import polib
import pytest
from i18n_walks import french_entries, messages, shows_each_message, walk

ROOT = Path(__file__).resolve().parents[1]

_FRAME = """
import sys
import matplotlib
matplotlib.use("Agg")
out = []
"""

#: Per chapter: the module, the functions whose ``_()`` messages the cells print, and the walk that calls them.
CH01 = """
from nvcourse.chapters import ch01_one_gpu as ch01
out.append(ch01.memory_lines(70e9, ("a100", "h100", "h200", "b200")))
out.append(ch01.memory_lines(1e9, ("h100",)))  # one GPU holds it: the singular
out.append(ch01.one_gpu_years(params=405e9, tokens=15.6e12, gpu_id="h100"))
"""

CH04 = """
from nvcourse.chapters import ch04_collectives as ch04
from nvcourse.collectives import ProcessGroup, engines
out.append(ch04.exchange_lines("alltoall", 3))
with ProcessGroup(4) as pg:
    traced = pg.run("allreduce", 64, algo="ring", iters=1, warmup=1, trace=True)
    res = pg.run("allreduce", "64KiB", algo="ring", iters=2, warmup=1)
out.append(ch04.ring_trace_lines(traced, ch04.RingReplay.from_result(traced)))
out.append(ch04.run_lines(res))
out.append(ch04.model_table_lines("nvlink4", links=18, nprocs=4, sizes=(2**12, 2**30)))
out.append(ch04.busbw_lines())
out += [ch04.sweep_title("allreduce", "ring", 4), ch04.timeline_title()]
for kind, name, link_id, links in (("pcie", "PCIe Gen4 x16", "pcie4", 1), ("nvlink", "18 x NVLink 4", "nvlink4", 18)):
    label = ch04.emulated_label(kind, name)
    emu, real = ch04.emulated_link(link_id, links=links, slowdown=1000)
    out.append(ch04.emulated_link_line(label, real, emu))
out.append(ch04.no_engine_lines(engines.MPI_HINT, engines.TORCH_HINT))
"""

CH07 = """
from nvcourse import training
from nvcourse.chapters import ch07_training as ch07
ref = training.data()["reference_runs"]["llama3-405b-16k"]
out.append(ch07.compute_days_lines("llama3-405b-16k", gpu_id="h100"))
st = training.step_time(ref["model"], ref["system"], ref["gpus"], tp=ref["tp"], pp=ref["pp"], virtual_stages=4)
out += [ch07.breakdown_lines(st, reported_mfu=ref["reported_mfu"]), ch07.breakdown_lines(st)]
out.append(ch07.placement_title(st, "h100"))
out.append(ch07.price_table_html(["pcie-8gpu", "dgx-h100", "gb200-nvl72"]))
table = {("llama3-8b", "dgx-h100", 4096): training.best_config("llama3-8b", "dgx-h100", 4096)}
out.append(ch07.cost_lines(table, ["llama3-8b"], ["dgx-h100"], tokens=ref["training_tokens"], gpus=4096))
out += [ch07.moe_dispatch_lines(), ch07.moe_step_lines()]
"""

CH08 = """
from nvcourse.chapters import ch08_reliability as ch08
from nvcourse.collectives import CollectiveError
out += [ch08.failure_record_lines(), ch08.checkpoint_lines(gpus=16384, checkpoints_s=(60, 300), restart_s=600)]
out += [ch08.checkpoint_saved_line(4), ch08.restart_line(9, CollectiveError("rank 1 died with exit code -9"), 8)]
out += [ch08.done_line(12, 2, 1), ch08.done_line(12, 2, 3)]
"""

CH10 = """
from nvcourse.chapters import ch10_other_interconnects as ch10
out += [ch10.pair_bandwidth_lines(), ch10.numerics_lines(ranks=(2, 8))]
"""

CHAPTERS = {
    "01": ("nvcourse/chapters/ch01_one_gpu.py", {"memory_lines", "one_gpu_years"}, CH01),
    "04": ("nvcourse/chapters/ch04_lines.py", {"exchange_lines", "ring_trace_lines", "model_table_lines",
                                               "busbw_lines", "run_lines", "sweep_title", "timeline_title",
                                               "emulated_label", "emulated_link_line", "no_engine_lines"},
           CH04),
    "07": ("nvcourse/chapters/ch07_training.py", {"compute_days_lines", "breakdown_lines", "_label",
                                                  "price_table_html", "cost_lines", "placement_title",
                                                  "moe_dispatch_lines", "moe_step_lines"}, CH07),
    "08": ("nvcourse/chapters/ch08_reliability.py", {"_category", "failure_record_lines", "checkpoint_lines",
                                                     "checkpoint_saved_line", "restart_line", "done_line"}, CH08),
    "10": ("nvcourse/chapters/ch10_other_interconnects.py", {"pair_bandwidth_lines", "numerics_lines"}, CH10),
}


@pytest.fixture(scope="module")
def french() -> dict[str, polib.POEntry]:
    return french_entries()


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_printed_line_speaks_the_language(language, chapter, french):
    path, functions, script = CHAPTERS[chapter]
    found = messages(path, functions)
    assert len(found) >= len(functions) - 1  # every function has its words (but the ones that only join lines)
    shown = walk(_FRAME, script, language)
    shows_each_message(found, shown, language, french)


def test_the_english_lines_are_the_ones_the_cells_printed(monkeypatch):
    monkeypatch.setenv("NVCOURSE_LANG", "en")
    from nvcourse import catalog, training
    from nvcourse.chapters import ch01_one_gpu, ch07_training, ch08_reliability, ch10_other_interconnects

    h100 = catalog.get_gpu("h100")
    need = ch01_one_gpu.gpus_needed(70e9, "h100")
    assert f"{h100.name:<40} {h100.memory_GB:>5g} GB of HBM -> at least {need:>3} GPUs" in ch01_one_gpu.memory_lines()
    assert ch01_one_gpu.memory_lines(1e9, ("h100",)).endswith("at least   1 GPU")
    years = 6 * 405e9 * 15.6e12 / (h100.bf16_TFLOPS * 1e12) / (365.25 * 24 * 3600)
    assert ch01_one_gpu.one_gpu_years() == (f"6 x 405e9 x 15.6e12 = {6 * 405e9 * 15.6e12:.2e} FLOPs; one H100 at "
                                           f"{h100.bf16_TFLOPS:g} TFLOPS dense BF16 peak: {years:,.0f} years")
    ref = training.data()["reference_runs"]["llama3-405b-16k"]
    st = training.step_time(ref["model"], ref["system"], ref["gpus"], tp=ref["tp"], pp=ref["pp"], virtual_stages=4)
    lines = ch07_training.breakdown_lines(st, ref["reported_mfu"]).splitlines()
    assert lines[0] == f"{'compute':>20}: {st.compute_s:6.3f} s  ({st.compute_s / st.total_s:5.1%})"
    assert lines[-2] == f"model MFU = {st.mfu:.1%}   (reported by Meta: {ref['reported_mfu']:.0%})"
    table = ch07_training.price_table_html(["dgx-h100"])
    assert ">spec<" in table and "AWS EC2 Capacity Blocks for ML pricing (late 2024)</a>" in table
    assert ch08_reliability.done_line(12, 2, 1) == "done: 12 steps, 2 attempts, work lost: 1 step"
    assert ch08_reliability.done_line(12, 2, 2) == "done: 12 steps, 2 attempts, work lost: 2 steps"
    assert ch08_reliability.checkpoint_saved_line(4) == "step  4: checkpoint saved"
    row = ch10_other_interconnects.pair_bandwidth_rows()[1]
    assert ch10_other_interconnects.pair_bandwidth_lines().splitlines()[1] == (
        f"{row['system']:40s}: to one peer {row['one_peer_GBps']:5.0f} GB/s, to all peers "
        f"{row['all_peers_GBps']:5.0f} GB/s (per direction)")

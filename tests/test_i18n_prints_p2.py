"""What the code cells of chapters 06, 06b, 06c and 06d print speaks the learner's language: the cells call
chapter-module functions that build each line with ``_()`` (a code cell is shared by the English and French editions,
so a line a cell built itself stays English in French), and the fabric's one-line description
(:meth:`nvcourse.fabric.network.Fabric.describe`, in chapter 06's dashboard and chapter 09) is translated too.

Each chapter's walk is the chapter's existing walk (tests/test_i18n_rest.py, tests/test_i18n_frm1.py: checkers,
questions, tables, dashboards) plus the printed lines below (``CH06``... , which those walks can import as
test_i18n_frm2.py imports test_i18n_prints.CH08), so every ``_()`` message of the chapter module is shown: in English
its fixed parts, in French its translation's, with no long English message left. In English the lines are the ones
the notebooks printed before (compared with the committed notebooks' outputs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from i18n_walks import run_walk, walk
from i18n_walks import speaks as _speaks

ROOT = Path(__file__).resolve().parents[1]

#: Chapter 06's printed lines: the scale-out links, the SuperPOD counts, a layout's title, ECMP's closed forms, where
#: each algorithm overtakes the flat ring, oversubscription against placement; the fabric's description (2 and 3
#: levels: the core switches).
CH06 = """
from nvcourse.chapters import ch06_fabrics as ch06
from nvcourse.fabric import fat_tree as _fat_tree
out += [ch06.scale_out_links_lines(), ch06.superpod_lines(), ch06.layout_title("rail", _fat_tree(64)),
        ch06.ecmp_line(32, 0.28)]
_nodes = [2, 4, 8, 16, 32, 64]
out.append(ch06.first_faster_line(_nodes, ch06.scaling_figure(_nodes, 2**26, routing="dmodk")[1]))
out.append(ch06.first_faster_line(_nodes, ch06.scaling_figure(_nodes, 2**30, routing="dmodk")[1]))  # one never wins
out.append(ch06.oversubscription_lines(overs=(1, 2)))
out += [_fat_tree(128).describe(), _fat_tree(2048).describe()]
"""

#: Chapter 06b's printed lines: a run's header and rows (one host: the singular; two: the plural; each way the reader
#: can have decided the operation), then the footer and the size bands; the samples' captions (system, source).
CH06B = """
import types
from nvcourse.chapters import ch06b_nccl_in_practice as ch06b
_a100 = ch06b.read_sample("2 nodes x 8 A100 (RoCE)")
out += [ch06b.run_lines(ch06b.read_sample("8x H100, one node (NVSwitch)"), rows=(0, -1)), ch06b.run_lines(_a100)]
for _source in ("header", "command line", "count/size", "some other way"):
    _stub = types.SimpleNamespace(op="allreduce", op_source=_source, nranks=8, hosts=["a", "b"], gpus=["H100"],
                                  rows=_a100.rows, header={"iters": 20})
    out.append(ch06b.run_lines(_stub, rows=(0,)))
out.append(ch06b.footer_lines(_a100))
out += [ch06b.sample_caption(name) for name in ch06b.SAMPLES]  # the paste box's caption: system and source
"""

#: Chapter 06c's printed lines: the multi-QP slowdowns, the recorded run (and the live one).
CH06C = """
from nvcourse.chapters import ch06c_multinode_lab as ch06c
from nvcourse.cluster import record as _record
out.append(ch06c.qp_lines([{"qps": 1, "model": 3.533, "sim": 3.525, "sim_se": 0.0165}]))
out += [ch06c.recorded_line(_record.load()), ch06c.recorded_line(_record.load(), live=True)]
"""

#: Chapter 06d's printed lines: a PCIe link as capable and as trained; every layer's name (the runbook's captions).
CH06D = """
from nvcourse.chapters import ch06d_runbook as ch06d
out.append(ch06d.pcie_line((16.0, 16), (2.5, 16)))
out += [ch06d.layer_name(layer) for layer in ch06d.LAYERS]
"""

#: Per chapter: the module paths whose messages the walk must show, and the least number of them.
_PATHS = {
    "06": (("nvcourse/checks/ch06.py", "nvcourse/chapters/ch06_fabrics.py"), 70),
    "06b": (("nvcourse/checks/ch06b.py", "nvcourse/chapters/ch06b_nccl_in_practice.py"), 120),
    "06c": (("nvcourse/checks/ch06c.py", "nvcourse/chapters/ch06c_multinode_lab.py"), 60),
    "06d": (("nvcourse/checks/ch06d.py", "nvcourse/chapters/ch06d_runbook.py"), 60),
}


def _chapter_walk(chapter: str) -> tuple[str, str]:
    """The chapter's existing walk (its frame and script) followed by its printed lines. Imported here, not at the
    top, so those test modules can import this one's ``CH06``... without a circular import."""
    import test_i18n_frm1 as frm1
    import test_i18n_rest as rest

    return {"06": (rest._FRAME, rest._CH06 + CH06), "06b": (frm1._FRAME, frm1._CH06B + CH06B),
            "06c": (rest._FRAME, rest._CH06C + CH06C), "06d": (frm1._FRAME, frm1._CH06D + CH06D)}[chapter]


@pytest.mark.parametrize("chapter", sorted(_PATHS))
@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_printed_line_speaks_the_language(language, chapter):
    frame, script = _chapter_walk(chapter)
    paths, least = _PATHS[chapter]
    _speaks(walk(frame, script, language), language, paths, least=least)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_fabric_description_speaks_the_language(language):
    shown = run_walk("from nvcourse.fabric import fat_tree\nprint(fat_tree(128).describe())\n"
                     "print(fat_tree(2048).describe())", language)
    _speaks(shown, language, ("nvcourse/fabric/network.py",), least=2)
    if language == "fr":
        assert "2\u202f048 nœuds" in shown and "sursouscription 1:1" in shown and "leaf" not in shown
    else:
        assert "2048 nodes x 8 NICs (16384 GPUs), rail layout, 3 levels: 512 leaf, 512 spine, 256 core" in shown


def _printed(notebook: str, cell: str) -> str:
    """The text a committed English notebook's code cell printed."""
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    (found,) = [c for c in nb["cells"] if c.get("id") == cell]
    return "".join("".join(o["text"]) for o in found["outputs"] if o.get("output_type") == "stream")


def test_the_english_lines_are_the_ones_the_cells_printed(monkeypatch):
    """The English edition is unchanged by the move: each function prints what its cell printed (committed)."""
    monkeypatch.setenv("NVCOURSE_LANG", "en")
    from nvcourse.chapters import ch06_fabrics as ch06
    from nvcourse.chapters import ch06b_nccl_in_practice as ch06b
    from nvcourse.chapters import ch06c_multinode_lab as ch06c
    from nvcourse.chapters import ch06d_runbook as ch06d
    from nvcourse.cluster import record

    fabrics, nccl = "06_multinode_fabrics.ipynb", "06b_nccl_in_practice.ipynb"
    assert _printed(fabrics, "c003") == ch06.scale_out_links_lines() + "\n"
    assert _printed(fabrics, "c005") == ch06.superpod_lines() + "\n"
    assert _printed(fabrics, "c016") == ch06.oversubscription_lines() + "\n"
    run = ch06b.read_sample("2 nodes x 8 A100 (RoCE)")
    assert _printed(nccl, "c006") == ch06b.run_lines(run) + "\n"
    assert _printed(nccl, "c008") == ch06b.footer_lines(run) + "\n"
    assert _printed("06c_multinode_lab.ipynb", "71f41ac1") == ch06c.recorded_line(record.load()) + "\n"
    assert _printed("06d_bringup_and_fault_runbook.ipynb", "c006") == ch06d.pcie_line((16.0, 16), (2.5, 16)) + "\n"

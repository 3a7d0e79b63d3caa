"""Guards for the sentences rewritten after fresh-learner walkthrough S1 (chapters 02, 04b, 05, 06)."""

import tomllib

from test_prose_facts_core import ROOT, prose

from nvcourse.costmodel import predict

CH05 = "05_nvl72_rack_scale.ipynb"


def test_05_ring_still_wins_small_sizes_on_8_gpus_in_nccls_model():
    # §6's collapsed box: "With LL for small buffers (the solid curves), the ring still wins the small sizes on 8 GPUs"
    for system in ("dgx-h100", "dgx-b200"):
        for n in (8, 1024, 64 * 1024):
            got = predict("allreduce", system, 8, n)
            assert got.algo == "ring" and got.proto in ("LL", "LL128"), (system, n, got.algo, got.proto)
    text = prose(CH05)
    assert "With LL for small buffers (the solid curves), the ring still wins the small sizes on 8 GPUs." in text
    assert "matching the published runs" not in text


def test_05_h100_published_figures_link_their_own_sources():
    cases = {c["id"]: c for c in tomllib.loads((ROOT / "nvcourse/data/measurements.toml").read_text())["cases"]}
    nvls, ring = cases["h100-8gpu-allreduce-nvls"], cases["h100-8gpu-allreduce-ring"]
    assert (nvls["busbw_GBps"], ring["busbw_GBps"]) == (480.0, 370.0)
    text = prose(CH05)
    assert f"about 480 GB/s with NVLS ([nccl#2140]({nvls['url']}))" in text
    assert f"370 GB/s without ([nccl-tests#212]({ring['url']})" in text
    assert "chapter 04b lists the sources" not in text


def test_04b_and_06_define_the_words_the_walkthrough_missed():
    text = prose("04b_predicting_collectives.ipynb")
    assert "(scale-up: the NVLink fabric inside a node)" in text
    assert "staging copies" not in text and "no copy through NCCL's own intermediate buffers" in text
    assert "[crossbar](../docs/glossary.md#nvswitch) (a switch where every pair of GPUs has its own path)" in text
    text = prose("06_multinode_fabrics.ipynb")
    assert "*entropy* (more distinct flow headers for the hash to spread over the paths)" in text
    assert "optics (the optical transceivers and fibre cables between leaf and spine)" in text

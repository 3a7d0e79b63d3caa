"""nvcourse.serving: the serving arithmetic of chapter 07c §9, checked by hand from the sources' figures."""

from __future__ import annotations

import pytest

from nvcourse import inference, serving


def test_mla_kv_by_hand():
    # DeepSeek-V3 config.json: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64
    assert serving.mla_kv_bytes_per_token() == 61 * (512 + 64) * 2
    assert serving.mla_kv_bytes_per_token(bytes_per_elem=1) == 61 * 576
    # a fifth of Llama 3 70B's GQA cache per token (320 KiB) while the model is ten times larger
    assert serving.mla_kv_bytes_per_token() < inference.kv_bytes_per_token("llama3-70b") / 4


def test_671b_fp8_fits_one_h200_node_not_bf16():
    fp8 = serving.node_fit("hgx-h200")
    assert fp8["fits"] and fp8["weights_GB"] == pytest.approx(671) and fp8["hbm_GB"] == pytest.approx(8 * 141)
    assert fp8["free_GB"] == pytest.approx(8 * 141 - 671)
    assert not serving.node_fit("hgx-h200", bytes_per_param=2)["fits"]  # 1,342 GB in BF16
    assert not serving.node_fit("dgx-h100")["fits"]  # 640 GB of H100 HBM: not even in FP8
    # data-parallel attention holds gpus x more MLA tokens than TP, which replicates the latent
    assert fp8["kv_tokens_dp_attention"] == pytest.approx(8 * fp8["kv_tokens_tp"])


def test_attention_dp():
    r = serving.attention_dp_kv_tokens(50e9, 8, 35136)
    assert r["tp"] == pytest.approx(50e9 / 35136) and r["dp_attention"] == pytest.approx(8 * 50e9 / 35136)


def test_paged_kv_descriptor_bound_by_hand():
    # the published case: 16 KiB descriptors at 9 GB/s per rank -> 16384 / 9e9 s each
    per = 16384 / 9e9
    small = serving.paged_kv_transfer(32768 * 327680 / 8, 16384)
    assert small["descriptors"] == 32768 * 327680 / 8 / 16384 and small["bound"] == "descriptors"
    assert small["time_s"] == pytest.approx(small["descriptors"] * per)
    big = serving.paged_kv_transfer(32768 * 327680 / 8, 2**20)
    assert big["bound"] == "link" and big["time_s"] == pytest.approx(32768 * 327680 / 8 / (50e9 * 0.94))


def test_kv_reshard():
    r = serving.kv_reshard(8, 2, 8)
    assert (r["heads_per_prefill_rank"], r["heads_per_decode_rank"], r["split"]) == (4, 1, 4.0)
    assert serving.kv_reshard(8, 8, 8)["split"] == 1.0
    assert serving.kv_reshard(8, 16, 4)["heads_per_prefill_rank"] == 1  # beyond the KV heads, ranks replicate


def test_speculative_decoding_cuts_allreduces_per_token():
    r = serving.speculative_allreduces_per_token(80, 3, 0.7)
    tokens = (1 - 0.7**4) / (1 - 0.7)
    assert r["tokens_per_step"] == pytest.approx(tokens) and r["allreduces_per_token"] == pytest.approx(160 / tokens)
    assert r["message_tokens"] == 4
    assert serving.speculative_allreduces_per_token(80, 0, 0.5)["allreduces_per_token"] == 160


def test_cuda_graphs_remove_host_enqueue():
    assert serving.host_enqueue_per_token_s(80, graphs=True) == 0
    assert serving.host_enqueue_per_token_s(80, graphs=False) == pytest.approx(160 * 3.95e-6)


@pytest.mark.parametrize(("call", "msg"), [
    (lambda: serving.mla_kv_bytes_per_token("llama3-70b"), "model must be one of"),
    (lambda: serving.speculative_allreduces_per_token(80, 3, 1.0), "acceptance must be in"),
    (lambda: serving.paged_kv_transfer(0, 16384), "total_bytes must be"),
    (lambda: serving.kv_reshard(8, 0, 8), "prefill_tp must be"),
])
def test_bad_input(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


def test_chapter_07c_serving_claims_hold():
    # the sentences of chapter 07c §8 next to the serving table
    from nvcourse.chapters import ch07c_inference as ch

    mla, gqa = serving.mla_kv_bytes_per_token(), inference.kv_bytes_per_token("llama3-70b")
    assert 0.18 < mla / gqa < 0.25  # "about a fifth"
    share = 32768 * gqa / 8
    slow, fast = serving.paged_kv_transfer(share, 16384), serving.paged_kv_transfer(share, 2**20)
    assert 4.5 < slow["time_s"] / fast["time_s"] < 5.5  # "five times slower than the link allows"
    fit = serving.node_fit("hgx-h200")
    assert fit["kv_tokens_dp_attention"] / fit["kv_tokens_tp"] == 8  # "eight times the MLA tokens"
    rows = ch.serving_rows()
    assert len(rows) == 7 and all(r["src"] in inference.data()["sources"] or r["src"] == "derived" for r in rows)
    assert "fits" in rows[1]["result"] and "does not fit" in rows[1]["result"]
    lines = ch.measured_vs_model_lines()
    assert [ln.split()[1] for ln in lines] == ["2", "4", "8"] and "4 MiB" in lines[0]


def test_the_serving_rows_say_what_graphs_and_drafts_change():
    # CUDA graphs: host enqueue time, a cost only when the CPU falls behind (not "time saved per token");
    # speculative decoding: the served model's all-reduces, the draft model's own come on top
    from nvcourse.chapters import ch07c_inference as ch

    rows = {r["item"]: r["short"] for r in ch.serving_rows()}
    assert "a cost only when the CPU falls behind the GPU" in rows["CUDA graphs"] and "saved" not in rows["CUDA graphs"]
    spec = next(v for k, v in rows.items() if k.startswith("speculative decoding"))
    assert "of the served model's all-reduces" in spec and "the draft model's own come on top" in spec

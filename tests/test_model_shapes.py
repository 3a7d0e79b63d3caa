"""The reference models' shapes live once (data/models.toml), with sources; training and inference share them."""

import pytest

from nvcourse import _data, inference, model_shapes, training
from nvcourse.model_shapes import ModelSpec

SHAPE_FIELDS = ("params", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim")


def test_every_shape_has_a_source():
    d = model_shapes.data()
    keys = set(d["sources"])
    cited = set()
    for mid, rec in d["models"].items():
        numeric = {k for k, v in rec.items() if isinstance(v, (int, float))}
        assert numeric and numeric == set(rec["src"]), mid
        for field, src in rec["src"].items():
            assert src in keys or src.startswith("derived:"), (mid, field, src)
            cited.add(src)
    assert keys <= cited, f"sources never cited: {keys - cited}"


def test_no_other_data_file_repeats_a_model_shape():
    for name in ("training", "inference"):
        d = _data.load(name)
        assert "models" not in d, name
    # every training setup and every published KV transfer names a model of the shared table
    table = model_shapes.shapes()
    assert set(training.data()["model_training"]) <= set(table)
    assert all(r["model"] in table for r in inference.data()["kv_transfer"].values())


def test_training_and_inference_hand_out_the_same_shapes():
    for mid, trained in training.models().items():
        served = inference.get_model(mid)
        assert isinstance(served, ModelSpec) and inference.ServeModel is ModelSpec
        assert all(getattr(trained, f) == getattr(served, f) for f in SHAPE_FIELDS), mid
        assert trained.seq > 0 and served.seq == 0  # the training setup is training's alone
    # Llama 3 Table 3: 80 layers, 8192 wide, 64 heads, 8 KV heads (GQA); head_dim = 8192 / 64
    m = inference.get_model("llama3-70b")
    assert (m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim) == (80, 8192, 64, 8, 128)
    # a model the course only serves has no training setup
    assert "qwen3-8b" not in training.models()
    with pytest.raises(ValueError, match="training setup"):
        training.get_model(inference.get_model("qwen3-8b"))


def test_hand_made_model_defaults_to_multi_head_attention():
    m = ModelSpec(id="x", name="x", params=1e9, layers=4, hidden=1024, heads=8, seq=1024, global_batch_tokens=8192)
    assert (m.kv_heads, m.head_dim, m.global_batch_sequences) == (8, 128, 8)
    assert inference.kv_bytes_per_token(m) == 4 * 2 * 8 * 128 * 2
    with pytest.raises(ValueError, match="llama3-70b"):
        model_shapes.get_shape("gpt-9")

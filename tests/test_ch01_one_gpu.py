"""Chapter 01: GPUs needed (training), reference models, time to move (linkmodel), the dashboard."""
import pytest

from nvcourse import linkmodel, training
from nvcourse.chapters import ch01_one_gpu


def test_gpus_needed_hand_worked():
    # 70e9 x 16 B = 1.12e12 B; H100 80 GB x 0.9 = 72e9 B usable -> 1.12e12 / 72e9 = 15.6 -> 16 GPUs
    assert training.gpus_needed(70e9, "h100") == 16
    # H200 141 GB x 0.9 = 126.9e9 -> 8.83 -> 9
    assert training.gpus_needed(70e9, "h200") == 9
    # a tiny model still needs one GPU
    assert training.gpus_needed(1e6, "h100") == 1
    # all of the memory usable, 80e9 B per GPU exactly: 5e9 params x 16 = 80e9 -> 1 GPU
    assert training.gpus_needed(5e9, "h100", headroom=1.0) == 1


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(params=0, gpu_id="h100"), "params"),
    (dict(params=1e9, gpu_id="h900"), "unknown GPU"),
    (dict(params=1e9, gpu_id="h100", headroom=1.5), "headroom"),
])
def test_gpus_needed_bad_input(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        training.gpus_needed(**kwargs)


def test_reference_models_are_the_training_models():
    models = training.models()
    assert {"llama3-8b", "llama3-70b", "gpt3-175b", "llama3-405b"} <= set(models)
    for m in models.values():
        assert m.hidden % m.heads == 0
    # GPT-3 (Brown et al. Table 2.1): 96 layers x 12288 wide; 12 L h^2 ≈ 174.0e9 parameters, the "175B"
    g = training.get_model("gpt3-175b")
    assert 12 * g.layers * g.hidden**2 == pytest.approx(175e9, rel=0.01)
    with pytest.raises(ValueError, match="llama3-8b"):
        training.get_model("gpt-9")


def test_time_to_move_uses_achievable_bandwidth():
    # 1 GB over 18 NVLink 4 links: 3.4 us + 1e9 / 370.8e9 s
    assert linkmodel.time_to_move(1e9, "nvlink4", 18) == pytest.approx(3.4e-6 + 1e9 / 370.8e9)
    assert linkmodel.time_to_move(0, "nvlink4") == 0.0


def test_memory_dashboard_fit_verdict_and_invalid_state():
    d = ch01_one_gpu.memory_dashboard()
    d.controls["model"].value = "llama3-70b"
    d.controls["gpu"].value = "h100"
    d.controls["tp"].value, d.controls["pp"].value, d.controls["dp"].value = 1, 1, 1
    d.controls["zero_stage"].value = 0
    assert "does not fit" in d.readout.value  # 1.12 TB on one 80 GB GPU
    d.controls["tp"].value = 8
    d.controls["dp"].value = 64
    d.controls["zero_stage"].value = 3
    assert "— <b style='color:#009E73'>fits" in d.readout.value
    # every reachable combination renders: 405B's 126 layers on 16 uneven stages (as Llama 3 trained)
    d.controls["model"].value = "llama3-405b"
    d.controls["pp"].value = 16
    assert d.last_error is None and "Llama 3 405B" in d.readout.value

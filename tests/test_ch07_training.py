"""Chapter 07 dashboard: no reachable setting is invalid."""

import matplotlib

matplotlib.use("Agg")

from nvcourse.chapters import ch07_training as trainviz


def make():
    return trainviz.step_dashboard(models=["llama3-8b", "llama3-70b"], systems=["pcie-8gpu", "dgx-h100"],
                                   compute_efficiency=0.55)


def test_gpu_options_follow_tp_times_pp():
    d = make()
    d.controls["tp"].value, d.controls["pp"].value = 8, 4  # 32 GPUs per model replica
    assert min(d.controls["gpus"].options) == 32
    d.controls["gpus"].value = 32
    d.controls["pp"].value = 16  # 128 per replica: 32 is gone and the value moved up
    assert min(d.controls["gpus"].options) == 128 and d.controls["gpus"].value == 128
    d.controls["tp"].value, d.controls["pp"].value = 1, 1
    assert min(d.controls["gpus"].options) == 8


def test_every_gpu_count_renders_without_a_note():
    d = make()
    for g in d.controls["gpus"].options:
        d.controls["gpus"].value = g
        assert d.last_error is None, (g, d.last_error)
        assert "MFU" in d.readout.value

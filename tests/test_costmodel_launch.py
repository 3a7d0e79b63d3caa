"""The launch mode: the host's enqueue floor per call (nvcourse.costmodel.launch, data/launch.toml)."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcourse.cli import main
from nvcourse.costmodel import launch, predict, predict_sweep, sweeps


def test_floor_by_hand():
    # data/launch.toml: (33.7 - 10) us / 6 GPUs = 3.95 us per GPU one thread enqueues
    assert launch.host_floor_s("single-process", 8) == pytest.approx(8 * 3.95e-6)
    assert launch.host_floor_s("single-process", 4) == pytest.approx(4 * 3.95e-6)
    assert launch.host_floor_s("process-per-gpu", 8) == pytest.approx(3.95e-6)
    assert launch.host_floor_s("cuda-graphs", 8) == 0.0
    assert launch.host_floor_s("device", 72) == 0.0


def test_the_floor_is_held_out_from_the_validation_sweeps():
    # the constant must not come from a run it is then validated on
    src = launch.raw()["host_enqueue"]["src"]
    assert src.startswith("https://") and src not in {p.url for p in sweeps.points()}


def test_predict_takes_the_max_of_gpu_and_host_time():
    device = predict("allreduce", "dgx-h100", 8, 8)
    single = predict("allreduce", "dgx-h100", 8, 8, launch="single-process")
    # 8 B on 8 H100: ring/LL, 6.6 + 14 x 0.6 = 15.0 us of GPU time (+ 1.6 ns of bytes on one channel); one thread
    # enqueues 8 GPUs: 31.6 us
    assert (device.algo, device.proto) == (single.algo, single.proto) == ("ring", "LL")
    assert device.time_s == pytest.approx(15.0e-6, rel=1e-3) and device.launch == "device" and device.host_floor_s == 0
    assert single.time_s == pytest.approx(31.6e-6, rel=1e-4)
    assert single.device_time_s == pytest.approx(15.0e-6, rel=1e-3)
    # at 1 GiB the GPUs take milliseconds: the floor changes nothing
    big = predict("allreduce", "dgx-h100", 8, 2**30, launch="single-process")
    assert big.time_s == pytest.approx(predict("allreduce", "dgx-h100", 8, 2**30).time_s)


def test_sweep_agrees_with_single_predictions():
    sizes = [8, 4096, 2**20, 2**28]
    sw = predict_sweep("allreduce", "gb200-nvl72", 4, sizes, launch="single-process")
    for s, t in zip(sizes, sw.time_s, strict=True):
        assert t == pytest.approx(predict("allreduce", "gb200-nvl72", 4, s, launch="single-process").time_s)
    assert sw.rows()[0]["launch"] == "single-process"


def test_bad_launch_is_a_clear_error(capsys):
    with pytest.raises(ValueError, match="launch must be one of device, process-per-gpu"):
        predict("allreduce", "dgx-h100", 8, 8, launch="mpirun")
    with pytest.raises(SystemExit) as exit_:
        main(["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "8", "--launch", "x"])
    code, err = exit_.value.code, capsys.readouterr().err
    assert code == 2 and "launch must be one of" in err and "Traceback" not in err


def test_cli_json_adds_fields_and_keeps_the_old_ones(capsys):
    argv = ["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "8", "--json"]
    assert main(argv) == 0
    old = json.loads(capsys.readouterr().out)
    assert main([*argv, "--launch", "single-process"]) == 0
    new = json.loads(capsys.readouterr().out)
    assert old["time_s"] == pytest.approx(15.0e-6, rel=1e-3) and old["launch"] == "device"
    assert new["time_s"] == pytest.approx(31.6e-6, rel=1e-4) and new["device_time_s"] == pytest.approx(old["time_s"])
    assert set(old) == set(new) and {"proto", "candidates_time_s", "algo", "busbw_GBps"} <= set(new)


@settings(max_examples=60, deadline=None)
@given(
    gpus=st.integers(2, 8),
    nbytes=st.integers(1, 2**32),
    system=st.sampled_from(["dgx-a100", "dgx-h100", "dgx-b200", "pcie-8gpu"]),
)
def test_launch_never_lowers_the_time_and_orders_the_modes(gpus, nbytes, system):
    t = {m: predict("allreduce", system, gpus, nbytes, launch=m).time_s for m in launch.LAUNCH_MODES}
    assert t["single-process"] >= t["process-per-gpu"] >= t["cuda-graphs"] == t["device"]

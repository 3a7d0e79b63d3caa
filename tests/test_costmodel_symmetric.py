"""NCCL's symmetric-memory kernels for registered buffers (nvcourse.costmodel.symmetric, nccl_tuning.toml [symmetric]):
NCCL's own model of them, read from src/sym_kernels.cc; where they do not run, the usual algorithms."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from nvcourse.costmodel import configure, predict, symmetric


def test_large_all_reduce_takes_the_multicast_two_shot_at_the_line_rate_not_nccls_peak():
    # RSxLDMC_AGxSTMC: busBytes = S/n + S, peak 480 "GBps" (2^30 B/s) on Hopper, baseLat 7.8 us:
    # 4 GiB on 8 H100 -> NCCL's estimate 7.8 + 1.125 x 4294967296 / (480 x 1073.741824) - 1 = 9382.5 us
    # (softplus(x - 1) ~ x - 1), which NCCL picks by; but 480 GiB/s is above the H100's 450 GB/s of NVLink per
    # direction, so the time is the wires' floor: 1.125 x 4 GiB / 450 GB/s = 10737 us (walkthrough Z)
    p = predict("allreduce", "dgx-h100", 8, 2**32, registered=True)
    assert (p.algo, p.kernel, p.registered, p.proto) == ("symmetric", "AllReduce_RSxLDMC_AGxSTMC", True, "Simple")
    assert p.candidates_estimate_s["symmetric/AllReduce_RSxLDMC_AGxSTMC"] == pytest.approx(9382.5e-6, rel=1e-3)
    assert p.time_s == pytest.approx(1.125 * 2**32 / 450e9, rel=1e-9)
    for system, gpus in (("dgx-h100", 8), ("dgx-b200", 8), ("gb200-nvl72", 72)):  # never above the line rate
        line = configure(system, gpus).system.gpu_spec.nvlink_GBps_bidir / 2 * 1e9
        for size in (2**20, 2**26, 2**30, 2**34):
            q = predict("allreduce", system, gpus, size, registered=True)
            assert size * (gpus + 1) / gpus / q.time_s <= line * (1 + 1e-9), (system, size)


def test_small_all_reduce_takes_one_shot_ll():
    # one-shot LL kernels: baseLat 4.5 us on Hopper; through the switch (LLMC) they are charged x1.1 more bandwidth
    k = symmetric.pick("allreduce", 8, configure("dgx-h100", 8))
    assert k.ll and k.name == "AllReduce_AGxLLMC_R" and k.base_us == 4.5 and 4.5 < k.time_us < 5.0
    # without multicast (the names NCCL lists without MC) the plain one-shot and two-shot remain
    names = {x.name for x in symmetric.kernels("allgather", 2**20, configure("dgx-h100", 8))}
    assert names == {"AllGather_LL", "AllGather_ST", "AllGather_LLMC", "AllGather_STMC"}
    # LL kernels stop at 2 GiB of n x bytes (all-gather: bytes per rank)
    big = {x.name for x in symmetric.kernels("allgather", 2**35, configure("dgx-h100", 8))}
    assert big == {"AllGather_ST", "AllGather_STMC"}


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        (dict(system="dgx-a100", gpus=8), "Hopper and Blackwell"),
        (dict(system="dgx-h100", gpus=8, nodes=2), "one NVLink domain"),
        (dict(system="dgx-h100", gpus=8, nccl_version="2.26"), "2.27"),
        (dict(system="pcie-8gpu", gpus=8), "NVLink switches"),
    ],
)
def test_where_they_do_not_run_the_usual_algorithms_do(kwargs, reason):
    c = configure(kwargs["system"], kwargs["gpus"], kwargs.get("nodes", 1), nccl_version=kwargs.get("nccl_version"))
    assert reason in symmetric.why_not("allreduce", c)
    p = predict("allreduce", nbytes=2**20, registered=True, **kwargs)
    assert p.algo != "symmetric" and p.kernel == "" and p.registered
    assert "only" in symmetric.why_not("alltoall", configure("dgx-h100", 8))


def test_registered_refuses_a_forced_algorithm():
    with pytest.raises(ValueError, match="algo must be auto"):
        predict("allreduce", "dgx-h100", 8, 2**20, algo="ring", registered=True)
    with pytest.raises(ValueError, match="registered must be True or False"):
        predict("allreduce", "dgx-h100", 8, 2**20, registered="yes")


def test_cli_registered_adds_fields_and_keeps_the_old_ones():
    argv = [sys.executable, "-m", "nvcourse", "predict", "allreduce", "--system", "dgx-h100", "--gpus", "8",
            "--bytes", "4GiB", "--json"]  # fmt: skip
    plain = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    reg = json.loads(subprocess.run([*argv, "--registered"], capture_output=True, text=True, check=True).stdout)
    assert set(plain) <= set(reg) and plain["registered"] is False and plain["kernel"] == ""
    assert reg["kernel"] == "AllReduce_RSxLDMC_AGxSTMC" and reg["time_s"] < plain["time_s"]


def test_multicast_needs_more_than_two_gpus():
    # hasLsaMultimem = nvlsSupport && nRanks > 2 (sym_kernels.cc line 443)
    two = {k.name for k in symmetric.kernels("allreduce", 2**20, configure("dgx-h100", 2))}
    assert two == {"AllReduce_AGxLL_R", "AllReduce_RSxLD_AGxST"}
    four = {k.name for k in symmetric.kernels("allreduce", 2**20, configure("dgx-h100", 4))}
    assert "AllReduce_RSxLDMC_AGxSTMC" in four


"""A run with NCCL_NVLS_ENABLE=0 (``predict --no-nvls``): NCCL has no NVLS, no NVLSTree, no multicast kernel."""

from __future__ import annotations

import json

import pytest

from nvcourse.cli import main
from nvcourse.costmodel import predict, predict_sweep, sweeps


def _pairs(p) -> set[str]:
    return {k.split("/")[0] for k in p.candidates_time_s}


def test_one_node_h100_loses_nvls_and_keeps_the_rest():
    on = predict("allreduce", "dgx-h100", 8, 2**30)
    off = predict("allreduce", "dgx-h100", 8, 2**30, nvls=False)
    assert on.algo == "nvls" and "nvls" in _pairs(on)  # 1 GiB on 8 H100: NVLS when it may
    assert "nvls" not in _pairs(off) and off.algo in ("ring", "tree") and not off.nvls_enabled
    assert off.time_s > on.time_s  # what NCCL_NVLS_ENABLE=0 costs there
    # the ring itself is not changed by the switch
    assert off.candidates_time_s["ring/Simple"] == pytest.approx(on.candidates_time_s["ring/Simple"])


def test_across_nodes_nvlstree_goes_too():
    on = predict("allreduce", "gb200-nvl72", 64, 2**30, nodes=2, fabric="roce-400g")
    off = predict("allreduce", "gb200-nvl72", 64, 2**30, nodes=2, fabric="roce-400g", nvls=False)
    assert "nvlstree" in _pairs(on) and "nvlstree" not in _pairs(off)
    assert off.algo in ("ring", "tree")


def test_forcing_nvls_with_nvls_off_names_the_switch():
    with pytest.raises(ValueError, match="NCCL_NVLS_ENABLE=0"):
        predict("allreduce", "dgx-h100", 8, 2**20, algo="nvls", nvls=False)
    with pytest.raises(ValueError, match="nvls must be True or False"):
        predict("allreduce", "dgx-h100", 8, 2**20, nvls="no")


def test_registered_buffers_lose_the_multicast_kernels():
    on = predict("allreduce", "dgx-h100", 8, 2**30, registered=True)
    off = predict("allreduce", "dgx-h100", 8, 2**30, registered=True, nvls=False)
    assert "MC" in on.kernel
    assert off.kernel and not any("MC" in k for k in off.candidates_time_s)


def test_sweep_agrees_with_single_sizes():
    sizes = [8, 2**20, 2**30]
    sw = predict_sweep("allreduce", "dgx-h100", 8, sizes, nvls=False)
    for s, t, a in zip(sizes, sw.time_s, sw.algo, strict=True):
        p = predict("allreduce", "dgx-h100", 8, s, nvls=False)
        assert (p.algo, p.time_s) == (str(a), pytest.approx(float(t)))
    assert all(r["nvls_enabled"] is False for r in sw.rows())


def test_cli_flag_json_and_header(capsys):
    argv = ["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "1GiB"]
    assert main([*argv, "--json"]) == 0
    on = json.loads(capsys.readouterr().out)
    assert main([*argv, "--no-nvls", "--json"]) == 0
    off = json.loads(capsys.readouterr().out)
    assert (on["algo"], on["nvls_enabled"]) == ("nvls", True)
    assert off["nvls_enabled"] is False and off["algo"] != "nvls"
    assert set(on) == set(off)  # a field added, none renamed
    assert main([*argv[:-2], "--min-bytes", "1MiB", "--max-bytes", "4MiB", "--no-nvls"]) == 0
    out = capsys.readouterr().out
    assert "NVLS off (NCCL_NVLS_ENABLE=0)" in out.splitlines()[0] and "nvls/" not in out


def test_a_run_that_set_nvls_off_is_predicted_so():
    runs = [p for p in sweeps.points("all") if not p.nvls]
    assert runs, "the OCI two-rack run sets NCCL_NVLS_ENABLE=0 in its manifest"
    for r in sweeps.compare(runs):
        assert r.algo not in ("nvls", "nvlstree")

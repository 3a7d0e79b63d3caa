"""Expert parallelism in the step-time model: hand-worked all-to-all cases, limits and bad input."""

import pytest

from nvcourse import training as tr
from nvcourse.fabric.moe import MoEConfig, alltoall_bytes_per_gpu

# The small model of test_training_step.py: 1e9 params, 4 layers, h = 1024, s = 1024, 16 sequences per step.
TINY = tr.ModelSpec(
    id="tiny", name="tiny", params=1e9, layers=4, hidden=1024, heads=8, seq=1024, global_batch_tokens=16 * 1024
)
# Made an MoE by assumption: 8 experts per layer, top-2, every one of the 4 layers an MoE layer.
MOE = dict(experts=8, top_k=2)
# dgx-h100: NVLink 18 x 25 GB/s x 0.824 = 370.8 GB/s per GPU, alpha 3.4 us; NDR NIC 50 x 0.94 = 47 GB/s per GPU, alpha
# 14 us.


def test_bytes_per_gpu_hand_worked():
    # micro-batch b = 1 of s = 1024 tokens: routed buffer = 1024 tokens x 2 (top_k) x 1024 (h) x 2 B = 4,194,304 B;
    # each GPU keeps 1/8 of the copies and sends 7/8: 4,194,304 x 7/8 = 3,670,016 B per all-to-all.
    cfg = MoEConfig(hidden=1024, tokens=1024, experts=8, top_k=2)
    assert cfg.routed_bytes == 4_194_304
    assert alltoall_bytes_per_gpu(cfg, 8) == 3_670_016


def test_ep_inside_one_nvlink_domain_hand_worked():
    st = tr.step_time(TINY, "dgx-h100", 8, ep=8, **MOE)
    # tp = pp = 1 -> dp = 8, m = 16 / 8 = 2 micro-batches; EP = 8 consecutive ranks: one node.
    assert (st.dp, st.micro_batches, st.ep) == (8, 2, 8)
    assert st.placements["ep"] == tr.Placement(ranks=8, per_node=8, nodes=1)
    # one all-to-all: 3.4e-6 + 3,670,016 / 370.8e9 = 3.4e-6 + 9.89756e-6, and NCCL's second copy: each peer's message
    # (S/8 = 448 KiB, on 4 channels: parts of 112 KiB, less than the 512 KiB chunk) goes into the receiver's FIFO and
    # out of it in a row, so its bytes count twice: 3.4e-6 + 2 x 9.89756e-6 = 2.319512e-5 s
    # x 4 (dispatch + combine, forward + backward) x 4 MoE layers x 2 micro-batches = 32 -> 7.422438e-4 s
    assert st.ep_comm_s == pytest.approx(7.422438e-4, rel=1e-5)
    assert st.breakdown()["EP comm"] == st.ep_comm_s
    assert st.total_s == pytest.approx(sum(st.breakdown().values()))
    assert st.exposed_comm_s == pytest.approx(st.tp_comm_s + st.pp_comm_s + st.dp_exposed_s + st.ep_comm_s)


def test_ep_across_nodes_hand_worked():
    st = tr.step_time(TINY, "dgx-h100", 64, tp=8, ep=8, **MOE)
    # tp = 8 fills each node, dp = 8, m = 2; the EP group strides by tp = 8: one rank in each of 8 nodes.
    assert st.placements["ep"] == tr.Placement(ranks=8, per_node=1, nodes=8)
    # one all-to-all through each GPU's NIC, after NCCL's rendezvous (2 x 14 us):
    # 28e-6 + 3,670,016 / 47e9 = 28e-6 + 7.80854e-5 = 1.060854e-4 s; x 32 = 3.394733e-3 s: ~4.6x the NVLink case
    assert st.ep_comm_s == pytest.approx(3.394733e-3, rel=1e-5)


def test_moe_layers_pp_and_active_flops():
    # 2 MoE layers over pp = 2 stages: 1 per stage; gpus 16, pp 2, ep 8 -> dp 8, m 2: 4 x 1 x 2 = 8 all-to-alls in one
    # node
    st = tr.step_time(TINY, "dgx-h100", 16, pp=2, ep=8, moe_layers=2, **MOE)
    assert st.ep_comm_s == pytest.approx(8 * 2.319512e-5, rel=1e-5)
    # active parameters only: 6 x 0.25e9 x 16384 FLOPs = a quarter of the dense compute, MFU counts the same FLOPs
    dense = tr.step_time(TINY, "dgx-h100", 8, ep=8, **MOE)
    sparse = tr.step_time(TINY, "dgx-h100", 8, ep=8, active_params=0.25e9, **MOE)
    assert sparse.compute_s == pytest.approx(dense.compute_s / 4)
    assert sparse.model_flops == pytest.approx(6 * 0.25e9 * 16384)
    assert sparse.ep_comm_s == dense.ep_comm_s


def test_ep_one_adds_nothing():
    base = tr.step_time(TINY, "dgx-h100", 16, tp=8)
    for st in (tr.step_time(TINY, "dgx-h100", 16, tp=8, ep=1), tr.step_time(TINY, "dgx-h100", 16, tp=8, ep=1, **MOE)):
        assert st.ep_comm_s == 0 and st.total_s == base.total_s
        assert list(st.breakdown()) == ["compute", "pipeline bubble", "TP comm", "PP comm", "DP comm (exposed)"]
    assert "ep" not in base.placements


def test_infinite_bandwidth_leaves_only_latency():
    st = tr.step_time(TINY, "dgx-h100", 8, ep=8, bandwidth_multiplier=1e12, **MOE)
    assert st.ep_comm_s == pytest.approx(32 * 3.4e-6, rel=1e-6)
    across = tr.step_time(TINY, "dgx-h100", 64, tp=8, ep=8, bandwidth_multiplier=1e12, **MOE)
    assert across.ep_comm_s == pytest.approx(32 * 28e-6, rel=1e-6)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(ep=3, experts=8, top_k=2, gpus=24), "ep must divide experts"),
        (dict(ep=16, experts=16, top_k=2, gpus=8), "ep must divide dp"),  # ep·tp·pp = 16 > 8 GPUs
        (dict(ep=8, experts=8, top_k=2, gpus=8, tp=2), "ep must divide dp"),  # 8·2·1 = 16 > 8 GPUs
        (dict(ep=2, experts=4, top_k=5, gpus=8), "top_k must be <= experts"),
        (dict(ep=2, gpus=8), "experts"),
        (dict(ep=2, experts=4, gpus=8), "top_k"),
        (dict(ep=0, gpus=8), "ep must be"),
        (dict(ep=2, experts=4, top_k=1, moe_layers=5, gpus=8), "moe_layers"),
        (dict(experts=4, top_k=1, active_params=2e9, gpus=8), "active_params"),
        (dict(top_k=2, gpus=8), "need experts"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    gpus = kwargs.pop("gpus")
    with pytest.raises(ValueError, match=name):
        tr.step_time(TINY, "dgx-h100", gpus, **kwargs)

"""Step-time model, placement, cost: hand-worked cases, limits and bad input."""

import pytest

from nvcourse import training as tr

# A small model to work by hand: 1e9 params, 4 layers, h = 1024, s = 1024, 16 sequences per step.
TINY = tr.ModelSpec(
    id="tiny", name="tiny", params=1e9, layers=4, hidden=1024, heads=8, seq=1024, global_batch_tokens=16 * 1024
)
# dgx-h100: H100 989 TFLOPS; NVLink 18 x 25 GB/s x 0.824 = 370.8 GB/s, alpha 3.4 us; NDR NIC 50 x 0.94 = 47 GB/s per
# GPU, alpha 14 us.
# default compute_efficiency 0.55 (data/training.toml). Collective times come from nvcourse.costmodel, protocol-aware:
# the hand-worked cases force algo="ring" (2(n-1) steps, of which 2(k-1) cross nodes) and the fastest of NCCL's
# protocols is used, with NCCL 2.30.7's constants (data/nccl_tuning.toml, order [LL, LL128, Simple]):
#   time = base latency (once per call; ring [6.6, 14, 8.4] us) + steps x per-step latency (ring over NVLink
#   [0.6, 1.9, 3.4] us; net ring [2.7, 4.0, 14] us, net tree [5.0, 8.5, 14] us when one GPU per node; intra-node steps
#   of a multi-node ring pay at least the net overhead 1 us, x3 for Simple) + bytes / bandwidth, the bandwidth being
#   the Simple one x 0.5 (LL) or x 0.92 (LL128), LL's bus bandwidth capped at 141 GB/s on one Hopper node and 39 GB/s
#   across 2+ nodes, LL128's at 16 channels x 36.7 = 587.2 GB/s.


def test_six_n_d_and_recompute():
    # Llama 3 405B: 6 x 405e9 x 15.6e12 = 3.7908e25 FLOPs (paper: ~3.8e25)
    assert tr.training_flops(405e9, 15.6e12) == pytest.approx(3.7908e25)
    assert tr.training_flops(1e9, 1e9, recompute="full") == pytest.approx(8e18)


def test_compute_time_and_bubble():
    # 9.8304e13 FLOPs on 8 GPUs at 989 TFLOPS x 0.55: 9.8304e13 / (8 x 989e12 x 0.55) = 0.0225902 s
    assert tr.compute_time_s(9.8304e13, 8, peak_TFLOPS=989, efficiency=0.55) == pytest.approx(0.0225902, rel=1e-5)
    # p = 16, m = 64: 15 / 79 = 0.18987 (facts file: 19 %)
    assert tr.pipeline_bubble_fraction(16, 64) == pytest.approx(15 / 79)
    assert tr.pipeline_bubble_fraction(16, 64, virtual_stages=4) == pytest.approx(15 / 271)
    assert tr.pipeline_bubble_fraction(1, 5) == 0


def test_tp_inside_one_node_hand_worked():
    st = tr.step_time(TINY, "dgx-h100", 8, tp=8, algo="ring")
    assert (st.dp, st.micro_batches) == (1, 16)
    # compute: 6 x 1e9 x 16384 = 9.8304e13 FLOPs -> 0.0225902 s
    assert st.compute_s == pytest.approx(0.0225902, rel=1e-5)
    # one all-reduce of b*s*h*2 = 2,097,152 B over 8 GPUs, 14 ring steps over NVLink; busbw factor 2 x 7/8 = 1.75:
    #   Simple: 8.4 + 14 x 3.4 = 56.0 us + 1.75 x 2097152 / 370.8e9 = 9.8975 us          -> 65.90 us
    #   LL128:  14 + 14 x 1.9 = 40.6 us + 9.8975 / 0.92 = 10.758 us (cap 587.2 not hit)   -> 51.36 us
    #   LL:     6.6 + 14 x 0.6 = 15.0 us + 1.75 x 2097152 / 141e9 = 26.029 us (370.8 x 0.5 = 185.4 > cap 141)
    #           -> 41.0285 us, the fastest: NCCL's LL for a 2 MiB all-reduce in one node
    #   x 4 per layer x 4 layers x 16 micro-batches = 256 x 4.10285e-5 = 0.0105033 s
    assert st.tp_comm_s == pytest.approx(0.0105033, rel=1e-4)
    assert st.dp_comm_s == 0 and st.pp_comm_s == 0 and st.bubble_s == 0
    assert st.total_s == pytest.approx(0.0225902 + 0.0105033, rel=1e-4)
    assert st.mfu == pytest.approx(0.55 * 0.0225902 / 0.0330935, rel=1e-3)
    assert st.efficiency == pytest.approx(st.mfu / 0.55)
    # forcing NCCL's Simple protocol (proto pass-through): 256 x 65.8975e-6 = 0.0168698 s
    simple = tr.step_time(TINY, "dgx-h100", 8, tp=8, algo="ring", proto="Simple")
    assert simple.tp_comm_s == pytest.approx(0.0168698, rel=1e-4)
    assert simple.compute_s == st.compute_s


def test_nccl_choice_inside_an_h100_node_at_2_MiB_is_nvls():
    st = tr.step_time(TINY, "dgx-h100", 8, tp=8)
    # NCCL's own estimate picks (its table on one switch node, nvcourse.costmodel.nccl_table):
    #   NVLS: 25 us + 2097152 B / 272.0 GB/s (8 channels x 40 GB/s, tuning.cc) = 32.710 us, the least;
    #   ring/LL: 6.6 + 14 x 0.6 = 15 us + 2097152 x 14/8 / 141 GB/s (LL cap) = 41.028 us.
    # The model times NVLS at the links' rate with its pipeline's fill: 25 us + 2097152 x 9/8 / (370.8 GB/s x 0.85)
    # = 25 + 7.4857 us, and 2 MiB is one loop (16 channels x 8 GPUs x 16 KiB), so 2 x 7.4857 more: 47.457 us;
    # x 256 all-reduces. (Published 8xH100 runs, default tuner: 42.1 and 43.4 us at 2 MiB: the fill is the likelier
    # miss, the appendix says.)
    assert st.tp_comm_s == pytest.approx(256 * 47.457e-6, rel=1e-4)


def test_dp_across_nodes_overlap_hand_worked():
    st = tr.step_time(TINY, "dgx-h100", 16, tp=8, algo="ring")
    # dp = 2, one rank per node (stride 8): grad buffer 1e9/8 x 2 = 2.5e8 B over one 47 GB/s NIC, 2 ring steps both
    # across nodes at the net tree latency (one GPU per node); busbw factor 2 x 1/2 = 1:
    #   Simple: (8.4 + 2 x 14 = 36.4 us) x 1.4, NCCL's ring plateau across nodes, = 50.96 us
    #           + 2.5e8 / 47e9 = 5.31915e-3 s                              -> 5.37011e-3 s, the fastest
    #   LL128:  14 + 2 x 8.5 = 31 us + 5.31915e-3 / 0.92 = 5.78169e-3 s   -> 5.81269e-3 s
    #   LL:     6.6 + 2 x 5.0 = 16.6 us + 2.5e8 / (47e9 x 0.5 = 23.5e9, under the 39 GB/s cap) -> 1.06549e-2 s
    assert st.placements["dp"] == tr.Placement(ranks=2, per_node=1, nodes=2)
    assert st.dp_comm_s == pytest.approx(5.37011e-3, rel=1e-4)
    # m = 8; compute 0.0225902 / 2 = 0.0112951; window = backward of the last micro-batch = 0.0112951 / 8 x 4/6 =
    # 9.4126e-4
    assert st.dp_exposed_s == pytest.approx(5.37011e-3 - 9.4126e-4, rel=1e-4)
    assert tr.step_time(TINY, "dgx-h100", 16, tp=8, overlap_dp=False, algo="ring").dp_exposed_s == pytest.approx(
        st.dp_comm_s
    )


def test_bad_placement_puts_tp_on_the_nics():
    good = tr.step_time(TINY, "dgx-h100", 16, tp=8, algo="ring")
    bad = tr.step_time(TINY, "dgx-h100", 16, tp=8, placement="dp-first", algo="ring")
    # dp-first: TP ranks stride 2 -> 4 per node, 2 nodes: beta = min(370.8, 4 x 47) = 188 GB/s;
    #   14 steps, 2 of them across nodes (net ring latency), 12 inside (NVLink, at least the net overhead):
    #   Simple: 8.4 + 12 x max(3.4, 3 x 1) + 2 x 14 = 77.2 us + 1.75 x 2097152 / 188e9 = 19.5215 us  -> 96.72 us
    #   LL128:  14 + 12 x max(1.9, 1) + 2 x 4.0 = 44.8 us + 19.5215 / 0.92 = 21.2190 us               -> 66.019 us
    #   LL:     6.6 + 12 x max(0.6, 1) + 2 x 2.7 = 24.0 us + 1.75 x 2097152 / 39e9 (cap) = 94.10 us  -> 118.1 us
    #   LL128 wins: 6.60189e-5 s per all-reduce; x 4 x 4 x 8 = 0.00845042 s
    assert bad.placements["tp"] == tr.Placement(ranks=8, per_node=4, nodes=2)
    assert bad.tp_comm_s == pytest.approx(0.00845042, rel=1e-4)
    # the DP pair now sits inside a node, Simple: 8.4 + 2 x 3.4 = 15.2 us + 2.5e8 / 370.8e9 = 6.74218e-4 s
    #   = 6.89418e-4 s (LL128: 17.8 us + 7.32846e-4 s; slower), hidden by the 9.41e-4 s window
    assert bad.dp_comm_s == pytest.approx(6.89418e-4, rel=1e-4)
    assert bad.dp_exposed_s == 0
    assert bad.tp_comm_s > good.tp_comm_s      # 8.45e-3 s vs 128 x 4.10285e-5 = 5.25e-3 s
    # at a real size the bad placement costs far more than it saves (Llama 3 405B layout)
    kw = dict(tp=8, pp=16, virtual_stages=4)
    assert (
        tr.step_time("llama3-405b", "dgx-h100", 16384, placement="dp-first", **kw).total_s
        > 1.5 * tr.step_time("llama3-405b", "dgx-h100", 16384, **kw).total_s
    )


def test_pipeline_hand_worked():
    st = tr.step_time(TINY, "dgx-h100", 2, pp=2)
    # m = 16, bubble = compute x 1/16; compute = 9.8304e13 / (2 x 989e12 x 0.55) = 0.0903608 s
    assert st.bubble_s == pytest.approx(0.0903608 / 16, rel=1e-5)
    # p2p inside the node: NCCL splits the 2 MiB over 16 channels (2 ranks on H100's 32 point-to-point channels,
    # [p2p_nvlink]) at 21.1 GB/s each, 337.6 GB/s < NVLink's 370.8, and each 128 KiB part (less than a 512 KiB chunk)
    # is copied twice, into the receiver's FIFO and out of it: 3.4e-6 + 2 x 2097152 / 337.6e9 = 1.58242e-5 s;
    # x 2 directions x 16 = 5.06375e-4 s
    assert st.pp_comm_s == pytest.approx(5.06375e-4, rel=1e-4)


def test_one_gpu_has_no_communication():
    st = tr.step_time(TINY, "dgx-h100", 1)
    assert st.exposed_comm_s == 0 and st.bubble_s == 0
    assert st.total_s == st.compute_s
    assert st.efficiency == pytest.approx(1.0)


def test_infinite_bandwidth_leaves_compute_and_latency():
    st = tr.step_time(TINY, "dgx-h100", 64, tp=8, pp=1, bandwidth_multiplier=1e12, overlap_dp=False, algo="ring")
    # what is left is the latency of the pair NCCL picks at the real bandwidth (the what-if scales bandwidth only):
    #   TP (8 GPUs in a node, 2 MiB: LL, as in test_tp_inside_one_node_hand_worked): 6.6 + 14 x 0.6 = 15 us
    #     x 4 x 4 x 2 micro-batches = 4.8e-4 s
    #   DP (8 nodes, one GPU each, 2.5e8 B: Simple, (8.4 + 14 x 14 = 204.4 us) x 1.4 (NCCL's ring plateau across
    #     nodes) = 286.16 us + 2.5e8 x 1.75 / 47e9 = 9.3085e-3 s beats LL128's 14 + 14 x 8.5 = 133 us
    #     + 9.3085e-3 / 0.92 = 1.01179e-2 s): 2.8616e-4 s
    assert st.tp_comm_s == pytest.approx(4.8e-4, rel=1e-6)
    assert st.dp_comm_s == pytest.approx(2.8616e-4, rel=1e-6)
    zero_alpha_limit = st.total_s - st.tp_comm_s - st.dp_exposed_s
    assert zero_alpha_limit == pytest.approx(st.compute_s)


def test_degraded_link_slows_the_step():
    healthy = tr.step_time("llama3-70b", "dgx-h100", 512, tp=8, pp=4, algo="ring")
    slow = tr.step_time("llama3-70b", "dgx-h100", 512, tp=8, pp=4, slowest_link_factor=0.5, algo="ring")
    assert slow.tp_comm_s > 1.9 * healthy.tp_comm_s
    assert slow.total_s > healthy.total_s


def test_llama3_reference_is_near_reported_mfu():
    ref = tr.data()["reference_runs"]["llama3-405b-16k"]
    st = tr.step_time(ref["model"], ref["system"], ref["gpus"], tp=ref["tp"], pp=ref["pp"], virtual_stages=4)
    assert st.micro_batches == 16          # 2048 sequences / dp 128
    assert abs(st.mfu - ref["reported_mfu"]) < 0.05


def test_best_config_fits_and_is_fastest():
    b = tr.best_config("llama3-70b", "dgx-h100", 64)
    assert b is not None and b.fits
    for tp in (1, 2, 4, 8):
        for pp in (1, 2, 4, 8, 16):
            try:
                st = tr.step_time("llama3-70b", "dgx-h100", 64, tp=tp, pp=pp)
            except ValueError:
                continue
            if st.fits:
                assert b.total_s <= st.total_s + 1e-12
    assert tr.best_config("llama3-405b", "dgx-h100", 8) is None   # 405B never fits in one node


def test_run_cost_hand_worked():
    st = tr.step_time(TINY, "dgx-h100", 8, tp=8)
    tokens = 16384 / st.total_s * 3600     # one hour of training
    c = tr.run_cost(st, tokens, usd_per_gpu_hour=2.0, kW_per_gpu=1.0, usd_per_kWh=0.1, pue=1.5)
    # 1 h x 8 GPUs = 8 GPU-h -> $16; energy 8 x 1 kW x 1.5 = 12 kWh = 0.012 MWh -> $1.2
    assert c.hours == pytest.approx(1.0)
    assert c.gpu_hours == pytest.approx(8.0)
    assert c.usd == pytest.approx(16.0)
    assert c.energy_MWh == pytest.approx(0.012)
    assert c.energy_usd == pytest.approx(1.2)
    # goodput 0.8 stretches the run by 1/0.8
    assert tr.run_cost(st, tokens, usd_per_gpu_hour=2.0, goodput=0.8).usd == pytest.approx(20.0)
    # defaults come from the sourced data file: dgx-h100 at $4.916/GPU-h
    assert tr.run_cost(st, tokens).usd == pytest.approx(8 * 4.916)


def test_moe_alltoall_bytes():
    # 4096 tokens x 7168 x top-8 x 2 B = 469,762,048 B
    assert tr.moe_alltoall_bytes(tokens=4096, hidden=7168, top_k=8) == 469_762_048


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"gpus": 12, "tp": 8}, "gpus"),
        ({"gpus": 16, "tp": 16}, "tp"),
        ({"gpus": 8, "pp": 8}, "pp"),
        ({"gpus": 8, "placement": "random"}, "placement"),
        ({"gpus": 32}, "global batch"),
        ({"gpus": 8, "slowest_link_factor": 1.5}, "slowest_link_factor"),
        ({"gpus": 8, "compute_efficiency": 1.5}, "efficiency"),
        ({"gpus": 8, "zero_stage": 5}, "zero_stage"),
        ({"gpus": 8, "proto": "LL256"}, "proto"),
    ],
)
def test_step_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        tr.step_time(TINY, "dgx-h100", **kwargs)


def test_unknown_names():
    with pytest.raises(ValueError, match="llama3-8b"):
        tr.get_model("gpt-9")
    with pytest.raises(ValueError, match="system"):
        tr.step_time(TINY, "cray-1", 8)
    with pytest.raises(ValueError, match="op must be one of"):
        tr.collective_time("gossip", "dgx-h100", tr.Placement(2, 2, 1), 1e6)
    with pytest.raises(ValueError, match="system_id"):
        tr.system_costs("dgx-1-v100")


def test_step_time_takes_config_dataclasses_or_their_fields_by_name():
    kw = dict(tp=8, pp=4, placement="dp-first", recompute="full", algo="ring")
    by_name = tr.step_time("llama3-70b", "dgx-h100", 1024, **kw)
    by_config = tr.step_time("llama3-70b", "dgx-h100", 1024, parallel=tr.Parallelism(tp=8, pp=4, placement="dp-first"),
                             recipe=tr.Recipe(recompute="full"), links=tr.Links(algo="ring"))
    assert by_config == by_name
    # a keyword overrides the same field of a config given alongside it
    assert tr.step_time("llama3-70b", "dgx-h100", 1024, parallel=tr.Parallelism(tp=4), tp=8, pp=4,
                        placement="dp-first", recompute="full", algo="ring") == by_name
    assert by_name.total_s == pytest.approx(sum(by_name.breakdown().values()))
    with pytest.raises(ValueError, match="unknown setting.*tensor_parallel"):
        tr.step_time("llama3-70b", "dgx-h100", 1024, tensor_parallel=8)

"""The appendix's notes on the model's copy of NCCL's tuner table (``docs/model-validation.md``, section "NCCL's own
tuner table"), kept apart from :mod:`.appendix`, which lays the page out."""

from __future__ import annotations

from typing import Final

__all__ = ["TUNER_NOTES"]

#: the model's copy of NCCL's tuner against the TUNING tables NCCL printed on held-out machines
#: (tests/test_tuner_check.py computes every figure here from tests/fixtures/tables_heldout)
TUNER_NOTES: Final[tuple[str, ...]] = (
    "Four NCCL logs (three hosts) gathered on 2026-12-07 print NCCL's own tuner table (latency in us and bandwidth "
    "in GB/s per collective, algorithm and protocol): 8 x H200 on NCCL 2.30.4 with and without NVLS, 6 and 2 x H100 "
    "on 2.29.2 (`tests/fixtures/tables_heldout`). `python -m nvcourse.devtools.tuner_check "
    "tests/fixtures/tables_heldout/h200x8-nccl2.30.4-ctc-probe.log --system hgx-h200 --gpus 8 --nccl-version 2.30` "
    "lines a table up with the model's copy. Both enable the same (collective, algorithm, protocol) cells: 21 (18 "
    "with NVLS off). When first compared the two agreed on 3 cells of each log, and differed in six ways; the model "
    "has since (2026-12-07) taken NCCL's own table on one switch node, from NCCL's source "
    "(`nvcourse/costmodel/nccl_table.py`, `[graph_search]` in `nvcourse/data/nccl_tuning.toml`), so these four logs "
    "informed the model and count as calibration for its tuner from then on (the readers' first score on them "
    "stands):",
    "Ring bandwidth: NCCL's topology search tries a short list of speeds per channel and gives an NVLink4 GPU "
    "12 ring channels of 30 GB/s = 360 GB/s of bus bandwidth, where the GPU's 18 links "
    "carry NCCL's 20.6 GB/s each, 370.8.",
    "Broadcast and reduce rings: NCCL adds one step's latency when the ring's channels repeat one ring "
    "(sameChannels, as on a switch), not one per GPU: 7.2 us with LL on 8 GPUs (the model had 11.4). The model "
    "chooses with NCCL's figure and still times the call with a step per GPU, since the first chunk crosses every "
    "hop of the ring before the last GPU has it.",
    "Tree all-reduce: bus bandwidth x 0.92, at most the channels x NCCL's per-channel cap.",
    "NVLS: one channel per GPU, each taking its speed from every GPU's links and twice from its head GPU's, so "
    "8 channels of 40 GB/s on 8 H200 and 6 of 50 on 6 H100; all-gather "
    "and reduce-scatter have no conversion to algorithm bandwidth (208.2 GB/s on 8 H200, 177.1 on 6 H100, "
    "25.5 on 2; the model had 1.7 to 25 times that), all-reduce is capped by the graph's inter speed "
    "(272.0, 216.0 and 102.0 GB/s).",
    "With that copy every cell of the four logs agrees within 1 %. The last to agree was the tree all-reduce on 2 "
    "H100 (61.1 / 180.6 / 232.2 GB/s with LL / LL128 / Simple; the copy had x0.71 of them): a tree channel is a chain "
    "of GPUs that the search charges on each hop's two links, and when one chain order on every channel cannot hold "
    "the ring's channel count it tries chains from other GPUs. On 2 GPUs the chains 0->1 and 1->0 share no link, so "
    "the channels split between them (the log's trees run 0-5 from GPU 0 and 6-11 from GPU 1) and the search keeps 12 "
    "channels of 60 GB/s, capped by NCCL at 12 x 38.7 (perChMaxTreeBw). A chain of n GPUs can reach n/(n-1) of a "
    "GPU's bandwidth at most; whether the search gets there depends on the order it tries chains in and on its step "
    "budget, so the model runs the search step by step (`tree_search.py`: NCCL 2.30's order, budgets and rounding). "
    "It finds 12 x 40 on 3 H100 or H200, 16 x 60 and 16 x 50 on 3 and 4 B200 (through the simpler TREE pattern, "
    "which NCCL 2.26+ then rates x 0.85), and one GPU's bandwidth on 4 to 8 H100 (12 x 30) and on 5 to 72 Blackwell "
    "GPUs (16 x 45), as a review's own emulation had found. No printed TUNING table of 3 or 4 GPUs checks those yet, "
    "and no validation run has 3 or 4 such GPUs, so no prediction in the report moved. "
    "The same review checked the model's copy for 8 A100 (ring and tree 12 x 20), 8 B200 (ring and tree 16 x 45, "
    "NVLS 8 x 80 raised to 90) and a 72-GPU NVL72 domain (ring and tree 16 x 45, NVLS 32 x 20 raised to 40) against "
    "the source; NCCL's per-link NVLink figure now follows the release (H100 20.0 GB/s in 2.19, 20.6 from 2.20; a "
    "Blackwell GPU takes the Hopper figure before 2.25, then 40.0, and 40.1 from 2.28).",
    "On one switch node the model now chooses as NCCL's formula does, with this table and NCCL's latency, and no "
    "longer adds the NVLS pipeline's fill to the choice (a 6-H100 log among the four shows NCCL 2.29 running NVLS "
    "at 256 and 512 MiB, where the table rates NVLS and the ring alike and the fill would have tipped the model to "
    "a ring); it times the chosen pair with the links' rate (370.8 GB/s of bus bandwidth on an H100, which the "
    "large-size runs validate) and the fill. Three held-out runs whose predictions this changed moved to the "
    "calibration runs: the SuperBench A100 broadcast and reduce (Simple chosen from 1 MiB, where ring/LL was) and "
    "the 4-H100 all-reduce (the ring from 1 GiB, where NVLS was: NCCL's table gives 4 GPUs an NVLS bandwidth of "
    "2/3 of the ring's); no other held-out prediction moved. In-sample, two 8-H100 all-reduce runs get 6-16 % "
    "slower at 2 and 8 MiB, now timed as NVLS with its fill (x1.06-1.13), where the model had picked a ring.",
    "Eleven published runs gathered after the change, the same day, were added to the held-out runs with their roles "
    "fixed before any model number was computed on them (one-node runs of 4 H100 and 8 A100 driven by one "
    "process, Google Cloud all-gathers and an all-reduce over gIB, three two-node runs of 4 H100 on SURF's "
    "Snellius); two AWS p5e "
    "runs found in the same search were left out, since the model's data already cites their page.",
)

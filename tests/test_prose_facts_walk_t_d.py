"""Sentences of chapters 07, 07b and 08 that a fresh learner found at odds with a readout, the rule another chapter
applies, or each other: each now holds against the model it describes. Expected values come from the chapters'
text; markdown line breaks read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

from nvcourse import rooflines

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NB07, NB07B, NB08 = ("07_training_at_scale.ipynb", "07b_overlapping_communication.ipynb",
                     "08_reliability_and_operations.ipynb")


@cache
def cell(nb: str, cid: str) -> str:
    cells = json.loads((NOTEBOOKS / nb).read_text(encoding="utf-8"))["cells"]
    return next(re.sub(r"\s+", " ", "".join(c["source"])) for c in cells if c["id"] == cid)


def test_07b_key_point_threshold_is_c_over_r_w_as_in_section_7():
    """The key point's number is §7's DP threshold C/(rW), not C/W: the §7 example (8,192 tokens per GPU, 8 ranks
    per node) lies below C/W and still hides, so 'below C/W, communication-bound' would be wrong there."""
    key = cell(NB07B, "c018")
    assert "$C/(rW)$ in tokens per GPU is the one number to remember" in key
    assert "$r = 1$ gives $C/W$): below it DP is communication-bound on that link" in key
    assert "- $C/W$ in tokens per GPU" not in key
    C, W = rooflines.gpu_rates("dgx-h100", link="nic")
    example = rooflines.dp_roofline(8192, C, W, per_node=8)
    assert 8192 < C / W and not example.comm_bound  # the case C/W gets wrong
    for r in (1, 2, 4, 8):  # the key point's rule is the model's, for every ranks-per-node
        for tokens in (512, 2048, 4096, 8192, 32768):
            assert rooflines.dp_roofline(tokens, C, W, per_node=r).comm_bound == (tokens < C / (r * W))

"""Exercise checkers with instant feedback: one module per chapter, imported by its exercise notebook as
``from nvcourse.checks import chNN as check``.

Every exercise cell ends with a call such as ``check.half_bandwidth_size(half_bandwidth_size)`` or
``check.answer("02.ndr_GBps", answer)``. The call returns a :class:`Result` (``passed``, ``message``)
that Jupyter shows as a coloured box (plain text elsewhere) saying what is right, what is wrong and what
to try. A checker never raises: the ``raise NotImplementedError()`` stub reads "not done yet", other
errors and wrong return types are explained, and wrong-but-plausible numbers get a specific hint
(factor 2, bits vs bytes, GB vs GiB, ms vs µs, ...).

Expected values come from the package's tested models (:mod:`nvcourse.linkmodel`, :mod:`~nvcourse.training`,
:mod:`~nvcourse.costmodel`, :mod:`~nvcourse.reliability`, ...) or from hand formulas, on hand-picked and
seeded random inputs — never from typed-in numbers.
"""

from __future__ import annotations

from . import quiz  # noqa: F401  (registers the misconceptions quiz questions)
from ._answers import Question, answer, expected_answer, questions
from ._core import Result
from .ch01 import dp_bytes_per_step, min_gpus, model_state_bytes
from .ch02 import effective_bandwidth, half_bandwidth_size
from .ch03 import ring_bisection, switch_bisection
from .ch04 import algbw_busbw, prediction_vs_measurement, record_prediction, ring_schedule, ring_time
from .ch04b import crossover_bytes, nvls_chunk_bytes, protocol_switch, ring_protocol_time
from .ch05 import alltoall_time, domain_allreduce, moe_dispatch_bytes, moe_network_bytes
from .ch06 import ecmp_collision_probability, hierarchical_allreduce_time
from .ch06b import gdr_state, nvls_state, slow_node
from .ch06c import flat_ring_time, hier_network_time, payload_rate
from .ch06d import acs_redirects, drill, gid_index, lane_fraction
from .ch07 import bubble_fraction, exposed_dp_time, step_prediction, training_compute_time
from .ch07b import bucket_exposed, dp_threshold, min_bucket, tp_pipeline
from .ch07c import decode_time, kv_bytes, kv_transfer, remote_nodes
from .ch08 import cluster_mtbf_hours, young_interval
from .ch08b import drill_answer, pkeys_can_talk, tolerable_loss, xmit_data_bytes

#: Every exercise checker of the course, by chapter: the generic checker tests (tests/test_checks.py) run each
#: one on junk, stubs and code that raises (it must explain, never raise); checkers that take one learner function
#: of plain numbers are also run with a solution and typical mistakes there, the others in their chapter's tests.
CHECKERS = {
    "01": (model_state_bytes, min_gpus, dp_bytes_per_step),
    "02": (half_bandwidth_size, effective_bandwidth),
    "03": (switch_bisection, ring_bisection),
    "04": (algbw_busbw, ring_schedule, ring_time, record_prediction, prediction_vs_measurement),
    "04b": (ring_protocol_time, crossover_bytes, protocol_switch, nvls_chunk_bytes),
    "05": (moe_dispatch_bytes, moe_network_bytes, alltoall_time, domain_allreduce),
    "06": (hierarchical_allreduce_time, ecmp_collision_probability),
    "06b": (gdr_state, nvls_state, slow_node),
    "06c": (payload_rate, flat_ring_time, hier_network_time),
    "06d": (acs_redirects, lane_fraction, gid_index, drill),
    "07": (training_compute_time, bubble_fraction, exposed_dp_time, step_prediction),
    "07b": (bucket_exposed, min_bucket, tp_pipeline, dp_threshold),
    "07c": (kv_bytes, kv_transfer, decode_time, remote_nodes),
    "08": (young_interval, cluster_mtbf_hours),
    "08b": (tolerable_loss, pkeys_can_talk, xmit_data_bytes, drill_answer),
}

__all__ = ["Result", "Question", "answer", "expected_answer", "questions", "CHECKERS"]
__all__ += [f.__name__ for fs in CHECKERS.values() for f in fs]

"""Exercise checkers with instant feedback: ``from nvcourse import checks as check``.

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
from .ch07 import bubble_fraction, exposed_dp_time, step_prediction, training_compute_time
from .ch08 import cluster_mtbf_hours, young_interval
from .ch08b import drill_answer, pkeys_can_talk, tolerable_loss, xmit_data_bytes

#: The checkers that take one learner function of plain numbers and try it on cases, by chapter
#: (tests/test_checks.py runs each with a solution, a stub and typical mistakes). The others take several
#: functions or values (chapters 05 and 07, the predict-then-run pair of 04, ``answer``) and have their own
#: tests (tests/test_checks_ch05_ch07.py, tests/test_checks.py).
CHECKERS = {
    "01": (model_state_bytes, min_gpus, dp_bytes_per_step),
    "02": (half_bandwidth_size, effective_bandwidth),
    "03": (switch_bisection, ring_bisection),
    "04": (algbw_busbw, ring_schedule, ring_time),
    "04b": (ring_protocol_time, crossover_bytes, protocol_switch, nvls_chunk_bytes),
    "06": (hierarchical_allreduce_time, ecmp_collision_probability),
    "08": (young_interval, cluster_mtbf_hours),
}

__all__ = [
    "Result",
    "Question",
    "answer",
    "expected_answer",
    "questions",
    "CHECKERS",
    "model_state_bytes",
    "min_gpus",
    "dp_bytes_per_step",
    "half_bandwidth_size",
    "effective_bandwidth",
    "switch_bisection",
    "ring_bisection",
    "algbw_busbw",
    "ring_schedule",
    "ring_time",
    "record_prediction",
    "prediction_vs_measurement",
    "ring_protocol_time",
    "crossover_bytes",
    "protocol_switch",
    "nvls_chunk_bytes",
    "hierarchical_allreduce_time",
    "ecmp_collision_probability",
    "gdr_state",
    "nvls_state",
    "slow_node",
    "young_interval",
    "cluster_mtbf_hours",
    "moe_dispatch_bytes",
    "moe_network_bytes",
    "alltoall_time",
    "domain_allreduce",
    "training_compute_time",
    "bubble_fraction",
    "exposed_dp_time",
    "step_prediction",
]
__all__ += ["tolerable_loss", "pkeys_can_talk", "xmit_data_bytes", "drill_answer"]  # chapter 08b

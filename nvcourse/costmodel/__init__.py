"""Collective cost models (alpha-beta, from the hardware catalog) and their validation.

>>> from nvcourse.costmodel import predict
>>> p = predict("allreduce", "dgx-h100", gpus=8, nbytes=2**32)
>>> p.algo, p.proto, round(p.busbw_GBps)
('nvls', 'Simple', 486)

See :mod:`nvcourse.costmodel.model` for the formulas, :mod:`nvcourse.costmodel.factors` for every
constant that is not in the catalog, and :mod:`nvcourse.costmodel.validation` for the comparison with
published nccl-tests results.
"""

from .model import (
    ALGORITHMS,
    COURSE_ALGORITHMS,
    NCCL_ALGORITHMS,
    OP_ALGORITHMS,
    OPERATIONS,
    SELECTORS,
    Config,
    Cost,
    algorithms,
    busbw_factor,
    configure,
    cost,
)
from .prediction import PROTO_CHOICES, Prediction, Sweep, pair_cost, predict, predict_sweep
from .tuning import PROTOCOLS

__all__ = [
    "ALGORITHMS",
    "COURSE_ALGORITHMS",
    "NCCL_ALGORITHMS",
    "PROTOCOLS",
    "PROTO_CHOICES",
    "OP_ALGORITHMS",
    "OPERATIONS",
    "SELECTORS",
    "Config",
    "Cost",
    "Prediction",
    "Sweep",
    "algorithms",
    "busbw_factor",
    "configure",
    "cost",
    "pair_cost",
    "predict",
    "predict_sweep",
]

"""Collective cost models (alpha-beta, from the hardware catalog) and their validation.

>>> from nvcourse.costmodel import predict
>>> p = predict("allreduce", "dgx-h100", gpus=8, nbytes=2**32)
>>> p.algo, round(p.busbw_GBps)
('nvls', 489)

See :mod:`nvcourse.costmodel.model` for the formulas, :mod:`nvcourse.costmodel.factors` for every
constant that is not in the catalog, and :mod:`nvcourse.costmodel.validation` for the comparison with
published nccl-tests results.
"""

from .model import (
    ALGORITHMS,
    NCCL_ALGORITHMS,
    OP_ALGORITHMS,
    OPERATIONS,
    SELECTORS,
    Config,
    Cost,
    Prediction,
    Sweep,
    algorithms,
    busbw_factor,
    configure,
    cost,
    predict,
    predict_sweep,
)

__all__ = [
    "ALGORITHMS",
    "NCCL_ALGORITHMS",
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
    "predict",
    "predict_sweep",
]

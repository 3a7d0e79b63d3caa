"""Reference models for training (shapes from ``data/models.toml``, how each is trained from
``data/training.toml``: Llama 3 family and GPT-3, with sources) and training FLOPs."""

from __future__ import annotations

from dataclasses import replace

from .. import _data
from .._validate import choice, number
from ..model_shapes import ModelSpec, shapes
from .memory import RECOMPUTE_MODES

__all__ = ["ModelSpec", "data", "models", "get_model", "training_flops"]


def data() -> dict:
    """The parsed ``data/training.toml``."""
    return _data.load("training")


def models() -> dict[str, ModelSpec]:
    """The reference models with a training setup (Llama 3 8B, 70B, 405B, GPT-3 175B): the shapes of
    ``data/models.toml`` with the ``seq`` and ``global_batch_tokens`` of ``data/training.toml``."""
    table = shapes()
    return {k: replace(table[k], **{f: v[f] for f in ("seq", "global_batch_tokens")})
            for k, v in data()["model_training"].items()}


def get_model(model: str | ModelSpec) -> ModelSpec:
    """A reference model by id (ValueError lists the ids), or the ModelSpec passed in (it needs a ``seq``)."""
    if isinstance(model, ModelSpec):
        if model.seq < 1:
            raise ValueError(f"model {model.id!r} has no training setup: give a ModelSpec with seq >= 1 "
                             f"and global_batch_tokens; got seq={model.seq!r}")
        return model
    table = models()
    choice("model", model, table, note="or a ModelSpec")
    return table[model]


def training_flops(params: float, tokens: float, *, recompute: str = "selective") -> float:
    """FLOPs to train ``params`` parameters on ``tokens`` tokens: 6·P·D (Kaplan 2020; Chinchilla).

    With ``recompute='full'`` the hardware does 8·P·D (one more forward pass); MFU still counts 6·P·D.
    """
    params = number("params", params, positive=True)
    tokens = number("tokens", tokens)
    recompute = choice("recompute", recompute, RECOMPUTE_MODES)
    key = "recompute_per_param_per_token" if recompute == "full" else "per_param_per_token"
    return data()["flops"][key] * params * tokens

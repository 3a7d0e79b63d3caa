"""Reference models (``data/training.toml``: Llama 3 family and GPT-3, with sources) and training FLOPs."""

from __future__ import annotations

from dataclasses import dataclass

from .. import _data
from .._validate import choice, number
from .memory import RECOMPUTE_MODES

__all__ = ["ModelSpec", "data", "models", "get_model", "training_flops"]


def data() -> dict:
    """The parsed ``data/training.toml``."""
    return _data.load("training")


@dataclass(frozen=True)
class ModelSpec:
    """A dense transformer: P parameters, L layers of width h with a heads, trained on sequences of s tokens."""

    id: str
    name: str
    params: float
    layers: int
    hidden: int
    heads: int
    seq: int
    global_batch_tokens: int
    ffn_hidden: int = 0

    @property
    def global_batch_sequences(self) -> int:
        return self.global_batch_tokens // self.seq


def models() -> dict[str, ModelSpec]:
    """The reference models of ``data/training.toml`` (Llama 3 8B, 70B, 405B shapes)."""
    out = {}
    for k, v in data()["models"].items():
        fields = {f: v[f] for f in ModelSpec.__dataclass_fields__ if f in v}
        out[k] = ModelSpec(id=k, **fields)
    return out


def get_model(model: str | ModelSpec) -> ModelSpec:
    """A reference model by id (ValueError lists the ids), or the ModelSpec passed in."""
    if isinstance(model, ModelSpec):
        return model
    table = models()
    if model not in table:
        raise ValueError(f"model must be one of {', '.join(table)} or a ModelSpec; got {model!r}")
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

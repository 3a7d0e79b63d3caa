"""The reference transformers' architecture shapes (``data/models.toml``), shared by training and inference.

One record per model (Llama 3 8B/70B/405B, GPT-3 175B, Qwen3 8B), with its source: parameters, layers,
width, FFN width, attention heads, key/value heads and head dimension. :mod:`nvcourse.training` adds how a
model is trained (``data/training.toml``: sequence length, global batch) and :mod:`nvcourse.inference` reads
the shapes as they are; both hand out the same :class:`ModelSpec`.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _data
from ._validate import choice

__all__ = ["ModelSpec", "data", "shapes", "get_shape"]


def data() -> dict:
    """The parsed ``data/models.toml`` (cached by ``_data.load``: treat it as read-only)."""
    return _data.load("models")


@dataclass(frozen=True)
class ModelSpec:
    """A dense decoder-only transformer: ``params`` parameters, ``layers`` layers of width ``hidden`` with
    ``heads`` attention heads, ``kv_heads`` key/value heads of ``head_dim`` elements and an FFN of
    ``ffn_hidden`` (0: not given). ``seq`` (tokens per sequence) and ``global_batch_tokens`` (tokens per
    optimizer step) say how it is trained; they are 0 for a model the course only serves.

    ``kv_heads = 0`` means multi-head attention (one key/value head per query head) and ``head_dim = 0``
    means ``hidden // heads``, so a hand-made model needs only the shapes it cares about.
    """

    id: str
    name: str
    params: float
    layers: int
    hidden: int
    heads: int
    seq: int = 0
    global_batch_tokens: int = 0
    ffn_hidden: int = 0
    kv_heads: int = 0
    head_dim: int = 0

    def __post_init__(self) -> None:
        # frozen: defaults that depend on other fields are set through object.__setattr__
        if not self.kv_heads:
            object.__setattr__(self, "kv_heads", self.heads)
        if not self.head_dim and self.heads:
            object.__setattr__(self, "head_dim", self.hidden // self.heads)

    @property
    def global_batch_sequences(self) -> int:
        """Sequences per optimizer step (``global_batch_tokens // seq``; 0 for a model without a training setup)."""
        return self.global_batch_tokens // self.seq if self.seq else 0


def shapes() -> dict[str, ModelSpec]:
    """Every model of ``data/models.toml`` by id, without a training setup (``seq`` 0)."""
    out = {}
    for k, v in data()["models"].items():
        out[k] = ModelSpec(id=k, **{f: v[f] for f in ModelSpec.__dataclass_fields__ if f in v})
    return out


def get_shape(model: str | ModelSpec) -> ModelSpec:
    """A model of ``data/models.toml`` by id (ValueError lists the ids), or the ModelSpec passed in."""
    if isinstance(model, ModelSpec):
        return model
    table = shapes()
    choice("model", model, table, note="or a ModelSpec")
    return table[model]

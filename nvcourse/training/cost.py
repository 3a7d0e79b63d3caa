"""Cost and energy of a whole training run (``data/costs.toml``: prices and power per GPU, with sources)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import _data
from .._validate import choice, fraction, number
from .step import StepTime

__all__ = ["RunCost", "system_costs", "electricity", "run_cost"]


def electricity() -> dict:
    """Electricity price and data-centre PUE (``data/costs.toml [electricity]``)."""
    return dict(_data.load("costs")["electricity"])


@dataclass(frozen=True)
class RunCost:
    """A whole training run: wall time, GPU-hours, rental cost, energy and its cost."""

    hours: float
    gpu_hours: float
    usd: float
    energy_MWh: float
    energy_usd: float


def system_costs(system_id: str) -> dict:
    """Price per GPU-hour and power per GPU of a system, with labels and sources (``data/costs.toml``)."""
    table = _data.load("costs")["systems"]
    choice("system_id", system_id, table, note="(systems with cost data)")
    return dict(table[system_id])


def run_cost(
    step: StepTime,
    training_tokens: float,
    *,
    usd_per_gpu_hour: float | None = None,
    kW_per_gpu: float | None = None,
    usd_per_kWh: float | None = None,
    pue: float | None = None,
    goodput: float = 1.0,
) -> RunCost:
    """Cost of training on ``training_tokens`` tokens at this step time.

    ``goodput`` (0–1] stretches the wall time for failures and checkpoints (see ``nvcourse.reliability``).
    Prices and power default to ``data/costs.toml``; pass your own to change an assumption.
    """
    tokens = number("training_tokens", training_tokens, positive=True)
    g = fraction("goodput", goodput)
    c = system_costs(step.system)
    elec = electricity()
    price = c["usd_per_gpu_hour"] if usd_per_gpu_hour is None else number("usd_per_gpu_hour", usd_per_gpu_hour)
    kw = c["kW_per_gpu"] if kW_per_gpu is None else number("kW_per_gpu", kW_per_gpu)
    kwh_price = elec["usd_per_kWh"] if usd_per_kWh is None else number("usd_per_kWh", usd_per_kWh)
    pue = elec["pue"] if pue is None else number("pue", pue, positive=True)
    hours = tokens / step.tokens_per_s / 3600 / g
    gpu_hours = hours * step.gpus
    energy_kWh = gpu_hours * kw * pue
    return RunCost(hours=hours, gpu_hours=gpu_hours, usd=gpu_hours * price, energy_MWh=energy_kWh / 1000,
                   energy_usd=energy_kWh * kwh_price)

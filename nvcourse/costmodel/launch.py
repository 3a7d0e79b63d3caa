"""How a run is launched sets the floor of a small collective: the host's enqueue time per call.

NCCL's tuner, and :func:`nvcourse.costmodel.predict` by default (``launch="device"``), give the time
the GPUs spend. A benchmark or a training step issues calls back to back, so a call also costs at least
what the host needs to enqueue it (``data/launch.toml``, measured on a run of its own):

* ``process-per-gpu`` (mpirun, srun, torchrun; nccl-tests ``-g 1``): one enqueue per call;
* ``single-process`` (nccl-tests ``-g N``): one thread enqueues all N GPUs' kernels, N enqueues per call,
  which is why a single-process sweep's floor sits well above NCCL's device latency;
* ``cuda-graphs`` (nccl-tests ``-G``): calls replay from a graph, no host time per call.

The predicted time is ``max(device time, host floor)``: the host and the GPUs work in a pipeline.

>>> round(host_floor_s("single-process", 8) * 1e6, 1), host_floor_s("cuda-graphs", 8)
(31.6, 0.0)
"""

from __future__ import annotations

from typing import Any, Final

from .._data import load

__all__ = ["LAUNCH_MODES", "raw", "host_floor_s", "describe"]

#: ``launch`` values: ``device`` (GPU time only, as NCCL's tuner) or a launch mode of ``data/launch.toml``.
LAUNCH_MODES: Final[tuple[str, ...]] = ("device", "process-per-gpu", "single-process", "cuda-graphs")


def raw() -> dict[str, Any]:
    """The parsed ``data/launch.toml`` (cached by :func:`nvcourse._data.load`: read-only)."""
    return load("launch")


def check_launch(launch: str) -> None:
    """Raise ``ValueError`` naming the allowed values unless ``launch`` is one of :data:`LAUNCH_MODES`."""
    if launch not in LAUNCH_MODES:
        raise ValueError(f"launch must be one of {', '.join(LAUNCH_MODES)}; got {launch!r}")


def _gpus_per_thread(launch: str, gpus_per_node: int) -> int:
    if launch == "device":
        return 0
    spec = raw()["modes"][launch]
    return gpus_per_node if spec.get("all_gpus", False) else int(spec["gpus_per_thread"])


def host_floor_s(launch: str, gpus_per_node: int) -> float:
    """Seconds the host needs per call in this launch mode (0 for ``device`` and ``cuda-graphs``)."""
    check_launch(launch)
    if isinstance(gpus_per_node, bool) or not isinstance(gpus_per_node, int) or gpus_per_node < 1:
        raise ValueError(f"gpus_per_node must be an integer >= 1; got {gpus_per_node!r}")
    return _gpus_per_thread(launch, gpus_per_node) * float(raw()["host_enqueue"]["per_gpu_us"]) * 1e-6


def describe(launch: str) -> str:
    """One line saying what the launch mode is."""
    check_launch(launch)
    if launch == "device":
        return "GPU time only (what NCCL's tuner predicts; no host enqueue)"
    return str(raw()["modes"][launch]["text"])

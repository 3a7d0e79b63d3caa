"""Observability of GPU fabrics: the counters that find each fault class, alert thresholds derived from
the course's models, a seeded fault-finding drill, and what a job's control plane exposes on the network.

Submodules: :mod:`~nvcourse.observability.counters` (counters, tools, thresholds),
:mod:`~nvcourse.observability.drill` (the simulated cluster with hidden faults),
:mod:`~nvcourse.observability.sockets` (listening sockets of a process tree, from ``/proc``).
"""

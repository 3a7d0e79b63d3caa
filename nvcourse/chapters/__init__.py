"""One module per notebook: everything chapter NN shows (dashboards, figures, tables) lives in ``chNN_topic.py``.

The path a newcomer follows: ``notebooks/NN_*.ipynb`` -> ``nvcourse/chapters/chNN_*.py`` -> the model packages
(``linkmodel``, ``topology``, ``costmodel``, ``fabric``, ``collectives``, ``training``, ``reliability``, ...) ->
``nvcourse/checks/chNN.py`` for the exercise checkers. Models never import from here.

:data:`CHAPTERS` is the map, one :class:`Chapter` per notebook: ``docs/architecture.md``'s chapter table is
generated from it (``python -m nvcourse.devtools.architecture``) and ``tests/test_layout.py`` checks it against
the tree. Importing this package imports no chapter module (they need ipywidgets and matplotlib).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Chapter", "CHAPTERS"]


@dataclass(frozen=True)
class Chapter:
    """Where everything of one notebook lives. Paths are relative to the repository root; ``None``: not there.

    ``module`` is the chapter module under ``nvcourse/chapters/``; ``models`` the top-level ``nvcourse`` modules
    or packages the chapter module and the notebook import (``catalog`` and helpers such as ``units`` left out);
    ``checker`` the module under ``nvcourse/checks/``;
    ``solution`` the exercise notebook with its answers, from which ``exercises/`` is generated.
    """

    number: str
    notebook: str
    title: str
    module: str | None
    models: tuple[str, ...]
    checker: str | None
    solution: str | None
    tests: tuple[str, ...]
    #: the learner copy ``python3 tasks.py exercises`` writes from :attr:`solution` (``None``: a worked example only)
    has_exercise: bool = True

    @property
    def exercise(self) -> str | None:
        """The exercise notebook generated from :attr:`solution`, or ``None``."""
        if self.solution is None or not self.has_exercise:
            return None
        return self.solution.replace("solutions/", "exercises/", 1)


def _nb(stem: str) -> str:
    return f"notebooks/{stem}.ipynb"


def _sol(stem: str) -> str:
    return f"solutions/{stem}_exercises.ipynb"


def _tests(*names: str) -> tuple[str, ...]:
    return tuple(f"tests/test_{n}.py" for n in names)


CHAPTERS: tuple[Chapter, ...] = (
    Chapter("00", _nb("00_start_here"), "Start here", None, (), None, None, _tests("readme")),
    Chapter("01", _nb("01_why_one_gpu_is_not_enough"), "Why one GPU is not enough", "ch01_one_gpu",
            ("linkmodel", "training"), "ch01", _sol("01_why_one_gpu_is_not_enough"),
            _tests("ch01_one_gpu", "training_memory", "checks")),
    Chapter("02", _nb("02_pcie_vs_nvlink"), "PCIe vs NVLink: the alpha-beta model", "ch02_links",
            ("linkmodel",), "ch02", _sol("02_pcie_vs_nvlink"), _tests("ch02_links", "linkmodel", "checks")),
    Chapter("03", _nb("03_topologies_and_nvswitch"), "Topologies and NVSwitch", "ch03_topology",
            ("topology",), "ch03", _sol("03_topologies_and_nvswitch"),
            _tests("topology", "topology_draw", "topo_parser", "topo_pastes", "checks")),
    Chapter("04", _nb("04_collectives_and_allreduce"), "Collectives and all-reduce", "ch04_collectives",
            ("collectives", "linkmodel"), "ch04", _sol("04_collectives_and_allreduce"),
            _tests("collectives", "collectives_model", "collectives_diagrams", "collectives_engines", "checks")),
    Chapter("04b", _nb("04b_predicting_collectives"), "Predicting collectives", "ch04b_predicting",
            ("costmodel",), "ch04b", _sol("04b_predicting_collectives"),
            _tests("ch04b_predicting", "costmodel", "costmodel_protocols", "costmodel_validation", "checks_ch04b")),
    Chapter("05", _nb("05_nvl72_rack_scale"), "NVL72 and rack-scale NVLink domains", "ch05_nvl72",
            ("costmodel", "fabric"), "ch05", _sol("05_nvl72_rack_scale"),
            _tests("ch05_nvl72", "fabric_moe", "fabric_moe_routing", "checks_ch05_ch07")),
    Chapter("06", _nb("06_multinode_fabrics"), "Multi-node fabrics", "ch06_fabrics",
            ("fabric", "costmodel"), "ch06", _sol("06_multinode_fabrics"),
            _tests("fabric_builders", "fabric_flows", "fabric_draw", "fabric_solver", "ch06_fabrics_readout",
                   "checks")),
    Chapter("06b", _nb("06b_nccl_in_practice"), "NCCL in practice", "ch06b_nccl_in_practice",
            ("nccl", "topology"), "ch06b", _sol("06b_nccl_in_practice"),
            _tests("ch06b_chapter", "prose_facts_06b", "nccl_tests_reader", "ncclog_reader", "nccl_cli",
                   "checks_ch06b")),
    Chapter("06c", _nb("06c_multinode_lab"), "Ethernet & RoCE for AI, and a real multi-node lab",
            "ch06c_multinode_lab", ("cluster", "fabric"), "ch06c", _sol("06c_multinode_lab"),
            _tests("ch06c", "cluster", "fabric_ecmp_qp")),
    Chapter("06d", _nb("06d_bringup_and_fault_runbook"), "Bring-up and fault runbook", "ch06d_runbook",
            ("nccl", "observability", "runbook"), "ch06d", _sol("06d_bringup_and_fault_runbook"),
            _tests("ch06d_runbook", "ch06d_checks")),
    Chapter("07", _nb("07_training_at_scale"), "Training at scale", "ch07_training",
            ("training",), "ch07", _sol("07_training_at_scale"),
            _tests("ch07_training", "prose_facts_07", "training_step", "training_ep", "checks_ch05_ch07")),
    Chapter("07b", _nb("07b_overlapping_communication"), "Hiding communication behind compute", "ch07b_overlap",
            ("costmodel", "overlap", "rooflines", "training"), "ch07b", _sol("07b_overlapping_communication"),
            _tests("ch07b_ch07c", "prose_facts_07", "overlap", "checks_ch07b_ch07c")),
    Chapter("07c", _nb("07c_communication_for_inference"), "Communication for inference", "ch07c_inference",
            ("costmodel", "fabric", "inference", "rooflines", "serving"), "ch07c",
            _sol("07c_communication_for_inference"),
            _tests("ch07b_ch07c", "inference", "inference_serving", "checks_ch07b_ch07c")),
    Chapter("08", _nb("08_reliability_and_operations"), "Reliability and operations", "ch08_reliability",
            ("collectives", "observability", "reliability"), "ch08", _sol("08_reliability_and_operations"),
            _tests("ch08_reliability", "reliability", "cli_reliability", "checks")),
    Chapter("08b", _nb("08b_security_and_observability"), "Security and observability of GPU fabrics",
            "ch08b_security_and_observability", ("isolation", "observability"), "ch08b",
            _sol("08b_security_and_observability"),
            _tests("ch08b_chapter", "isolation", "observability", "checks_ch08b")),
    Chapter("09", _nb("09_capstone_design_a_cluster"), "Capstone: design a cluster", "ch09_capstone",
            ("capstone", "capstone_gates", "observability", "training"), None,
            "solutions/09_capstone_reference_design.ipynb",
            _tests("ch09_capstone", "ch09_capstone_gates", "ch09_capstone_prose", "capstone", "capstone_gates"),
            has_exercise=False),
    Chapter("10", _nb("10_other_interconnects_and_numerics"), "Other interconnects and collective numerics",
            "ch10_other_interconnects", (), None, None, _tests("ch10_other_interconnects")),
)

"""The model-driven figures and dashboards each notebook shows, built the way the notebook builds them.

:data:`CASES` maps a notebook's stem to ``(name, build)`` pairs; ``build()`` returns a Figure, a Dashboard, a
``(Figure, ...)`` tuple or, for a dashboard the notebook assembles inline, a Dashboard over the same render
function with the notebook's controls reduced to their ends. Every figure here comes from the models and the
committed data, so it is the same on every machine and under any load; figures of this machine's own
timings (chapter 04's measured sweeps and recorded ring, chapter 08's fault drill) are left out and listed in
:data:`MEASURED`, with the reason. The notebooks themselves are run by nbval, not here.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as w

from nvcourse.widgets import Dashboard

Build = Callable[[], object]


def _ends(render: Callable, columns: int = 2, **options: list) -> Dashboard:
    """A Dashboard over ``render`` whose controls are dropdowns holding the ends of the notebook's controls."""
    controls = {name: w.Dropdown(options=list(values), value=values[0], description=name)
                for name, values in options.items()}
    return Dashboard(controls, render, columns=columns)


def _ch01() -> list[tuple[str, Build]]:
    from nvcourse.chapters import ch01_one_gpu as ch

    return [("plot_gpus_needed", ch.plot_gpus_needed), ("memory_dashboard", ch.memory_dashboard)]


def _ch02() -> list[tuple[str, Build]]:
    from nvcourse.chapters import ch02_links as ch

    return [
        ("alpha_beta_dashboard", ch.alpha_beta_dashboard),
        ("plot_effective_bandwidth", lambda: ch.plot_effective_bandwidth(list(ch.PER_GPU_CHOICES), line_rate=False)),
        ("plot_effective_bandwidth[line rate]",  # the chooser with its line-rate box ticked and every link
         lambda: ch.plot_effective_bandwidth(list(ch.PER_GPU_CHOICES), line_rate=True)),
        ("link_chooser_dashboard", ch.link_chooser_dashboard),
        ("plot_spec_vs_measured", ch.plot_spec_vs_measured),
    ]


def _ch03() -> list[tuple[str, Build]]:
    from nvcourse import catalog
    from nvcourse.chapters import ch03_topology as ch
    from nvcourse.topology import build_system_graph
    from nvcourse.topology.draw import draw_topology

    return [
        *[(f"draw_topology[{s}]", lambda s=s: draw_topology(build_system_graph(s)))
          for s in ("dgx-1-v100", "dgx-h100", "gb200-nvl72")],
        ("render_system", lambda: _ends(ch.render_system, system=list(catalog.systems()),
                                        pattern=["all-to-all", "ring", "one-to-all"])),
        ("render_pasted", lambda: _ends(ch.render_pasted, columns=1, text=[ch.example_text("hgx-h20-nvswitch")],
                                        nvlink=["nvlink4", ""], pcie=["pcie5", ""])),
    ]


def _ch04() -> list[tuple[str, Build]]:
    from nvcourse.chapters import ch04_collectives as ch
    from nvcourse.collectives.draw import draw_collectives

    return [
        ("draw_collectives", draw_collectives),
        ("FormulasView", lambda: _ends(ch.FormulasView(), alpha_us=[3.4, 0.1, 1000.0], beta_GBps=[370.8, 0.1, 1000.0],
                                       procs=[4, 2, 64], size=[2**18, 2**6, 2**30])),
        ("render_formulas", lambda: ch.render_formulas(4, 3.4, 370.8, 2**18)),
        ("formulas_dashboard", ch.formulas_dashboard),  # FormulasView over §3's controls, as the chapter builds it
    ]


def _ch04b() -> list[tuple[str, Build]]:
    from nvcourse.chapters import ch04b_predicting as ch

    return [
        ("predict_dashboard", ch.predict_dashboard),
        ("protocol_kinks_figure", lambda: ch.protocol_kinks_figure("azure-nd-gb200-v6-allreduce-4gpu")),
        ("runs_error_figure", ch.runs_error_figure),
    ]


def _ch05() -> list[tuple[str, Build]]:
    from nvcourse.chapters import ch05_nvl72 as ch
    from nvcourse.fabric.moe import MoEConfig

    cfg = MoEConfig(hidden=7168, tokens=4096, experts=256, top_k=8, bytes_per_elem=2, moe_layers=58)
    return [
        ("ring_vs_nvls_figure", ch.ring_vs_nvls_figure),
        ("moe_figure", lambda: ch.moe_figure(cfg, eps=(8, 16, 32, 64))),
        ("moe_view", lambda: _ends(ch.moe_view, hidden=[7168, 2048, 16384], tokens=[4096, 512, 16384],
                                   experts=[256, 8], top_k=[8, 1], ep=[64, 8, 72], moe_layers=[58, 8, 64])),
        ("moe_dashboard", ch.moe_dashboard),  # the same view over the same controls, as the chapter builds it
    ]


def _ch06() -> list[tuple[str, Build]]:
    import numpy as np

    from nvcourse.chapters import ch06_fabrics as ch
    from nvcourse.fabric import fat_tree, node_order, ring_flows, simulate
    from nvcourse.fabric.draw import draw_fabric
    from nvcourse.plots import new_figure

    def layouts():
        fig, axes = new_figure(10, 3.4, ncols=2)
        for ax, layout in zip(axes, ("rail", "tor")):
            f = fat_tree(64, layout=layout)
            draw_fabric(f, ax, title=f"{layout}: {f.n_leaves} leaf, {f.n_spines} spine")
        return fig

    def routings():
        fab = fat_tree(128)
        order = node_order(fab, "random", seed=0)
        fig, axes = new_figure(14, 3.6, ncols=3)
        for ax, routing in zip(axes, ("ecmp", "dmodk", "ideal")):
            sim = simulate(fab, *ring_flows(fab, order), routing=routing, seed=0)
            s = sim.tier_summary()["leaf→spine"]
            draw_fabric(fab, ax, sim, title=f"{routing}: slowest flow {sim.min_rate_GBps:.3g} GB/s, "
                                            f"up to {s['max_flows']} flows per cable")
        return fig

    def ecmp():
        fab1 = fat_tree(33 * 32, rails=1, nodes_per_su=32)
        xs, mean_sim, slow_sim = [8, 16, 24, 32], [], []
        for m in xs:
            z = np.zeros(m, dtype=int)
            r = np.array([simulate(fab1, np.arange(m), z, 32 * (1 + np.arange(m)), z, seed=s).rate_GBps
                          for s in range(20)]) / fab1.port_GBps_dir
            mean_sim.append(r.mean())
            slow_sim.append(np.mean(r.min(axis=1)))
        return ch.ecmp_figure(32, sim_mean=(xs, mean_sim), sim_slowest=(xs, slow_sim))

    nodes = [2, 4, 8, 16, 32, 64, 128, 256, 512]
    return [
        ("draw_fabric[layouts]", layouts),
        ("ecmp_figure", ecmp),
        ("draw_fabric[routings]", routings),
        ("scaling_figure[64MiB]", lambda: ch.scaling_figure(nodes, 64 * 2**20, routing="dmodk")),
        ("scaling_figure[1GiB]", lambda: ch.scaling_figure(nodes, 2**30, routing="dmodk")),
        ("fabric_dashboard", ch.fabric_dashboard),
    ]


def _ch06c() -> list[tuple[str, Build]]:
    from nvcourse.chapters import ch06c_multinode_lab as ch

    return [
        ("ecmp_qp_figure", lambda: ch.ecmp_qp_figure(32, 32, (1, 2, 4, 8, 16))),
        ("ecmp_qp_dashboard", ch.ecmp_qp_dashboard),
        ("lab_figure", lambda: ch.lab_figure(ch.recorded())),  # the committed 2 x 2 run, not this machine's
        ("lab_dashboard", lambda: ch.lab_dashboard(ch.recorded())),
    ]


def _ch07() -> list[tuple[str, Build]]:
    from nvcourse import training
    from nvcourse.chapters import ch07_training as ch

    ref = training.data()["reference_runs"]["llama3-405b-16k"]
    systems = ["pcie-8gpu", "dgx-h100", "gb200-nvl72"]
    model_ids = ["llama3-8b", "llama3-70b", "llama3-405b"]

    def placement():
        st = training.step_time(ref["model"], ref["system"], ref["gpus"], tp=ref["tp"], pp=ref["pp"], virtual_stages=4)
        dp_first = training.step_time(ref["model"], ref["system"], ref["gpus"], tp=8, pp=16, virtual_stages=4,
                                      placement="dp-first")
        return ch.placement_figure(st, dp_first, title="Llama 3 405B, 16,384 H100: same degrees, two placements")

    return [
        ("placement_figure", placement),
        ("scaling_efficiency_figure", lambda: ch.scaling_efficiency_figure(model_ids, systems, counts=ch.GPU_COUNTS)),
        ("step_dashboard", lambda: ch.step_dashboard(models=model_ids, systems=systems, tokens_T=15.6,
                                                     compute_efficiency=training.data()["defaults"]["compute_efficiency"])),
    ]


def _ch07b() -> list[tuple[str, Build]]:
    from nvcourse import overlap
    from nvcourse.chapters import ch07b_overlap as ch

    def sweep():
        cases = {"Llama 3 8B, DDP over 512 GPUs": overlap.dp_scenario("llama3-8b", "dgx-h100", 64),
                 "Llama 3 70B, TP 8 + DDP over 64 nodes": overlap.dp_scenario("llama3-70b", "dgx-h100", 64, tp=8)}
        return ch.bucket_sweep_figure(cases, [1, 2, 4, 8, 16, 25, 32, 64, 128, 256, 512, 1024])

    return [
        ("timeline_figure[toy]", lambda: ch.timeline_figure(
            overlap.dp_bucket_timeline(100e6, 1.0, 25e6, lambda nbytes: 0.3), unit=1.0, unit_label="s")),
        ("bucket_sweep_figure", sweep),
        ("timeline_figure[fsdp]", lambda: ch.timeline_figure(ch.fsdp_case("llama3-8b", "dgx-h100", 8, prefetch=0))),
        ("timeline_figure[tp]", lambda: ch.timeline_figure(
            ch.tp_case("llama3-70b", "dgx-h100", 8, chunks=4, sm_fraction=0.15), unit=1e-6, unit_label="µs")),
        ("overlap_dashboard", ch.overlap_dashboard),
    ]


def _ch07c() -> list[tuple[str, Build]]:
    from nvcourse.chapters import ch07c_inference as ch

    return [
        ("allreduce_vs_measured_figure", ch.allreduce_vs_measured_figure),
        ("decode_tp_figure", lambda: ch.decode_tp_figure("llama3-70b", "dgx-h100")),
        ("kv_transfer_figure", lambda: ch.kv_transfer_figure("llama3-70b")),
        ("inference_dashboard", ch.inference_dashboard),
    ]


def _ch08() -> list[tuple[str, Build]]:
    from nvcourse.chapters import ch08_reliability as ch

    return [
        ("mtbf_figure", ch.mtbf_figure),
        ("goodput_by_size_figure", ch.goodput_by_size_figure),
        ("goodput_dashboard", ch.goodput_dashboard),
        ("hero_busbw_figure", lambda: ch.hero_busbw_figure(nodes=(2, 4, 16, 64, 256, 1024, 4096))),
        ("drift_alert_figure", lambda: ch.drift_alert_figure(days=60, seed=7)),
    ]


def _ch08b() -> list[tuple[str, Build]]:
    from nvcourse.chapters import ch08b_security_and_observability as ch
    from nvcourse.observability import drill

    return [
        ("tenancy_dashboard", ch.tenancy_dashboard),
        ("noisy_neighbour_dashboard", ch.noisy_neighbour_dashboard),
        ("thresholds_dashboard", ch.thresholds_dashboard),
        ("drill_dashboard", lambda: ch.drill_dashboard(seed=0)),
        ("drill_view", lambda: ch.drill_view(drill.incident("A", seed=0))),
    ]


def _ch09() -> list[tuple[str, Build]]:
    from nvcourse import capstone
    from nvcourse.chapters import ch09_capstone as ch

    targets = capstone.Targets(model="llama3-70b", training_tokens=2e12, max_days=30, max_usd=3e6, min_goodput=0.90,
                               min_efficiency=0.70, max_MW=3.0)
    return [
        ("design_dashboard", lambda: ch.design_dashboard(targets)),
        ("fabric_dashboard", lambda: ch.fabric_dashboard(
            capstone.evaluate(capstone.Design("dgx-h100", 1024, tp=8, pp=1), targets))),
    ]


#: notebook stem -> function returning its (name, build) pairs (imports stay inside, so collecting is cheap)
CASES: dict[str, Callable[[], list[tuple[str, Build]]]] = {
    "01_why_one_gpu_is_not_enough": _ch01,
    "02_pcie_vs_nvlink": _ch02,
    "03_topologies_and_nvswitch": _ch03,
    "04_collectives_and_allreduce": _ch04,
    "04b_predicting_collectives": _ch04b,
    "05_nvl72_rack_scale": _ch05,
    "06_multinode_fabrics": _ch06,
    "06c_multinode_lab": _ch06c,
    "07_training_at_scale": _ch07,
    "07b_overlapping_communication": _ch07b,
    "07c_communication_for_inference": _ch07c,
    "08_reliability_and_operations": _ch08,
    "08b_security_and_observability": _ch08b,
    "09_capstone_design_a_cluster": _ch09,
}

#: Figures a notebook draws from what this machine measured (its timings differ run to run and under load);
#: the audit cannot judge them in advance. Their drawing code is exercised by the chapter's own tests.
MEASURED = {
    "04_collectives_and_allreduce": "plot_timeline, ring_dashboard, plot_measured_vs_model, plot_link_tradeoff: "
                                    "this machine's timings",
    "06b_nccl_in_practice": "no figure of its own besides the diagnosis picture, audited in test_ch06b_chapter",
}

#: Notebooks that draw no figure: tables, text and widgets only.
NO_FIGURES = {
    "06d_bringup_and_fault_runbook": "tables of checks, the drill box (text)",
    "10_other_interconnects_and_numerics": "tables and the numerics box (text)",
}

#: Chapter functions that draw one state of a listed dashboard or figure (audited through it).
DRAWN_INSIDE = {
    "plot_memory_breakdown": "memory_dashboard",
    "allreduce_view": "fabric_dashboard",
    "design_view": "design_dashboard",
    "fabric_view": "fabric_dashboard",
    "overlay_figure": "ch06b diagnosis_png (test_ch06b_chapter)",
}

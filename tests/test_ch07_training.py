"""Chapter 07 dashboard: no reachable setting is invalid."""

from nvcourse.chapters import ch07_training as trainviz


def make():
    return trainviz.step_dashboard(models=["llama3-8b", "llama3-70b"], systems=["pcie-8gpu", "dgx-h100"],
                                   compute_efficiency=0.55)


def test_gpu_options_follow_tp_times_pp():
    d = make()
    d.controls["tp"].value, d.controls["pp"].value = 8, 4  # 32 GPUs per model replica
    assert min(d.controls["gpus"].options) == 32
    d.controls["gpus"].value = 32
    d.controls["pp"].value = 16  # 128 per replica: 32 is gone and the value moved up
    assert min(d.controls["gpus"].options) == 128 and d.controls["gpus"].value == 128
    d.controls["tp"].value, d.controls["pp"].value = 1, 1
    assert min(d.controls["gpus"].options) == 8


def test_every_gpu_count_renders_without_a_note():
    d = make()
    for g in d.controls["gpus"].options:
        d.controls["gpus"].value = g
        assert d.last_error is None, (g, d.last_error)
        assert "MFU" in d.readout.value


def test_placement_figure_stacks_each_runs_breakdown_and_labels_its_total():
    import matplotlib.pyplot as plt
    import pytest
    from figure_audit import figure_problems

    from nvcourse import training

    ref = training.data()["reference_runs"]["llama3-405b-16k"]
    kw = dict(tp=ref["tp"], pp=ref["pp"], virtual_stages=4)
    tp_first = training.step_time(ref["model"], ref["system"], ref["gpus"], **kw)
    dp_first = training.step_time(ref["model"], ref["system"], ref["gpus"], placement="dp-first", **kw)
    assert dp_first.total_s > tp_first.total_s  # TP over the NICs is slower
    fig = trainviz.placement_figure(tp_first, dp_first, title="two placements")
    try:
        ax = fig.axes[0]
        parts = list(tp_first.breakdown())
        assert len(ax.patches) == len(parts) + len(dp_first.breakdown())
        assert [p.get_width() for p in ax.patches[: len(parts)]] == pytest.approx(list(tp_first.breakdown().values()))
        assert [t.get_text() for t in ax.get_yticklabels()] == ["tp-first\n(TP in NVLink)", "dp-first\n(TP over NICs)"]
        assert [t.get_text() for t in ax.get_legend().get_texts()] == parts  # one entry per part, not per bar
        assert [t.get_text() for t in ax.texts] == [f"  {s.total_s:.1f} s, MFU {s.mfu:.0%}"
                                                    for s in (tp_first, dp_first)]
        assert ax.get_xlim()[1] == pytest.approx(1.35 * dp_first.total_s)
        assert ax.get_xlabel() == "seconds per step" and ax.get_title() == "two placements"
        assert figure_problems(fig) == []
    finally:
        plt.close(fig)


def test_scaling_efficiency_figure_plots_best_config_and_leaves_out_what_does_not_fit():
    import matplotlib.pyplot as plt
    from figure_audit import figure_problems

    from nvcourse import catalog, training

    models, systems, counts = ["llama3-8b", "llama3-405b"], ["pcie-8gpu", "dgx-h100"], [8, 64, 512]
    fig, table = trainviz.scaling_efficiency_figure(models, systems, counts=counts)
    try:
        assert len(fig.axes) == 2
        assert [ax.get_title() for ax in fig.axes] == [training.get_model(m).name for m in models]
        assert fig.axes[0].get_ylabel() == "scaling efficiency" and fig.axes[1].get_xlabel() == "GPUs"
        assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
            catalog.get_system(s).name.split(" (")[0] for s in systems
        ]
        assert ("llama3-405b", "dgx-h100", 8) not in table  # 405B does not fit in one node: no point
        for ax, mid in zip(fig.axes, models, strict=True):
            for line, sid in zip(ax.lines, systems, strict=True):
                xs = [g for g in counts if (mid, sid, g) in table]
                assert list(line.get_xdata()) == xs
                assert list(line.get_ydata()) == [training.best_config(mid, sid, g).efficiency for g in xs]
                assert all(0 < y <= 1 for y in line.get_ydata())
        assert figure_problems(fig) == []
    finally:
        plt.close(fig)
    fig, _ = trainviz.scaling_efficiency_figure(["llama3-8b"], ["dgx-h100"], counts=[8, 16])  # one panel
    assert len(fig.axes) == 1
    plt.close(fig)

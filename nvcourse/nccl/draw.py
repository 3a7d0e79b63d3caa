"""Figure: measured busbw against size, with the model's overlay (matplotlib, Agg)."""

from __future__ import annotations

__all__ = ["overlay_figure", "save_overlay"]


def overlay_figure(run, diag, ax=None):
    """Measured out-of-place (and in-place) busbw per size, the model's busbw when there is an overlay."""
    if ax is None:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 3.8), dpi=90)
    else:
        fig = ax.figure
    rows = [r for r in run.rows if r["bytes"] > 0]
    x = [r["bytes"] for r in rows]
    ax.plot(x, [r["oop_busbw_GBps"] for r in rows], "o-", label="measured busbw (out-of-place)")
    ip = [r["ip_busbw_GBps"] for r in rows]
    if all(v is not None for v in ip):
        ax.plot(x, ip, ".", alpha=0.6, label="measured busbw (in-place)")
    if diag is not None and diag.overlay:
        ax.plot([p["bytes"] for p in diag.overlay], [p["model_busbw_GBps"] for p in diag.overlay], "k--",
                label=f"model ({diag.system}, {diag.gpus}x{diag.nodes})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size S (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title(f"nccl-tests {run.op or 'op?'}: {run.nranks or '?'} ranks")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def save_overlay(run, diag, path: str) -> None:
    import matplotlib.pyplot as plt

    fig = overlay_figure(run, diag)
    try:
        fig.savefig(path, dpi=90)
    except OSError as exc:
        raise ValueError(f"--plot: cannot write {path!r}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)

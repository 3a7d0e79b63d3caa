"""Chapter 07c, section 8 — serving as engines run it today: one row per technique (MLA's compressed KV, FP8
weights, attention-DP with wide-EP, paged KV transfers, prefill TP ≠ decode TP, speculative decoding, CUDA graphs),
each with its arithmetic from :mod:`nvcourse.serving` and a sourced figure; and the chapter's text helpers (times and
sizes written the learner's language's way, a collapsed block), which :mod:`.ch07c_inference` uses too.
"""

from __future__ import annotations

import html

from .. import _data, catalog, inference, serving
from ..i18n import language, localize_numbers, ngettext, number
from ..i18n import translate as _
from ..tables import table_html
from ..units import format_size, format_time

__all__ = ["IN_VIEW", "serving_rows", "serving_html", "serving_table_html", "time_text", "size_text", "details",
           "kv_measured_lines"]


def time_text(seconds: float, **kw) -> str:
    """A duration written as the learner's language writes numbers (``1.5 ms``, ``1,5 ms``)."""
    return localize_numbers(format_time(seconds, **kw))


def size_text(nbytes: float, **kw) -> str:
    """A size in bytes written as the learner's language writes numbers."""
    return localize_numbers(format_size(nbytes, **kw))


def details(summary: str, body: str) -> str:
    """A collapsed block: ``summary`` (plain text) is the line the reader clicks, ``body`` (HTML) the detail."""
    return (f"<details><summary>{html.escape(summary)}</summary><div style='margin-top:6px'>{body}</div>"
            "</details>")


# ------------------------------------------------------------------------------------------------
# serving as engines run it today (section 8)


#: How each source key of the serving table reads to a learner: a short citation (the URL is the data file's).
_CITES = {"deepseek-v3-config": _("DeepSeek-V3's model configuration (Hugging Face)"),
          "sglang-deepseek": _("SGLang's DeepSeek V3/R1 guide"),
          "vllm-53825": _("vLLM pull request 53825 (Mooncake connector)"),
          "leviathan": _("Leviathan et al., speculative decoding, ICML 2023")}


def _cite(src: str) -> str:
    """A readable link for a source key of data/inference.toml (``"derived"`` rows carry their own words)."""
    if src in _CITES:
        return f"<a href='{html.escape(inference.data()['sources'][src]['url'])}'>{html.escape(_CITES[src])}</a>"
    return html.escape(src)


def serving_rows() -> list[dict]:
    """One row per serving technique: what it is, the arithmetic, its full result, a short result for the summary
    table (``"short"``), the source key (data/inference.toml, or ``"derived"``) and a readable citation (HTML)."""
    mla, mla8 = serving.mla_kv_bytes_per_token(), serving.mla_kv_bytes_per_token(bytes_per_elem=1)
    gqa = inference.kv_bytes_per_token("llama3-70b")
    fp8, bf16 = serving.node_fit("hgx-h200"), serving.node_fit("hgx-h200", bytes_per_param=2)
    prompt = 32768 * gqa / 8  # one TP rank's share of a 32k Llama 3 70B prompt
    small, page = serving.paged_kv_transfer(prompt, 16384), serving.paged_kv_transfer(prompt, 2**20)
    rs = serving.kv_reshard(8, 2, 8)
    layers = inference.get_model("llama3-70b").layers
    sd = serving.speculative_allreduces_per_token(layers, 3, 0.7)
    host = serving.host_enqueue_per_token_s(layers, graphs=False)
    mla_cfg = inference.data()["mla"]["deepseek-v3"]
    h200 = catalog.get_system("hgx-h200")
    launch = (f"<a href='{html.escape(_data.load('launch')['host_enqueue']['src'])}'>"
              + _("NCCL's host cost per call, measured in an nccl-tests issue") + "</a>")
    bound = {"descriptors": _("descriptors-bound"), "link": _("link-bound")}
    gb = "\u00a0GB" if language() == "fr" else " GB"
    rows = [
        {"key": "mla", "item": _("MLA's compressed KV (DeepSeek-V3)"),
         "arithmetic": _("{layers} layers × ({rank} + {rope}) × bytes").format(
             layers=mla_cfg["layers"], rank=mla_cfg["kv_lora_rank"], rope=mla_cfg["qk_rope_head_dim"]),
         "result": _("{mla} per token in BF16, {mla8} in FP8; Llama 3 70B's GQA cache: {gqa}").format(
             mla=size_text(mla), mla8=size_text(mla8), gqa=size_text(gqa)),
         "short": _("{mla} per token vs {gqa} (GQA)").format(mla=size_text(mla), gqa=size_text(gqa)),
         "src": "deepseek-v3-config"},
        {"key": "fp8", "item": _("FP8 weights: {weights}B on one {gpus} × H200 node").format(
            weights=number(fp8["weights_GB"], ".0f"), gpus=h200.gpus_per_host),
         "arithmetic": _("params × 1 B vs {gpus} × {memory}").format(
             gpus=h200.gpus_per_host, memory=number(h200.gpu_spec.memory_GB, ".0f") + gb),
         "result": _("{weights} of {hbm}: fits, {free} left for KV (BF16: {bf16}, does not fit)").format(
             weights=number(fp8["weights_GB"], ".0f"), hbm=number(fp8["hbm_GB"], ",.0f") + gb,
             free=number(fp8["free_GB"], ".0f") + gb, bf16=number(bf16["weights_GB"], ",.0f") + gb),
         "short": _("{weights} of {hbm}: fits").format(weights=number(fp8["weights_GB"], ".0f"),
                                                      hbm=number(fp8["hbm_GB"], ",.0f") + gb),
         "src": "sglang-deepseek"},
        {"key": "attention-dp", "item": _("attention-DP with wide-EP"),
         "arithmetic": _("TP replicates MLA's latent on every GPU; DP attention keeps each request's cache on one GPU"),
         "result": _("{tp} M vs {dp} M tokens of FP8 KV in the same node").format(
             tp=number(fp8["kv_tokens_tp"] / 1e6, ".1f"), dp=number(fp8["kv_tokens_dp_attention"] / 1e6, ".1f")),
         "short": _("{ratio}× the tokens of KV cache").format(
             ratio=number(fp8["kv_tokens_dp_attention"] / fp8["kv_tokens_tp"], ".0f")),
         "src": "sglang-deepseek"},
        {"key": "paged", "item": _("paged KV transfer, one descriptor per (layer, page)"),
         "arithmetic": _("max(bytes / NIC, descriptors × {us} µs)").format(
             us=number(small["per_descriptor_s"] * 1e6, ".2f")),
         "result": _("16 KiB descriptors: {small} ({small_bound}); 1 MiB: {page} ({page_bound}), one rank's share of "
                     "a 32k Llama 3 70B prompt").format(
             small=time_text(small["time_s"]), small_bound=bound[small["bound"]], page=time_text(page["time_s"]),
             page_bound=bound[page["bound"]]),
         "short": _("16 KiB descriptors: {ratio}× slower than 1 MiB ones").format(
             ratio=number(small["time_s"] / page["time_s"], ".1f")),
         "src": "vllm-53825"},
        {"key": "reshard", "item": _("prefill TP 2 → decode TP 8"),
         "arithmetic": _("8 KV heads: 4 per prefill rank, 1 per decode rank"),
         "result": ngettext("every page cut into {split} messages of {heads} head",
                            "every page cut into {split} messages of {heads} heads", rs["heads_per_message"]).format(
             split=number(rs["split"], ".0f"), heads=rs["heads_per_message"]),
         "short": _("every page sent as {split} smaller messages").format(split=number(rs["split"], ".0f")),
         "src": "derived", "cite": _("worked out from Llama 3 70B's 8 KV heads")},
        {"key": "speculative", "item": _("speculative decoding (3 drafts, 70 % accepted)"),
         "arithmetic": _("(1 − a^(k+1)) / (1 − a) tokens per step"),
         "result": _("{tokens} tokens per step: {per_token} all-reduces per token instead of {plain}, each {wide} "
                     "tokens wide").format(tokens=number(sd["tokens_per_step"], ".2f"),
                                           per_token=number(sd["allreduces_per_token"], ".0f"), plain=2 * layers,
                                           wide=sd["message_tokens"]),
         "short": _("{per_token} of the served model's all-reduces per output token instead of {plain} (the draft "
                    "model's own come on top)").format(
             per_token=number(sd["allreduces_per_token"], ".0f"), plain=2 * layers),
         "src": "leviathan"},
        {"key": "graphs", "item": _("CUDA graphs"),
         "arithmetic": _("{calls} NCCL calls × host enqueue per call").format(calls=2 * layers),
         "result": _("{host} of host time per token without graphs, none replayed from a graph").format(
             host=time_text(host)),
         "short": _("{host} of host enqueue time per step, a cost only when the CPU falls behind the GPU").format(
             host=time_text(host)), "src": "derived",
         "cite": launch},
    ]
    for r in rows:
        r.setdefault("cite", _cite(r["src"]))
    return rows


#: The rows §8's predict question and the sentences under the table read (MLA's cache, descriptor size, drafting);
#: the other techniques' results wait behind a collapsed block.
IN_VIEW = ("mla", "paged", "speculative")


def serving_html(in_view: tuple[str, ...] = IN_VIEW) -> str:
    """The results of the techniques ``in_view`` (keys of :func:`serving_rows`) in a short table; the other
    techniques' results, and the arithmetic, full result and source of every row, behind collapsed blocks."""
    rows = serving_rows()
    head = [_("technique"), _("what it changes (Llama 3 70B or DeepSeek-V3)")]

    def short(keep: bool) -> str:
        return table_html(head, [[html.escape(r["item"]), html.escape(r["short"])] for r in rows
                                 if (r["key"] in in_view) == keep], align_numbers=False)

    return (short(True) + details(_("The other techniques' results"), short(False))
            + details(_("The arithmetic, full result and source of each row"), serving_table_html()))


def serving_table_html() -> str:
    rows = [[html.escape(r["item"]), html.escape(r["arithmetic"]), html.escape(r["result"]), r["cite"]]
            for r in serving_rows()]
    return table_html([_("technique"), _("arithmetic"), _("result"), _("source")], rows, align_numbers=False)


def _percent(fraction: float, spec: str) -> str:
    """A share as a percentage: Python's ``%`` format in English (``4.2%``), ``4,2 %`` in French."""
    return format(fraction, spec + "%") if language() != "fr" else number(100 * fraction, spec + "f") + "\u00a0%"


def kv_measured_lines(run: str = "mooncake-qwen3-8b-32k") -> str:
    """§5: a published disaggregated-serving KV transfer against the model (bytes, time, rate in GB/s, the model's
    error), and the transfer's share of the measured TTFT."""
    m = inference.data()["kv_transfer"][run]
    x = inference.kv_transfer_time(m["model"], m["tokens"], "dgx-h100", path="rdma", nic=m["nic_link"], nics=m["nics"])
    return "\n".join(localize_numbers(line) for line in (
        _("model:    {size} ({gib} GiB) in {time} at {rate} GB/s").format(
            size=format_size(x["bytes"], binary=False), gib=f"{x['bytes'] / 2**30:.2f}", time=format_time(x["time_s"]),
            rate=f"{x['rate_Bps'] / 1e9:.0f}"),
        _("measured: {size} GB in {time} ms at {rate} GB/s (model {error})").format(
            size=m["kv_GB"], time=m["transfer_ms"], rate=m["rate_GBps"],
            error=_percent(x["time_s"] * 1e3 / m["transfer_ms"] - 1, "+.0")),
        _("measured TTFT {ttft} ms, so the transfer was {share} of it").format(
            ttft=m["ttft_ms"], share=_percent(m["transfer_ms"] / m["ttft_ms"], ".1"))))

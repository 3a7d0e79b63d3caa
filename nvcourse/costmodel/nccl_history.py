"""Read NCCL's tuning tables out of ``src/graph/tuning.cc`` of any release: how ``data/nccl_versions.toml`` was made.

A maintainer's tool, not used at run time. Run it on a clone of https://github.com/NVIDIA/nccl::

    python -m nvcourse.costmodel.nccl_history /path/to/nccl v2.8.4-1 v2.10.3-1 ...

It prints, for each tag, the tables the cost model reads (``baseLatencies``, ``hwLatencies``, ``llMaxBws``, the
per-channel caps, ``treeCorrectionFactor``, ``nvlsEfficiency``) with the commit and the lines they are on, in
the TOML layout of ``data/nccl_versions.toml``. NCCL wrote them as named arrays up to 2.27 and as one struct,
``ncclTunerConstantsDefaults``, from 2.28; both are read. Arithmetic in an initialiser (``2*141.0``) is
evaluated; ``0.85f`` is read as 0.85.

>>> parse_braces("{ {1.0, 2*3.0}, {.5, 4} }")
[[1.0, 6.0], [0.5, 4.0]]
"""

from __future__ import annotations

import ast
import operator
import re
import subprocess
import sys
from typing import Any

__all__ = ["parse_braces", "named_array", "struct_sections", "tables", "facts", "section", "ALGO_ORDER"]

#: NCCL's algorithm order in baseLatencies / hwLatencies, by how many algorithms the release had.
ALGO_ORDER: dict[int, tuple[str, ...]] = {
    3: ("tree", "ring", "collnet"),
    4: ("tree", "ring", "collnet_direct", "collnet_chain"),
    5: ("tree", "ring", "collnet_direct", "collnet_chain", "nvls"),
    6: ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvlstree"),
    7: ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvlstree", "pat"),
}
_OPS = {ast.Mult: operator.mul, ast.Div: operator.truediv, ast.Add: operator.add, ast.Sub: operator.sub}


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def _number(expr: str) -> float:
    node = ast.parse(re.sub(r"(\d)f\b", r"\1", expr.strip()), mode="eval").body

    def ev(n: ast.AST) -> float:
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
            return float(n.value)
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            return _OPS[type(n.op)](ev(n.left), ev(n.right))
        raise ValueError(f"not a number: {expr!r}")

    return ev(node)


def parse_braces(text: str) -> Any:
    """A C initialiser ``{ {..}, {..} }`` as nested lists of floats (comments and trailing commas allowed)."""
    s = _strip_comments(text).strip()
    if not s.startswith("{"):
        return _number(s)
    out, depth, start, items = [], 0, 1, []
    for i, ch in enumerate(s):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                items.append(s[start:i])
                break
        elif ch == "," and depth == 1:
            items.append(s[start:i])
            start = i + 1
    for it in items:
        if it.strip():
            out.append(parse_braces(it))
    return out


def _matching(s: str, i: int) -> int:
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced braces")


def named_array(src: str, name: str) -> tuple[Any, int, int] | None:
    """``static [const] float|double NAME[..] = {...};`` as (values, first line, last line), or None."""
    m = re.search(r"static\s+(?:const\s+)?(?:float|double)\s+" + name + r"\s*\[[^=]*=\s*", src)
    if not m:
        return None
    j = _matching(src, m.end())
    return parse_braces(src[m.end() : j + 1]), src[: m.start()].count("\n") + 1, src[:j].count("\n") + 1


def struct_sections(src: str) -> dict[str, tuple[Any, int, int]]:
    """The sections of ``ncclTunerConstantsDefaults`` (2.28 on), each as (values, first line, last line)."""
    m = re.search(r"ncclTunerConstantsDefaults\s*=\s*", src)
    if not m:
        return {}
    end = _matching(src, m.end())
    out: dict[str, tuple[Any, int, int]] = {}
    pos = m.end() + 1
    # 2.30: "// name" then "{"; 2.28-2.29: designated initialisers ".name = {"
    for sm in re.finditer(r"(?://\s*(\w+)\s*\n\s*|\.(\w+)\s*=\s*)\{", src[pos:end]):
        i = pos + sm.end() - 1
        j = _matching(src, i)
        first, last = src[:i].count("\n") + 1, src[:j].count("\n") + 1
        out[sm.group(1) or sm.group(2)] = (parse_braces(src[i : j + 1]), first, last)
    return out


def _by_algo(rows: list[Any]) -> dict[str, Any]:
    names = ALGO_ORDER[len(rows)]
    return dict(zip(names, rows, strict=True))


def tables(src: str) -> dict[str, tuple[Any, int, int]]:
    """The model's tables of one ``tuning.cc``: name -> (values, first line, last line)."""
    found: dict[str, tuple[Any, int, int]] = {}
    sect = struct_sections(src)
    pairs = {
        "base_latency_us": ("baseLat", "baseLatencies"), "hw_latency_us": ("hwLat", "hwLatencies"),
        "ll_max_bw_GBps": ("llMaxBws", "llMaxBws"), "ring_ll128": ("perChMaxRingLL128Bws", "perChMaxRingLL128Bws"),
        "tree_ll128": ("perChMaxTreeLL128Bws", "perChMaxTreeLL128Bws"), "tree": ("perChMaxTreeBws", "perChMaxTreeBws"),
        "nvlstree": ("perChMaxNVLSTreeBws", "perChMaxNVLSTreeBws"), "ll128_any": ("ll128MaxBwPerCh", ""),
        "tree_correction": ("treeCorrectionFactor", ""), "nvls_efficiency": ("nvlsEfficiency", ""),
    }  # fmt: skip
    scalar = re.search(r"static\s+const\s+double\s+ll128MaxBwPerCh\s*=\s*([\d.]+)\s*;", src)
    if scalar:  # 2.10-2.16: one LL128 cap per channel for every GPU and collective
        line = src[: scalar.start()].count("\n") + 1
        found["ll128_any"] = (float(scalar.group(1)), line, line)
    for key, (old, new) in pairs.items():
        got = named_array(src, old) or (sect.get(new) if new else None)
        if got is not None:
            found[key] = got
    for key in ("base_latency_us",):
        if key in found:
            v, a, b = found[key]
            found[key] = (_by_algo(v), a, b)
    if "hw_latency_us" in found:
        v, a, b = found["hw_latency_us"]
        found["hw_latency_us"] = ({cls: _by_algo(r) for cls, r in zip(("nvlink", "pci", "net"), v, strict=True)}, a, b)
    return found


#: Formula facts the model reads, each found by the line that states it: name -> (pattern, value from the match).
_FACTS: dict[str, tuple[str, Any]] = {
    "ring_ll_quarter": (r"NCCL_ALGO_RING && p == NCCL_PROTO_LL\).*1\.0/4\.0", True),
    "ring_ll_half": (r"NCCL_ALGO_RING && p == NCCL_PROTO_LL\).*busBw \* \.5", True),
    "ring_ll128_one_gpu_per_node": (r"ppn < 2 \? (0\.\d+)", 1),
    "tree_ll128_multi_node_0915": (r"nNodes == 1 \? 7\.0/9\.0 : 0\.915", True),
    "ring_plateau": (r"minCompCap < (\d+) \? 1\.9 : (1\.\d)\s*;\s*// Plateau", 0),
    "net_overhead": (r"static float getNetOverhead\(struct", True),
    "ll128_enable": (r"Enable LL128 by default only on ([^.]*)", 1),
    "nvlstree_correction": (r"algorithm == NCCL_ALGO_NVLS_TREE && coll == ncclFuncAllReduce && logSize", True),
    "has_nvls": (r"NCCL_ALGO_NVLS\b", True),
    "has_nvlstree": (r"NCCL_ALGO_NVLS_TREE", True),
    "has_pat": (r"NCCL_ALGO_PAT", True),
    "pat_base_8_in_code": (r"= 8 // Base time", True),
    "gather_scatter_ring_only": (r"coll == ncclFuncAllGather && a != NCCL_ALGO_RING\) continue", True),
}


def facts(src: str) -> dict[str, tuple[Any, int]]:
    """The formula facts of :data:`_FACTS` found in ``src``: name -> (value, line)."""
    out: dict[str, tuple[Any, int]] = {}
    for name, (pat, grp) in _FACTS.items():
        m = re.search(pat, src)
        if m is None:
            continue
        line = src[: m.start()].count("\n") + 1
        if isinstance(grp, bool):
            val: Any = grp
        elif grp == 0:
            val = [int(m.group(1)), float(m.group(2))]
        else:
            val = m.group(grp).strip()
            val = float(val) if re.fullmatch(r"[\d.]+", val) else val
        out[name] = (val, line)
    return out


def _toml_value(v: Any) -> str:
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.strip().replace('"', "'") + '"'
    return repr(round(float(v), 6))


def section(tag: str, commit: str, src: str) -> str:
    """The ``[versions."X.Y"]`` TOML section of one release's ``tuning.cc``."""
    minor = ".".join(tag.lstrip("v").split("-")[0].split(".")[:2])
    lines = [f'[versions."{minor}"]', f'tag = "{tag}"', f'commit = "{commit}"']
    for key, (v, a, b) in tables(src).items():
        lines += [f"{key} = {_toml_value(v)}", f'{key}_lines = "{a}-{b}"']
    for key, (v, line) in facts(src).items():
        lines += [f"{key} = {_toml_value(v)}", f"{key}_line = {line}"]
    return "\n".join(lines)


USAGE = "usage: python -m nvcourse.costmodel.nccl_history NCCL_REPO TAG [TAG ...]  (a git clone of NVIDIA/nccl)"


def main(argv: list[str]) -> int:
    """``REPO TAG...``: print one TOML section per tag (exit 2 with the usage line for missing arguments, 1 when
    git cannot read a tag)."""
    if argv[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if len(argv) < 2:
        print(USAGE, file=sys.stderr)
        return 2
    repo, tags = argv[0], argv[1:]
    for tag in tags:
        try:
            src = subprocess.run(["git", "-C", repo, "show", f"{tag}:src/graph/tuning.cc"], capture_output=True,
                                 text=True, check=True).stdout
            commit = subprocess.run(["git", "-C", repo, "rev-list", "-n1", tag], capture_output=True, text=True,
                                    check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"nccl_history: cannot read {tag}:src/graph/tuning.cc in {repo} ({exc})".splitlines()[0],
                  file=sys.stderr)
            return 1
        print("\n" + section(tag, commit, src))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))

"""Read the text printed by ``nvidia-smi topo -m`` (or NCCL's topology XML, detected and passed to :mod:`.topo_xml`).

Accepted input: the GPU/NIC matrix with the codes ``X``, ``NV#``, ``PIX``, ``PXB``, ``PHB``, ``NODE``, ``SYS``
(and the old name ``SOC`` for ``SYS``); NIC columns named ``mlx5_*``, ``NIC#`` (with or without the
``NIC Legend``) or anything else that is not a GPU; the trailing ``CPU Affinity``, ``NUMA Affinity`` and
``GPU NUMA ID`` columns; space- or tab-separated; with or without the legend; with a shell prompt or other
text above the header. The header is the first line whose first word is ``GPU<n>`` and whose other words
are device or column names.

Pasted text is taken as people paste it: CRLF line ends, tabs, trailing spaces and empty trailing fields,
blank or whitespace-only lines between rows (blogs, chat tools), a dashed rule under the header, markdown
table bars (``| GPU0 | X | NV12 |``), quote marks (``> ``), ANSI escapes (nvidia-smi underlines the header on
a terminal), a legend cut anywhere or absent, a last column name cut short (``NUMA Affi``), and rows of
devices whose columns were cut off at the right edge: read from their rows (the matrix is symmetric), their codes
to each other from their own cells when they carry them, else worked out from their codes to the other devices
where the PCIe tree fixes them (``?`` where it does not), with a note. An ``nvidia-smi topo -p2p`` matrix pasted
after the ``topo -m`` one is read for the GPU pairs without CUDA peer-to-peer (:mod:`.topo_p2p`); anything else
that follows a complete matrix (another prompt, other output) is ignored.

Anything malformed (a ragged row, an unknown code, a row missing or extra, ``X`` off the diagonal, an
asymmetric matrix) raises :class:`ValueError` naming the line; nothing else is raised.

What the codes say about bandwidth (nvidia-smi's legend, paraphrased):

=======  ==================================================================================================
``NV#``  a bonded set of # NVLinks (# x the per-link rate of the GPU's NVLink generation)
``PIX``  at most one PCIe bridge (same PCIe switch)
``PXB``  several PCIe bridges, not through the CPU's host bridge
``PHB``  through a PCIe host bridge (the CPU)
``NODE`` through the interconnect between host bridges inside one NUMA node
``SYS``  through the SMP interconnect between NUMA nodes (QPI/UPI/xGMI): usually the slowest path
=======  ==================================================================================================

The matrix gives *paths*, not wires. :func:`parse_topo` rebuilds a plausible graph from it (see
:class:`TopoResult`): NVLink bundles as edges; one NVSwitch node when the NVLink counts are impossible without
a switch (a GPU's ``NV#`` entries adding up to more links than any catalog GPU has); and a PCIe tree grouped by
the codes (``PIX`` pairs share a leaf switch, ``PXB`` a top switch, ``PHB`` a root port, ``NODE`` a NUMA
node; ``SYS`` separates NUMA nodes).
"""

from __future__ import annotations

import re
import sys
from importlib import resources
from pathlib import Path

from nvcourse import catalog
from nvcourse.i18n import translate as _
from nvcourse.nccl.paste import strip_kinds, strip_sequence

from .topo_graph import build_graph
from .topo_p2p import p2p_notes, read_p2p
from .topo_result import TopoResult
from .topo_xml import looks_like_xml, parse_xml

__all__ = ["TopoResult", "parse_topo", "read_topo", "PCIE_CODES", "CODE_MEANING", "example_files"]

PCIE_CODES = ("PIX", "PXB", "PHB", "NODE", "SYS")
_RANK = {code: i + 1 for i, code in enumerate(PCIE_CODES)}
_ALIASES = {"SOC": "SYS"}  # drivers before ~2017 printed SOC
CODE_MEANING = {
    "X": "self",
    "NV#": "a bonded set of # NVLinks",
    "PIX": "at most one PCIe bridge (same PCIe switch)",
    "PXB": "several PCIe bridges, without the CPU's host bridge",
    "PHB": "through a PCIe host bridge (the CPU)",
    "NODE": "through the interconnect between PCIe host bridges within one NUMA node",
    "SYS": "through the SMP interconnect between NUMA nodes (QPI/UPI/xGMI)",
}
_EXTRA_COLUMNS = (("CPU", "Affinity"), ("NUMA", "Affinity"), ("GPU", "NUMA", "ID"))
_EXTRA_KEYS = {"CPU Affinity": "cpu_affinity", "NUMA Affinity": "numa_affinity", "GPU NUMA ID": "gpu_numa_id"}
_GPU = re.compile(r"^GPU(\d+)$")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.:\-]*$")
_NV = re.compile(r"^NV([1-9]\d{0,2})$")
_NIC_LEGEND = re.compile(r"^\s*([A-Za-z][\w.:\-]*)\s*:\s*(\S+)\s*$")


# --------------------------------------------------------------------------------------------- parsing


def _parse_header(tokens: list[str], lineno: int) -> tuple[list[str], list[str]]:
    devices: list[str] = []
    extras: list[str] = []
    i = 0
    while i < len(tokens):
        for phrase in _EXTRA_COLUMNS:
            if tuple(tokens[i:i + len(phrase)]) == phrase:
                name = " ".join(phrase)
                if name in extras:
                    raise ValueError(f"line {lineno}: column {name!r} appears twice")
                extras.append(name)
                i += len(phrase)
                break
        else:
            tok = tokens[i]
            cut = _cut_phrase(tokens[i:])
            if cut is not None and cut not in extras:  # the paste's right edge cut the last column's name
                extras.append(cut)
                break
            if extras:
                raise ValueError(f"line {lineno}: unexpected column {tok!r} after {extras[-1]!r}")
            if not _NAME.match(tok) or tok in ("CPU", "NUMA", "X") or tok in _RANK or _NV.match(tok):
                raise ValueError(f"line {lineno}: {tok!r} is not a device name (expected GPU0, NIC0, mlx5_0, ...)")
            if tok in devices:
                raise ValueError(f"line {lineno}: device {tok!r} appears twice in the header")
            devices.append(tok)
            i += 1
    return devices, extras


def _cut_phrase(rest: list[str]) -> str | None:
    """The extra column whose name ``rest`` (the header's last words) begins, e.g. ``['NUMA', 'Affi']``."""
    for phrase in _EXTRA_COLUMNS:
        if (rest and len(rest) <= len(phrase) and rest[0] == phrase[0]
                and all(phrase[k].startswith(t) for k, t in enumerate(rest)) and tuple(rest) != phrase):
            return " ".join(phrase)
    return None


def _check_nvlink_ends(code: str, lineno: int, row: str, col: str) -> None:
    """NV# joins two GPUs only: nvidia-smi prints PCIe codes for its NICs, and the graph has NVLinks between GPUs."""
    if _NV.match(code) and not (_GPU.match(row) and _GPU.match(col)):
        raise ValueError(f"line {lineno}: NVLink code {code!r} in row {row}, column {col}; NV# joins two GPUs only")


def _is_code(code: str) -> bool:
    code = _ALIASES.get(code, code)
    return code == "X" or code in _RANK or bool(_NV.match(code))


def _check_code(code: str, lineno: int, row: str, col: str) -> str:
    code = _ALIASES.get(code, code)
    if code == "X" or code in _RANK or _NV.match(code):
        return code
    raise ValueError(
        f"line {lineno}: unknown code {code!r} in row {row}, column {col}; "
        f"allowed: X, NV<n>, {', '.join(PCIE_CODES)}"
    )


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # nvidia-smi underlines the header on a terminal
_SEPARATOR = re.compile(r"^[\s|:+=\-]*[-=]{3,}[\s|:+=\-]*$")


def _clean(line: str) -> str:
    """One pasted line as plain tokens: no ANSI escapes, no e-mail/markdown quote marks ("> "), markdown
    table bars as spaces (``| GPU0 | X | NV12 |``)."""
    line = _ANSI.sub("", line)
    stripped = line.lstrip()
    if stripped.startswith(">") and not stripped.startswith(">>>"):
        line = stripped.lstrip(">")
    return line.replace("|", " ")


def _is_separator(line: str) -> bool:
    return bool(_SEPARATOR.match(line))


def _find_header(lines: list[str]) -> tuple[int, list[str], list[str]]:
    """``(index, devices, extra columns)`` of the first line that reads as a matrix header: it starts with
    ``GPU<n>`` and every other word is a device name or an extra column. A candidate that fails (a sentence
    that happens to start with GPU0) is skipped; if none reads, the first candidate's problem is reported."""
    first_error: ValueError | None = None
    for idx, line in enumerate(lines):
        toks = line.split()
        if not toks or not _GPU.match(toks[0]):
            continue
        try:
            devices, extras = _parse_header(toks, idx + 1)
        except ValueError as exc:
            first_error = first_error or exc
            continue
        return idx, devices, extras
    if first_error is not None:
        raise first_error
    raise ValueError(_("line 1: no matrix header found (a line starting with GPU0 GPU1 ...)"))


def parse_topo(text: str, *, nvlink: str | None = None, pcie: str | None = None) -> TopoResult:
    """Parse ``nvidia-smi topo -m`` output and rebuild a graph from it.

    Args:
        text: the printed output (a leading shell prompt and a trailing legend are fine).
        nvlink: catalog link id of the GPUs' NVLink generation (``'nvlink4'`` for H100/H200/H20), to put
            bandwidths on NVLink edges; the matrix itself does not say which generation it is.
        pcie: catalog link id of the PCIe generation (``'pcie4'``), for the rebuilt PCIe tree's edges.

    Raises:
        ValueError: malformed input, with the line number; unknown link ids.
    """
    if not isinstance(text, str):
        raise ValueError(f"topo text must be a string, got {type(text).__name__}")
    nv_link = catalog.get_link(nvlink) if nvlink is not None else None
    pcie_link = catalog.get_link(pcie) if pcie is not None else None
    if nv_link is not None and nv_link.kind != "nvlink":
        raise ValueError(f"nvlink={nvlink!r} is not an NVLink generation")
    if pcie_link is not None and pcie_link.kind != "pcie":
        raise ValueError(f"pcie={pcie!r} is not a PCIe generation")

    if looks_like_xml(text):  # NCCL's topology XML (NCCL_TOPO_DUMP_FILE), detected by its first element
        return parse_xml(text, nvlink=nvlink, pcie=pcie)

    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines = [_clean(line) for line in _without_launcher_prefixes(raw)]
    header_at, devices, extras = _find_header(lines)
    rows, cut_rows, idx = _read_rows(lines, header_at, devices, extras)
    notes: list[str] = []
    codes = _pair_codes(devices, rows)
    if cut_rows:
        notes.append(_read_cut_rows(devices, cut_rows, codes))
        devices = devices + list(cut_rows)
    has_legend, nic_names = _read_legends(lines, idx, devices)
    gpus = [d for d in devices if _GPU.match(d)]
    nics = [d for d in devices if not _GPU.match(d)]
    p2p, capability = read_p2p(lines, idx, gpus)
    notes += p2p_notes(p2p, capability, codes, gpus)
    affinity: dict[str, dict[str, str]] = {}
    for g in gpus:
        rest = rows[g][2]
        if rest:
            affinity[g] = {_EXTRA_KEYS[name]: value for name, value in zip(extras, rest, strict=False)}
    result = TopoResult(devices, gpus, nics, codes, nic_names, affinity, has_legend=has_legend, notes=notes, p2p=p2p)
    build_graph(result, nv_link, pcie_link)
    return result


def _without_launcher_prefixes(raw: list[str]) -> list[str]:
    """The lines without the launcher prefixes (srun ``0: ``, pdsh ``node1: ``, mpirun tags, timestamps) that the
    matrix header carries: only those, so that legend lines such as ``NIC0: mlx5_0`` keep their text."""

    for line in raw:
        cleaned, kinds = strip_kinds(line)
        toks = _clean(cleaned).split()
        if kinds and toks and _GPU.match(toks[0]) and len(toks) > 1 and _GPU.match(toks[1]):
            return [strip_sequence(x, kinds) for x in raw]
    return raw


_Rows = dict[str, tuple[int, list[str], list[str]]]
_CutRows = dict[str, tuple[int, list[str]]]


def _read_rows(lines: list[str], header_at: int, devices: list[str],
               extras: list[str]) -> tuple[_Rows, _CutRows, int]:
    """The matrix rows after the header: ``({label: (line number, codes, extra cells)}, {label: (line number,
    cells)} of the rows with no column in the header, next index)``."""
    n = len(devices)
    index = {d: i for i, d in enumerate(devices)}
    rows: _Rows = {}
    cut_rows: _CutRows = {}  # rows of devices whose columns the paste lost (cut at the terminal's width)
    idx = header_at + 1
    while idx < len(lines):
        toks = lines[idx].split()
        lineno = idx + 1
        if not toks or _is_separator(lines[idx]):  # blank lines between rows, a dashed rule under the header
            idx += 1
            continue
        label = toks[0]
        if label.rstrip(":") == "Legend" or label == "NIC" or label.startswith("```"):
            break
        if label not in index:
            gpus_done = all(d in rows for d in devices if _GPU.match(d))
            looks_like_row = (_NAME.match(label) and not _GPU.match(label) and label not in _RANK and len(toks) > 1
                              and all(_is_code(c) for c in toks[1:n + 1]))
            if gpus_done and looks_like_row and label not in cut_rows:
                if len(toks) - 1 < n:
                    raise ValueError(f"line {lineno}: row {label} has {len(toks) - 1} entries, the header has {n} "
                                     "device columns")
                cut_rows[label] = (lineno, toks[1:])
                idx += 1
                continue
            if len(rows) == n:
                break  # the matrix is complete: what follows (a prompt, other output) is not ours
            raise ValueError(f"line {lineno}: row label {label!r} is not a column of the header ({', '.join(devices)})")
        if len(rows) == n and len(toks) > 1 and all(_GPU.match(t) for t in toks):
            break  # the matrix is complete and another table's header follows (nvidia-smi topo -p2p's)
        if label in rows:
            raise ValueError(f"line {lineno}: row {label!r} appears twice")
        if cut_rows:
            raise ValueError(f"line {lineno}: row {label} comes after rows with no column in the header "
                             f"({', '.join(cut_rows)})")
        rows[label] = _read_row(toks, lineno, devices, extras, index)
        idx += 1
    last_line = max((v[0] for v in rows.values()), default=header_at + 1)
    missing = [d for d in devices if d not in rows]
    if missing:
        raise ValueError(
            f"line {last_line}: the matrix is not square: {n} columns but {len(rows)} rows "
            f"(no row for {', '.join(missing)})"
        )
    return rows, cut_rows, idx


def _read_row(toks: list[str], lineno: int, devices: list[str], extras: list[str],
              index: dict[str, int]) -> tuple[int, list[str], list[str]]:
    n, label = len(devices), toks[0]
    cells, rest = toks[1:1 + n], toks[1 + n:]
    if len(cells) < n:
        raise ValueError(f"line {lineno}: row {label} has {len(cells)} entries, the header has {n} device columns")
    if len(rest) > len(extras):
        raise ValueError(
            f"line {lineno}: row {label} has {n + len(rest)} entries, the header has {n} device columns"
            + (f" and {len(extras)} more ({', '.join(extras)})" if extras else "")
        )
    codes = [_check_code(c, lineno, label, devices[j]) for j, c in enumerate(cells)]
    for j, c in enumerate(codes):
        _check_nvlink_ends(c, lineno, label, devices[j])
        if (c == "X") != (j == index[label]):
            where = "on the diagonal" if j == index[label] else "off the diagonal"
            raise ValueError(f"line {lineno}: {c!r} {where} in row {label}, column {devices[j]}; "
                             "X marks a device's own cell only")
    return lineno, codes, rest


def _pair_codes(devices: list[str], rows: _Rows) -> dict[tuple[str, str], str]:
    """``{(a, b): code}`` for every ordered pair; ValueError naming the later line when the matrix is asymmetric."""
    codes: dict[tuple[str, str], str] = {}
    for a in devices:
        _lineno, row_codes, _ = rows[a]
        for j, b in enumerate(devices):
            if a != b:
                codes[(a, b)] = row_codes[j]
    for i, a in enumerate(devices):
        for b in devices[i + 1:]:
            if codes[(a, b)] != codes[(b, a)]:
                later = max(rows[a][0], rows[b][0])
                raise ValueError(
                    f"line {later}: asymmetric matrix: {a}->{b} is {codes[(a, b)]} but {b}->{a} is {codes[(b, a)]}"
                )
    return codes


def _read_cut_rows(devices: list[str], cut_rows: _CutRows, codes: dict[tuple[str, str], str]) -> str:
    """Add the codes of the rows whose columns the paste lost to ``codes`` (both ways: the matrix is symmetric) and
    return the note. Their codes to each other come from their own cells when every such row carries them (``X`` on
    its own diagonal after the header's columns), else from the codes to the header's devices (:func:`_nic_code`)."""
    n, cut = len(devices), list(cut_rows)
    for label, (lineno, cells) in cut_rows.items():
        for j, d in enumerate(devices):
            code = _check_code(cells[j], lineno, label, d)
            _check_nvlink_ends(code, lineno, label, d)
            if code == "X":
                raise ValueError(f"line {lineno}: 'X' off the diagonal in row {label}, column {d}; X marks a "
                                 "device's own cell only")
            codes[(label, d)] = codes[(d, label)] = code
    own = all(len(cells) >= n + len(cut) and all(_is_code(c) for c in cells[n:n + len(cut)])
              and cells[n + i] == "X" for i, (_l, cells) in enumerate(cut_rows.values()))
    unknown = []
    for i, a in enumerate(cut):
        for b in cut[i + 1:]:
            code = _cut_pair_code(a, b, cut_rows, n) if own else _nic_code(a, b, devices, codes)
            codes[(a, b)] = codes[(b, a)] = code
            unknown += [f"{a}-{b}"] if code == "?" else []
    how = ("their codes to each other from their own cells" if own else
           "their codes to each other worked out from those to the other devices, where the PCIe tree fixes them")
    return (f"rows {', '.join(cut)} have no column in the header (the paste lost those columns): read from their "
            f"rows, as the matrix is symmetric; {how}"
            + (f" (not fixed, so marked ?: {', '.join(unknown)})" if unknown else ""))


def _cut_pair_code(a: str, b: str, cut_rows: _CutRows, n: int) -> str:
    """The code of two rows with no header column from their own cells after the header's ``n`` columns, checked
    as the matrix's: a known code, no X off the diagonal, NV# between GPUs only, the same both ways."""
    cut = list(cut_rows)
    (line_a, cells_a), (line_b, cells_b) = cut_rows[a], cut_rows[b]
    ab = _check_code(cells_a[n + cut.index(b)], line_a, a, b)
    ba = _check_code(cells_b[n + cut.index(a)], line_b, b, a)
    for code, line, row, col in ((ab, line_a, a, b), (ba, line_b, b, a)):
        _check_nvlink_ends(code, line, row, col)
        if code == "X":
            raise ValueError(f"line {line}: 'X' off the diagonal in row {row}, column {col}; X marks a device's own "
                             "cell only")
    if ab != ba:
        raise ValueError(f"line {max(line_a, line_b)}: asymmetric matrix: {a}->{b} is {ab} but {b}->{a} is {ba}")
    return ab


def _nic_code(a: str, b: str, devices: list[str], codes: dict[tuple[str, str], str]) -> str:
    """The PCIe code of two devices from their codes to a third, as a tree fixes it: the codes rank how high in the
    PCIe tree two devices meet, so when ``a`` and ``b`` reach some device at different ranks they meet at the higher
    one; when every device is the same rank from both, only PIX (nothing nearer) is certain, anything else is
    ``'?'``."""
    bound = None
    for d in devices:
        ra, rb = _RANK.get(codes[(a, d)]), _RANK.get(codes[(b, d)])
        if ra is None or rb is None:
            continue
        if ra != rb:
            return PCIE_CODES[max(ra, rb) - 1]
        bound = ra if bound is None else min(bound, ra)
    return "PIX" if bound == _RANK["PIX"] else "?"


def _read_legends(lines: list[str], start: int, devices: list[str]) -> tuple[bool, dict]:
    """``(legend printed?, {NIC label: device name})`` from the lines after the matrix."""
    has_legend = False
    nic_names: dict[str, str] = {}
    in_nic_legend = False
    for j in range(start, len(lines)):
        stripped = lines[j].strip()
        if stripped.startswith("Legend"):
            has_legend = True
        elif stripped.startswith("NIC Legend"):
            in_nic_legend = True
        elif in_nic_legend and stripped:
            m = _NIC_LEGEND.match(stripped)
            if not m:
                continue
            nic, name = m.group(1), m.group(2)
            if nic not in devices or _GPU.match(nic):
                raise ValueError(f"line {j + 1}: the NIC legend names {nic!r}, which is not a NIC of the matrix")
            nic_names[nic] = name
    return has_legend, nic_names


def read_topo(path: str | Path, **kwargs) -> TopoResult:
    """Parse a file (``'-'`` reads standard input). Keyword arguments go to :func:`parse_topo`."""
    try:
        if str(path) == "-":
            text = sys.stdin.read()
        else:
            text = Path(path).read_text(encoding="utf-8")
    except (IsADirectoryError, NotADirectoryError, FileNotFoundError, PermissionError) as exc:
        # the C library's reason is English; the command line's catalog has the usual ones
        reason = _(exc.strerror) if exc.strerror else type(exc).__name__
        raise ValueError(_("FILE {path}: {reason}; give a file with the output of `nvidia-smi topo -m`, or - for "
                           "standard input").format(path=repr(str(path)), reason=reason)) from None
    except ValueError as exc:  # a path with a NUL byte
        if isinstance(exc, UnicodeDecodeError):
            raise ValueError(_("FILE {path}: not UTF-8 text (byte {byte} at position {position}); give the text "
                               "printed by `nvidia-smi topo -m`").format(
                path=path, byte=repr(exc.object[exc.start:exc.start + 1]), position=exc.start)) from None
        raise ValueError(_("FILE {path}: not a usable file name ({error})").format(path=repr(str(path)),
                                                                                  error=exc)) from None
    return parse_topo(text, **kwargs)


def example_files() -> dict[str, Path]:
    """The shipped real outputs, ``{stem: path}`` (``nvcourse/data/topo/*.txt``)."""
    folder = resources.files("nvcourse").joinpath("data/topo")
    return {Path(p.name).stem: Path(str(p)) for p in sorted(folder.iterdir(), key=lambda p: p.name)
            if p.name.endswith(".txt")}

"""Plan a chapter's slides: one idea a slide, the notebook's prose as speaker notes, pictures and tables kept.

A chapter is written to be read, so its cells are not slides. :func:`plan` walks the notebook and makes

* a slide at every ``#``, ``##`` or ``###`` heading, wherever it stands in a cell: the heading, then the
  section's first sentence (cut at :data:`WORD_LIMIT` words), with the whole section in the speaker notes;
* a slide for every picture a code cell shows (a figure, a dashboard's picture) and every table it prints,
  under the current heading, with the picture's description and the prose that led to it in the notes;
* a slide for a Markdown table or a list (each item's whole first sentence, a question whole), so a
  key-points list reads as bullets, not as a page; a long list or table goes on over continuation slides
  (:mod:`.deck_split`), never off the bottom of a 1280×720 slide;
* the section's display equations (``$$…$$``) on its slides, rendered by the deck's MathJax.

Code and printed text stay out of the slides (they are in the notes when short). :func:`deck_notebook`
turns the plan into the notebook nbconvert's reveal exporter reads (``slide_type`` per cell, ``notes`` cells).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import nbformat
from nbformat.v4 import new_markdown_cell, new_notebook

from ..deck_words import cell_also_prints, continued, figure_fallback, visual_label
from .deck_split import bullet_slides, split_html_table, split_markdown_table

WORD_LIMIT = 40  # visible words a slide holds at most (a slide is read from the back of a room in seconds)
HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
DISPLAY_MATH = re.compile(r"\$\$.+?\$\$", flags=re.S)
MATHS_PER_SLIDE = 3  # display equations one slide shows under its lead
_NOTES_TEXT_LIMIT = 1500  # characters of a cell's printed output kept in the notes

#: Figures that mislead when projected without the chapter's reading of them: (the code that draws the figure,
#: the start of each sentence of the chapter's prose after it that goes under the figure on its slide). Chapter
#: 04's CPU run sits 10–400× off the GPU model; alone on a screen it reads "the model is wrong", so the slide
#: says why, in the chapter's words. A test fails when the chapter no longer has the sentence.
FIGURE_CAPTIONS = {
    "ch.plot_measured_vs_model(": ("That says nothing against the formulas", "So a measured order here is a fact"),
}


@dataclass
class Slide:
    """One slide: a title, a short lead or bullets (Markdown), a visual (HTML), and the speaker notes."""

    title: str
    lead: str = ""
    visual: str = ""
    notes: list[str] = field(default_factory=list)
    maths: list[str] = field(default_factory=list)  # display equations, ``$$…$$``
    continued: bool = False  # a picture or table slide under the same heading as the slide before

    def visible_words(self) -> int:
        text = re.sub(r"<[^>]+>", " ", f"{self.title} {self.lead}")
        return len(re.findall(r"[\w’'–-]+", text))


#: Word breaks: ASCII white space only, so the no-break spaces of French typography (before : ; ? ! % and a unit,
#: inside 16 384) stay in a slide's text and a line never breaks there.
SPACES = re.compile(r"[ \t\r\n\f\v]+")


def words(text: str) -> list[str]:
    return [w for w in SPACES.split(text) if w]


def _plain(md: str) -> str:
    """Markdown without links' targets, emphasis marks and code ticks, for counting and cutting."""
    md = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", md)
    md = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", md)
    return md.replace("**", "").replace("`", "")


def cut(text: str, limit: int = WORD_LIMIT) -> str:
    """The first sentence of ``text`` (Markdown kept plain), at most ``limit`` words; "…" marks a cut."""
    flat = " ".join(words(_plain(text)))
    first = re.split(r"(?<=[.!?:]) (?=[A-Z0-9(«À-ÖØ-Þ])", flat, maxsplit=1)[0]  # French sentences too: « À É
    ws = words(first)
    return " ".join(ws) if len(ws) <= limit else " ".join(ws[:limit]).rstrip(",;:") + " …"


def _blocks(md: str) -> list[tuple[str, str]]:
    """A Markdown cell as ("heading" | "table" | "list" | "math" | "text", content) blocks, headings split out of
    prose and display equations out of paragraphs."""
    out: list[tuple[str, str]] = []
    para: list[str] = []

    def flush() -> None:
        text = "\n".join(para).strip()
        para.clear()
        if not text:
            return
        lines = text.splitlines()
        if all(line.lstrip().startswith("|") for line in lines) and len(lines) >= 2:
            out.append(("table", text))
        elif LIST_ITEM.match(lines[0]):
            out.append(("list", text))
        else:
            rest = 0
            for m in DISPLAY_MATH.finditer(text):
                if text[rest:m.start()].strip():
                    out.append(("text", text[rest:m.start()].strip()))
                out.append(("math", " ".join(m.group(0).split())))
                rest = m.end()
            if text[rest:].strip():
                out.append(("text", text[rest:].strip()))

    for line in md.splitlines():
        m = HEADING.match(line)
        if m:
            flush()
            out.append(("heading", m.group(2)))
        elif not line.strip():
            flush()
        else:
            para.append(line)
    flush()
    return out


def _img(data: str, mime: str, alt: str, tick_px: object = None) -> str:
    extra = f' data-tick-px="{tick_px}"' if tick_px else ""
    return (f'<img class="nvcourse-deck-figure" alt="{html.escape(alt, quote=True)}"{extra} '
            f'src="data:{mime};base64,{data.strip()}">')


def _visuals(cell: nbformat.NotebookNode) -> tuple[list[tuple[str, str]], str]:
    """([(kind, HTML)] of a code cell's pictures and tables, its printed text) — kind is figure/dashboard/table."""
    visuals, printed = [], []
    for out in cell.get("outputs", []):
        data, meta = out.get("data", {}), out.get("metadata", {})
        if "image/png" in data:
            md = meta.get("image/png", {}) if isinstance(meta.get("image/png"), dict) else {}
            picture = _img(data["image/png"], "image/png", md.get("alt", figure_fallback()), md.get("tick_px"))
            visuals.append(("figure", picture))
        elif "text/html" in data and "nvcourse-dashboard-static" in data["text/html"]:
            pic = re.search(r"<img [^>]*>", data["text/html"])
            if pic:
                visuals.append(("dashboard", pic.group(0).replace("<img ", '<img class="nvcourse-deck-figure" ', 1)))
        elif "text/html" in data and "</table>" in data["text/html"]:  # a table a code cell printed
            visuals += [("table", f'<div class="nvcourse-deck-table">{part}</div>')
                        for part in split_html_table(data["text/html"])]
        elif out.get("output_type") == "stream" and out.get("name") == "stdout":
            printed.append(out.get("text", ""))
    return visuals, "".join(printed)[:_NOTES_TEXT_LIMIT]


def _title_of(stack: list[str]) -> str:
    return stack[-1] if stack else ""


def figure_caption(source: str, after: list) -> str:
    """The chapter's own sentences a figure drawn by ``source`` keeps on its slide (:data:`FIGURE_CAPTIONS`),
    found in the Markdown cells ``after`` it; "" for other figures, or when the chapter lacks them."""
    starts = next((v for k, v in FIGURE_CAPTIONS.items() if k in source), None)
    if starts is None:
        return ""
    prose = " ".join(_plain(c.source) for c in after if c.cell_type == "markdown")
    prose = " ".join(prose.split())
    found = [re.search(re.escape(start) + r"[^.]*\.", prose) for start in starts]
    return " ".join(m.group(0) for m in found if m) if all(found) else ""


def plan(nb: nbformat.NotebookNode) -> list[Slide]:
    """The slides of one chapter, in order (see the module docstring)."""
    slides: list[Slide] = []
    title = ""
    pending: list[str] = []  # prose read since the last slide that showed something

    def new(**kw) -> Slide:
        slide = Slide(title=kw.pop("title", title), **kw)
        slides.append(slide)
        return slide

    for index, cell in enumerate(nb.cells):
        if cell.get("metadata", {}).get("slideshow", {}).get("slide_type") == "skip":
            continue
        if cell.cell_type == "markdown":
            for kind, content in _blocks(cell.source):
                if kind == "heading":
                    title = _plain(content)
                    new(notes=[])
                    pending = []
                    continue
                current = slides[-1] if slides else new()
                if kind == "table":
                    for part in split_markdown_table(content):
                        new(visual=part, notes=[content], continued=True)
                elif kind == "list":
                    for bullets in bullet_slides(content):
                        if current.lead or current.visual or current.maths:
                            current = new(continued=True)
                        current.lead = bullets
                        current.notes.append(content)
                elif kind == "math":
                    if current.visual or LIST_ITEM.match(current.lead) or len(current.maths) >= MATHS_PER_SLIDE:
                        current = new(continued=True)
                    current.maths.append(content)
                    current.notes.append(content)
                else:
                    if not current.lead and not current.visual:
                        current.lead = cut(content)
                    current.notes.append(content)
                    pending.append(content)
        elif cell.cell_type == "code":
            visuals, printed = _visuals(cell)
            for kind, visual in visuals:
                alt = re.search(r'alt="([^"]*)"', visual)
                notes = [f"{visual_label(kind)} {html.unescape(alt.group(1))}" if alt else visual_label(kind)]
                notes += pending[-1:]  # the sentence that set up this picture (often the prediction to make)
                if printed.strip():
                    notes.append(f"{cell_also_prints()}\n\n```\n{printed.strip()}\n```")
                caption = figure_caption(cell.source, nb.cells[index + 1:]) if kind == "figure" else ""
                caption = f'<p class="nvcourse-deck-caption">{html.escape(caption)}</p>' if caption else ""
                new(lead=caption, visual=visual.replace('class="nvcourse-deck-figure"',
                                                        'class="nvcourse-deck-figure nvcourse-deck-captioned"')
                    if caption else visual, notes=notes, continued=True)
                pending = []
    return [s for s in slides if s.lead or s.visual or s.notes or s.maths]


def deck_notebook(slides: list[Slide]) -> nbformat.NotebookNode:
    """The notebook nbconvert's reveal exporter turns into the deck: per slide a Markdown cell that starts a
    slide, and a ``notes`` cell with the speaker notes."""
    cells = []
    for slide in slides:
        head = "## " + (continued(slide.title) if slide.continued and slide.title else slide.title)
        body = "\n\n".join(part for part in (head if slide.title else "", slide.lead, *slide.maths, slide.visual)
                             if part)
        cells.append(new_markdown_cell(body or " ", metadata={"slideshow": {"slide_type": "slide"}}))
        notes = "\n\n".join(slide.notes) or slide.lead or slide.title
        cells.append(new_markdown_cell(notes, metadata={"slideshow": {"slide_type": "notes"}}))
    return new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                               "language": "python"}})

"""``qar report --format md``: the same report as Markdown, for a pull-request comment or a wiki.

Made from the rendered HTML report itself (not a second set of templates), so the two cannot
disagree: headings, paragraphs, lists and tables become Markdown; each figure becomes its text
alternative (the SVG's ``aria-label``); the SQL and the JSON block are left out (they are for
programs, and the HTML file holds them), as the printed page leaves them out.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from qar_sql.user_text import escape_md

__all__ = ["escape_md", "fence", "html_to_markdown"]

_SKIPPED = {"style", "title", "svg", "script", "head"}
_BLOCKS = {"p", "li", "caption", "figcaption", "summary", "h1", "h2", "h3", "pre"}


def fence(code: str) -> str:
    """``code`` in a fence longer than any run of backticks inside it (which would close it)."""
    runs = [len(r) for r in re.findall(r"`+", code)]
    bar = "`" * max(3, 1 + max(runs, default=0))
    return f"{bar}\n{code}\n{bar}"


class _Converter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.text: list[str] = []
        self.skip = 0  # depth inside an element whose text is not shown
        self.rows: list[list[str]] | None = None
        self.header_rows = 0
        self.cell: list[str] | None = None
        self.in_thead = False
        self.caption: str | None = None
        self.pre = False

    # -- helpers ---------------------------------------------------------------------------
    def _flush(self, prefix: str = "") -> None:
        if self.pre:
            text = "".join(self.text).strip("\n")
        else:
            text = escape_md(" ".join("".join(self.text).split()))
        self.text = []
        if text:
            self.out.append(prefix + text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if not self.skip and a.get("data-md") is not None:  # the page's own words for Markdown
            self._flush()
            self.out.append(escape_md(a.get("data-md") or ""))
            self.skip += 1
            return
        if self.skip or tag in _SKIPPED or "noprint" in (a.get("class") or "").split():
            if tag == "svg" and not self.skip and a.get("aria-label"):
                self.out.append(f"*Figure: {escape_md(a['aria-label'] or '')}*")
            if tag not in ("meta", "br", "img", "input"):
                self.skip += 1
            return
        if tag == "table":
            self._flush()
            self.rows, self.header_rows, self.caption = [], 0, None
        elif tag == "thead":
            self.in_thead = True
        elif tag == "tr" and self.rows is not None:
            self.rows.append([])
            if self.in_thead:
                self.header_rows += 1
        elif tag in ("td", "th") and self.rows is not None:
            self.cell = []
        elif tag == "br":
            self.text.append(" ")
        elif tag == "pre":
            self.pre = True
        elif tag in ("sub", "sup"):
            self.text.append("_" if tag == "sub" else "^")

    def handle_endtag(self, tag: str) -> None:
        if self.skip:
            if tag not in ("meta", "br", "img", "input"):
                self.skip -= 1
            return
        if self.rows is not None:
            if tag in ("td", "th") and self.cell is not None:
                cell = escape_md(" ".join("".join(self.cell).split()))
                self.rows[-1].append(cell)
                self.cell = None
            elif tag == "thead":
                self.in_thead = False
            elif tag == "caption":
                self.caption = escape_md(" ".join("".join(self.text).split()))
                self.text = []
            elif tag == "table":
                self._table()
            return
        if tag == "h1":
            self._flush("# ")
        elif tag in ("h2", "h3"):
            self._flush("## " if tag == "h2" else "### ")
        elif tag == "li":
            self._flush("- ")
        elif tag == "summary":
            self._flush("**")
            if self.out and self.out[-1].startswith("**"):
                self.out[-1] += "**"
        elif tag == "pre":
            self._flush()
            if self.out:
                self.out[-1] = fence(self.out[-1])
            self.pre = False
        elif tag == "figcaption":
            self._flush("*")
            if self.out and self.out[-1].startswith("*") and not self.out[-1].endswith("*"):
                self.out[-1] += "*"
        elif tag in _BLOCKS or tag in ("div", "section", "header", "footer", "nav", "figure", "td"):
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.cell is not None:
            self.cell.append(data)
        else:
            self.text.append(data)

    def _table(self) -> None:
        rows, self.rows = self.rows or [], None
        if self.caption:
            self.out.append(f"**{self.caption}**")
        if not rows:
            return
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        head = rows[0] if self.header_rows else [""] * width
        body = rows[1:] if self.header_rows else rows
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * width]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        self.out.append("\n".join(lines))


def html_to_markdown(page: str) -> str:
    """The Markdown of a rendered report page (see the module's docstring)."""
    conv = _Converter()
    conv.feed(page)
    conv.close()
    conv._flush()
    out: list[str] = []
    for block in conv.out:  # the items of a list on consecutive lines
        if out and block.startswith("- ") and out[-1].split("\n")[-1].startswith("- "):
            out[-1] += "\n" + block
        else:
            out.append(block)
    return "\n\n".join(out).rstrip() + "\n"

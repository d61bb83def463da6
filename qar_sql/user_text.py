"""Text a user or a data source controls (a table, column or scan name, a category, a --title, a
path, a message quoting one of them) as each output channel shows it: the one owner of which
characters are unsafe there and how each is written instead.

Two kinds of character are never shown raw, on any channel people read:

- a control character or a line or paragraph separator (:func:`control_or_separator`): a line
  break splits a one-line message or a table row, a carriage return or an escape sequence
  rewrites the terminal, NUL and most C0 controls are not even allowed in XML 1.0;
- a bidirectional control (:data:`BIDI_CONTROLS`): U+202E and its kin reorder what follows
  ("Trojan Source"), so a name would read as another.

Per channel: the terminal gets :func:`one_line` of each piece of user text (and :func:`terminal`
of a whole rendered output, which keeps its own line breaks; the log and ``--debug``'s traceback
too); Markdown :func:`escape_md`; HTML Jinja's autoescape and :func:`html_page` of the page; JUnit
:func:`xml_attribute` and :func:`xml_text`; CSV :func:`csv_cell` (OWASP's CSV-injection rule) in
every CSV written, on stdout or to a file. JSON carries text as written (``json`` escapes
it), and so does CSV apart from that rule: they are data for programs. Masking secrets is not
done here: :mod:`qar_sql.engines.secrets` owns it, and runs first.

The GitHub Action's helper (qar_sql/cli/action.py) runs on the standard library alone, so it
keeps its own copy of :data:`BIDI_CONTROLS` and of :func:`control_or_separator`; a test checks
that they agree.
"""

from __future__ import annotations

import html
import re
from typing import Any

#: Bidirectional embeddings, overrides and isolates: they reorder the text after them (and make
#: SQL read differently from what runs, so a name holding one is refused in SQL).
BIDI_OVERRIDES = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

#: Every bidirectional control: the overrides and the marks (U+061C, U+200E, U+200F), which move
#: the neutral characters around them.
BIDI_CONTROLS = BIDI_OVERRIDES | frozenset("\u061c\u200e\u200f")

_BIDI = re.compile("[" + "".join(sorted(BIDI_CONTROLS)) + "]")

#: Unicode's categories Cc (U+0000–U+001F, U+007F–U+009F), Zl (U+2028) and Zp (U+2029), and the
#: surrogates (Cs: Python's stand-in for a byte that was not UTF-8 in a file name or an argument,
#: which no UTF-8 output can write), as one character class: a whole output is searched once, not
#: character by character in Python (a 20 MB text output took 5.8 s that way).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_CONTROL_BUT_LINE_FEED = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_CONTROL_BUT_PAGE_BLANKS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(match: re.Match) -> str:
    return match.group(0).encode("unicode_escape", "backslashreplace").decode("ascii")


def reads_as_number(text: str) -> bool:
    """``text`` is what ``float()`` reads as a number ("-0.5", "1e3", "inf")."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def control_or_separator(c: str) -> bool:
    """Whether the character ``c`` is a control character (NUL, tab, CR, ESC, U+0085, …) or a line
    or paragraph separator (U+2028, U+2029; Python's ``splitlines`` and many tools break lines
    there): Unicode's categories Cc, Zl and Zp; or a lone surrogate (Cs, see :func:`not_utf8`)."""
    return _CONTROL.fullmatch(c) is not None


def not_utf8(text: str) -> str | None:
    """The first byte of ``text`` that was not UTF-8 (``\\xff``), or None. Python reads such a byte
    of an argument or a file name as a lone surrogate (U+DC80–U+DCFF), which no UTF-8 output
    (a report, the JSON on stdout) can write."""
    found = _SURROGATE.search(text)
    if found is None:
        return None
    code = ord(found.group(0))
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"


def unsafe(c: str) -> bool:
    """Whether ``c`` is never shown raw: :func:`control_or_separator` or a bidirectional control."""
    return c in BIDI_CONTROLS or control_or_separator(c)


def unsafe_character(text: str, allow: str = "") -> str | None:
    """The first character of ``text`` that cannot stay inside one SQL name, value or comment: a
    control character or separator (:func:`control_or_separator`) or a bidirectional override,
    except those in ``allow``; None when there is none."""
    return next((c for c in text if (control_or_separator(c) or c in BIDI_OVERRIDES) and c not in allow), None)


def unsafe_text(value: Any) -> tuple[str, str] | None:
    """The first text of ``value`` (a text, or a list or mapping of them, nested: a file's value,
    a map's keys too) holding a character SQL cannot hold (:func:`unsafe_character`, a tab
    allowed), with that character; else None."""
    if isinstance(value, str):
        return None if (c := unsafe_character(value, allow="\t")) is None else (value, c)
    parts = [*value, *value.values()] if isinstance(value, dict) else value if isinstance(value, list) else ()
    return next((bad for part in parts if (bad := unsafe_text(part)) is not None), None)


def neutral_bidi(text: str) -> str:
    """``text`` with every bidirectional control shown as its code point, ``⟦U+202E⟧``."""
    return _BIDI.sub(lambda m: f"⟦U+{ord(m.group(0)):04X}⟧", text)


def one_line(text: str) -> str:
    """``text`` as one line that reads as written: a control character or separator (a line
    break, an escape sequence) as its Python escape (``\\n``, ``\\x1b``), a bidirectional control
    as its code point (:func:`neutral_bidi`)."""
    return neutral_bidi(_CONTROL.sub(_escaped, text))


def traceback_text(exc: BaseException) -> str:
    """``--debug``'s traceback of ``exc`` for the terminal: the message of each exception of the
    chain on one line (:func:`one_line`: a message quotes user text, and a line of it starting
    ``::error::`` would be a workflow command in a CI log), the rest as :func:`terminal` writes it."""
    import traceback

    te = traceback.TracebackException.from_exception(exc)
    pending, seen = [te], set()
    while pending:
        t = pending.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if isinstance(getattr(t, "_str", None), str):  # (CPython's message of the exception)
            t._str = one_line(t._str)  # type: ignore[attr-defined]
        pending += [c for c in (t.__cause__, t.__context__) if c is not None]
        pending += list(getattr(t, "exceptions", None) or ())
    return terminal("".join(te.format()))


def terminal(text: str) -> str:
    """A whole output for the terminal (a rendered table, a message): its own line breaks kept,
    every other unsafe character written as :func:`one_line` writes it. The last guard of the text
    channel; a piece of user text inside a line is made :func:`one_line` where it is put in."""
    return neutral_bidi(_CONTROL_BUT_LINE_FEED.sub(_escaped, text))


# -- Markdown ---------------------------------------------------------------------------------

# Every character with a meaning in Markdown or the HTML it may hold: text from the page (a
# --title, a column name) is shown as written, never read as a link, an image, a tag or a comment.
_ACTIVE = re.compile(r"([\\`*_\[\]<>&|!~])")
_BLOCK_START = re.compile(r"^(?:(#|[-+](?=\s)|[-=]+$)|\d+([.)])(?=\s|$))")


def escape_md(text: str) -> str:
    """``text`` as literal Markdown: each active character backslash-escaped (``<`` and ``&`` as
    entities, which GitHub and mkdocs show as the character)."""
    text = _ACTIVE.sub(lambda m: {"<": "&lt;", ">": "&gt;", "&": "&amp;"}.get(m.group(1), "\\" + m.group(1)), text)
    # A line that would start a heading, a list or an underline: its marker escaped.
    return _BLOCK_START.sub(lambda m: "\\" + m.group(0) if m.group(1) else m.group(0)[:-1] + "\\" + m.group(2), text)


def markdown_inline(text: str) -> str:
    """``text`` as one piece of inline Markdown (a table cell, a list item): on one line, its
    blanks collapsed, bidirectional controls shown, escaped (:func:`escape_md`)."""
    return escape_md(one_line(" ".join(text.split())))


# -- XML (JUnit) -------------------------------------------------------------------------------

_XML_NONCHARACTER = re.compile("[\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` for an XML element (a JUnit failure's body): as :func:`terminal` writes it (XML 1.0
    cannot carry most C0 controls even escaped, and a test report viewer is read by people), and
    the two non-characters U+FFFE and U+FFFF, which XML forbids too, as ``?``."""
    return _XML_NONCHARACTER.sub("?", terminal(text))


def xml_attribute(text: str) -> str:
    """``text`` for an XML attribute (a JUnit testcase's name, a property's value): one line, as
    :func:`one_line` writes it. A line break there is written ``&#10;`` and read back as one, so a
    test report viewer would show the name on two lines."""
    return _XML_NONCHARACTER.sub("?", one_line(text))


# -- CSV ----------------------------------------------------------------------------------------

#: The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: str) -> str:
    """A text cell of a CSV file: as written, unless a spreadsheet would run it as a formula —
    one starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
    ``'`` (OWASP's rule). A number (``-0.5``, ``+3``, ``-inf``) stays as written: it is no formula."""
    if text.startswith(FORMULA_START) and not reads_as_number(text):
        return "'" + text
    return text


# -- one output, by its format -------------------------------------------------------------------

#: The formats written for people to read on a terminal or in a Markdown viewer: their own line
#: breaks are kept, every other unsafe character shown (:func:`terminal`).
READ_AS_TEXT = frozenset({"text", "markdown", "md"})


def for_format(text: str, fmt: str) -> str:
    """A command's whole output in ``fmt`` made safe to show: text and Markdown as
    :func:`terminal`, HTML as :func:`html_page` (its text is escaped by Jinja's autoescape), JSON,
    CSV and SQL as written (escaped by their own writers)."""
    if fmt in READ_AS_TEXT:
        return terminal(text)
    if fmt == "html":
        return html_page(text)
    return text


def html_page(text: str) -> str:
    """A whole report page, HTML or the Markdown made from it, made safe to show: its own tabs and
    line feeds kept, every other control character, separator or lone surrogate written as its code
    point ``\\u001b`` (a browser drops NUL and ESC, but an editor, a pager, ``cat`` of the file or
    the terminal of ``qar report -o -`` does not; a CR would end a Markdown line; ``\\uXXXX`` also
    keeps the page's JSON block valid JSON), and bidirectional controls shown
    (:func:`neutral_bidi`). Its text is escaped by Jinja's autoescape before."""
    return neutral_bidi(_CONTROL_BUT_PAGE_BLANKS.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text))


def html_text(text: str) -> str:
    """``text`` for HTML written by hand (a notebook's ``_repr_html_``): escaped, on one line and
    with bidirectional controls shown (:func:`one_line`). The report's templates escape with Jinja's
    autoescape and the page passes :func:`neutral_bidi`."""
    return html.escape(one_line(text))

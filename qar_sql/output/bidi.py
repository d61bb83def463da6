"""Bidirectional controls made visible in what people read (HTML, Markdown, JUnit)."""

from __future__ import annotations

import re
import unicodedata

#: The Unicode bidirectional controls (embeddings, overrides, isolates, marks): in a column name
#: or a --title they reorder what the reader sees (a "Trojan Source" name), so a report shows
#: each as its code point, ⟦U+202E⟧, in HTML and Markdown alike.
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def neutral_bidi(text: str) -> str:
    """``text`` with every bidirectional control shown as its code point (:data:`BIDI_CONTROLS`)."""
    return BIDI_CONTROLS.sub(lambda m: f"⟦U+{ord(m.group(0)):04X}⟧", text)


def one_line(text: str) -> str:
    """``text`` as one line that reads as written: a control character or line separator (a
    name's line break, an escape sequence) as its escape, a bidirectional control as its code
    point (:func:`neutral_bidi`)."""
    escaped = "".join(
        c.encode("unicode_escape").decode("ascii") if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in text
    )
    return neutral_bidi(escaped)

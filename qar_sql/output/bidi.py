"""Bidirectional controls made visible in what people read (HTML, Markdown, JUnit)."""

from __future__ import annotations

import re

#: The Unicode bidirectional controls (embeddings, overrides, isolates, marks): in a column name
#: or a --title they reorder what the reader sees (a "Trojan Source" name), so a report shows
#: each as its code point, ⟦U+202E⟧, in HTML and Markdown alike.
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def neutral_bidi(text: str) -> str:
    """``text`` with every bidirectional control shown as its code point (:data:`BIDI_CONTROLS`)."""
    return BIDI_CONTROLS.sub(lambda m: f"⟦U+{ord(m.group(0)):04X}⟧", text)

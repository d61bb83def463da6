"""docs/method.md's numbered steps of the estimator render as five items: a paragraph inside
step 4 ran on into "5. Risk", which Markdown then showed as text of step 4."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "method.md"


def test_the_five_steps_are_five_list_items():
    markdown = pytest.importorskip("markdown")  # mkdocs' renderer
    text = DOC.read_text(encoding="utf-8")
    start = text.index("1. **Clip**")
    html = markdown.markdown(text[start : text.index("*Plainly:*", start)])
    steps = re.findall(r"<li>\s*(?:<p>)?<strong>([^<]+)</strong>", html)
    assert steps == ["Clip", "Threshold", "Exceedances", "Tail fit", "Risk"], steps

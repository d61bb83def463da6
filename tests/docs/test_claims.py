"""No sentence a person reads says what T̂ is not: θ = H / L counts distinct value combinations
per record, so neither θ nor T̂ is a share of records singled out, and the bootstrap band of T̂
covers the tail fit only, so it is no confidence interval (docs/uncertainty.md publishes its
measured coverage).

Checked on everything a person reads: README and docs, every command's ``--help``, the rendered
outputs of every command kept as CLI snapshots, and a live audit (text, Markdown) and report
(HTML, Markdown) of the demo population."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli

REPO = Path(__file__).resolve().parents[2]

#: Phrases that are false of θ and T̂ wherever they appear.
FALSE = (
    "attacker can",
    "letting an attacker",
    "can single out",
    "in 95% of such audits",
    "holds the truth as often as it says",
    "interval is optimistic",
    "coverage probability of the bootstrap",
)

#: Sentences about other measures whose intervals are binomial (the Monte Carlo share of
#: qar uniqueness, a Wilson interval) or anonymeter's own confidence intervals.
OTHER_MEASURES = ("monte carlo", "wilson", "anonymeter", "all k unique", "all k values differed")

_SINGLE_OUT = re.compile(r"\bsingl(?:e|es|ed|ing) out\b")
_SHARE = re.compile(r"(?:share|per ?cent|%) of (?:the )?(?:records|people)")
_NEGATION = re.compile(r"\b(?:not|never|no|nor|nothing)\b")
_TAGS = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.S)


def units(text: str) -> list[str]:
    """Sentences (and table cells), lower-cased, HTML tags and entities removed."""
    text = html.unescape(_TAGS.sub(" ", text))
    out = []
    for para in re.split(r"\n\s*\n", text):
        lines = para.splitlines()
        cells = [c for ln in lines if ln.lstrip().startswith("|") for c in ln.split("|")]
        prose = " ".join(ln for ln in lines if not ln.lstrip().startswith("|"))
        for s in [*cells, *re.split(r"(?<=[.;!?])\s+", prose)]:
            s = " ".join(s.split()).lower()
            if s:
                out.append(s)
    return out


def false_claims(text: str) -> list[str]:
    """The sentences of ``text`` that make one of the claims this module forbids."""
    bad = []
    for s in units(text):
        other = any(m in s for m in OTHER_MEASURES)
        about_theta = "θ" in s or "t̂" in s or "theta" in s
        if (
            any(f in s for f in FALSE)
            or (_SINGLE_OUT.search(s) and (about_theta or "risk" in s or "probability" in s) and "unique" not in s)
            or ("95% interval" in s and not other)
            or ("confidence interval" in s and not other and not _NEGATION.search(s))
            or (about_theta and _SHARE.search(s) and "unique" not in s and not _NEGATION.search(s))
        ):
            bad.append(s)
    return bad


def test_the_checker_catches_the_old_sentences():
    old = (
        "Read it as: a quasi-identifier made of 3 of these columns has probability α = 1% of letting an "
        "attacker single out more than 59.6% of the records (θ = distinct combinations / rows).\n\n"
        "  95% interval        0.4965 to 0.6514 (bootstrap BCa over the QIs' θ, 1,000 resamples)\n\n"
        "*Plainly:* θ(j) is the share of records an attacker who knows the p values of QI j can tell apart.\n\n"
        "| 95% interval of T̂ | 0.9734 to 0.9861 |\n\n"
        "<p>T̂ is the re-identification risk of this table: the share of records that an attacker who knows "
        "a few of a person's attributes can single out.</p>\n\n"
        "T̂ has a 95 % confidence interval."
    )
    assert len(false_claims(old)) == 6, false_claims(old)
    fine = (
        "The tail-fit band is not a confidence interval. θ = H / L, a count per record, not a share of people. "
        "In people: 1,907 records (6.32%) are unique on the riskiest quasi-identifier.\n\n"
        "anonymeter (risk, 95 % confidence interval):\n\n"
        "Simulate this many groups of k per QI and report the share with all k unique and its 95% interval."
    )
    assert false_claims(fine) == []


DOCS = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_docs(path):
    assert false_claims(path.read_text(encoding="utf-8")) == []


SNAPSHOTS = sorted((REPO / "tests" / "cli" / "snapshots").glob("*.txt"))


def test_every_snapshot_of_every_command():
    """The CLI snapshots hold every command's text, Markdown, JSON and HTML output and --help."""
    assert SNAPSHOTS
    bad = {p.name: c for p in SNAPSHOTS if (c := false_claims(p.read_text(encoding="utf-8")))}
    assert bad == {}


def _commands(group, path=()):
    for name, sub in group.commands.items():
        yield (*path, name)
        if hasattr(sub, "commands"):
            yield from _commands(sub, (*path, name))


@pytest.mark.parametrize("path", [(), *_commands(cli)], ids=lambda p: " ".join(p) or "qar")
def test_help_of_every_command(path):
    r = CliRunner().invoke(cli, [*path, "--help"], terminal_width=200)
    assert r.exit_code == 0 and false_claims(r.output) == []


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("claims")
    r = CliRunner().invoke(cli, ["demo", "--rows", "5000", "--path", str(root / "d.duckdb"), "-q"])
    assert r.exit_code == 0, r.output
    assert false_claims(r.output) == []  # the demo's own audit
    return root


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_a_live_audit(demo, fmt):
    args = ["audit", str(demo / "d.duckdb"), "-t", "population", "-x", "person_id", "-q", "-f", fmt]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert "tail-fit band" in r.output and false_claims(r.output) == []


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_a_live_report(demo, fmt):
    out = demo / f"r.{fmt}"
    args = ["report", str(demo / "d.duckdb"), "-t", "population", "-x", "person_id", "-q", "-f", fmt, "-o", str(out)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="utf-8")
    assert "tail-fit band" in text and "not a confidence interval" in text
    assert false_claims(text) == []

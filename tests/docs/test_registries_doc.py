"""What the docs say about engines, treatment kinds and the code's layout matches the code
(issue 31): docs/limits.md still said that only DuckDB and PostgreSQL execute and that the
perturbative treatments were not implemented, and CONTRIBUTING's "where things go" named files
that no longer held what it said.

The registries: the dialects (``qar_sql.engines.dialects.DIALECTS``, ``executable`` = the tests
run it), the treatment kinds (``qar_sql.treat.kinds.KINDS``, named in ``qar_sql.treat.treatments.KINDS``), the package's files and its
import graph (tests/test_layout.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_layout import GRAPH, _unit

from qar_sql.engines.dialects import DIALECTS
from qar_sql.treat.treatments import KINDS, PERTURBATIVE

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md", REPO / "CONTRIBUTING.md"]
#: How pages name each dialect: by its name, or as written here (MariaDB is the "mysql" dialect).
ENGINE_NAMES = {d.name: d.name for d in DIALECTS.values()} | {
    "postgresql": r"postgres(?:ql)?",
    "mysql": r"mariadb|mysql",
    "clickhouse": r"clickhouse|chdb",
}
EXECUTING = {d.name for d in DIALECTS.values() if d.executable}
RENDERED = {d.name for d in DIALECTS.values() if not d.executable}
#: How pages name the perturbative kinds in prose.
KIND_PROSE = {
    "pram": r"pram",
    "noise": r"noise(?: addition)?",
    "microaggregation": r"micro-?aggregation",
    "swap": r"(?:rank )?swap(?:ping)?",
    "shuffle": r"shuffl(?:e|ing)",
}
NEGATION = re.compile(r"\bnot\b|\bnever\b|n't\b|\bunsupported\b", re.I)


def _engines(text: str) -> set[str]:
    return {name for name, pattern in ENGINE_NAMES.items() if re.search(rf"(?<![\w/]){pattern}\b", text, re.I)}


def _clauses(page: Path) -> list[str]:
    """The page's prose (code blocks left out) in clauses: split at sentence ends, semicolons and
    table cells, lines joined."""
    text = re.sub(r"```.*?```", " ", page.read_text(encoding="utf-8"), flags=re.S)
    return re.split(r"(?<=[.;])\s+|\|", re.sub(r"\s+", " ", text))


def _table(page: Path, heading: str) -> list[list[str]]:
    """The cells of the first table from ``heading`` on (a heading, or the table's header row),
    its header and rule left out."""
    lines = page.read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    while not lines[start].startswith("|"):
        start += 1
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines[start + 2 : end]]


def test_the_name_patterns_cover_every_dialect():
    assert set(ENGINE_NAMES) == {d.name for d in DIALECTS.values()}


def test_the_engine_matrix_is_the_dialect_registry():
    """docs/engines.md's engine × command matrix: an engine whose commands "run in CI" is an
    executable dialect, a "compile-checked" one is not, and every dialect has its row."""
    running, rendered = set(), set()
    for row in _table(REPO / "docs" / "engines.md", "## Engine × command"):
        names = _engines(row[0])
        assert names, f"docs/engines.md: the matrix row {row[0]!r} names no known engine"
        if all(cell == "runs in CI" for cell in row[1:]):
            running |= names
        elif "compile-checked" in row[1:]:
            rendered |= names
    assert running == EXECUTING, "docs/engines.md's matrix and the executable dialects differ"
    assert rendered == RENDERED, "docs/engines.md's matrix and the compile-only dialects differ"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_claim_about_executing_engines_matches_the_registry(page):
    """A clause saying engines execute names only executable ones, and all of them when it names
    several (a list of the engines that run); one saying they do not execute names none."""
    for clause in _clauses(page):
        if not re.search(r"\bexecut(?:e|es|ed|ing)\b", clause, re.I):
            continue
        named = _engines(clause)
        if not named:
            continue
        if NEGATION.search(clause):
            assert not named & EXECUTING, f"{page.name}: {clause!r} says an executing engine does not execute"
        else:
            assert named <= EXECUTING, f"{page.name}: {clause!r} says a compile-only engine executes"
            assert len(named) < 2 or named == EXECUTING, f"{page.name}: {clause!r} leaves out {EXECUTING - named}"


def test_every_treatment_kind_is_documented_and_every_documented_kind_exists():
    """The kinds tables of docs/treatments.md (recoding) and docs/perturbative.md are KINDS,
    split as the code splits them."""
    recoding = {
        m
        for row in _table(REPO / "docs" / "treatments.md", "| kind | keys | result |")
        for m in re.findall(r"^`(\w+)`$", row[0])
    }
    perturbative = {
        m
        for row in _table(REPO / "docs" / "perturbative.md", "| kind | sdcMicro |")
        for m in re.findall(r"^`(\w+)`", row[0])
    }
    assert perturbative == set(PERTURBATIVE)
    assert recoding == set(KINDS) - set(PERTURBATIVE)


@pytest.mark.parametrize("page", PAGES + sorted((REPO / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_every_kind_a_page_uses_exists_and_none_is_called_missing(page):
    text = page.read_text(encoding="utf-8")
    for kind in re.findall(r"\bkind\s*=\s*\"(\w+)\"", text):
        assert kind in KINDS, f"{page.name}: kind = {kind!r} is not a treatment kind ({', '.join(KINDS)})"
    if page.suffix != ".md":
        return
    missing = re.compile(r"not (?:yet )?(?:implemented|supported|available)|\bunsupported\b", re.I)
    for clause in _clauses(page):
        if not missing.search(clause):
            continue
        named = {k for k, pattern in KIND_PROSE.items() if re.search(rf"\b{pattern}\b", clause, re.I)}
        named |= {k for k in KINDS if f"`{k}`" in clause}
        if re.search(r"\bperturbative\b", clause, re.I):
            named |= set(PERTURBATIVE)
        assert not named, f"{page.name}: {clause!r} says treatment kinds {sorted(named)} are missing"


def _contributing_paths() -> list[tuple[str, Path]]:
    """(as written, resolved) for each file or folder CONTRIBUTING.md names: a path from the
    root, or in the "where things go" table a name inside the row's folder."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    out = []
    for token in re.findall(r"`([\w./<>-]+)`", text):
        if "/" not in token.rstrip("/") or "<" in token or re.search(r"(^|/)(X|NNNN_slug)\.", token):
            continue  # a word, a bare name (the table's are below), or a placeholder
        # From the root, or inside the package (the duplicated-code list names engines/…, measures/…)
        out.append((token, REPO / token if (REPO / token).exists() else REPO / "qar_sql" / token))
    where = text[text.index("| package | owns |") : text.index("## Style")]
    for row in re.findall(r"^\| `(qar_sql/\w+/|qar_sql/__init__\.py)` \| (.*) \|$", where, flags=re.M):
        folder, owns = row
        if folder.endswith("/"):
            out += [(f"{folder}{name}", REPO / folder / name) for name in re.findall(r"`(\w+\.py|\w+/)`", owns)]
    top = re.search(r"^\| top level \| (.*) \|$", where, flags=re.M)
    assert top is not None
    # (in parentheses: what a module is about, such as the `qar.toml` that config.py reads)
    modules = re.sub(r"\([^)]*\)", "", top.group(1))
    out += [(name, REPO / "qar_sql" / name) for name in re.findall(r"`(\w+\.(?:py|toml))`", modules)]
    return out


def test_contributing_names_only_files_that_exist():
    paths = _contributing_paths()
    assert len(paths) > 60
    # (../shared/data, the public datasets beside the checkout, may be absent: the tests that read
    # them skip, so a clone elsewhere must pass too)
    missing = sorted(written for written, path in paths if not path.exists() and not written.startswith("../shared"))
    assert not missing, f"CONTRIBUTING.md names files that do not exist: {missing}"


def test_every_package_and_module_of_the_layout_is_in_contributing():
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    named = {written for written, _ in _contributing_paths()}
    for path in sorted((REPO / "qar_sql").glob("*/*.py")):
        if path.name == "__init__.py":
            continue
        rel = path.relative_to(REPO).as_posix()
        assert rel in named or f"`{rel}`" in text, f"CONTRIBUTING.md's 'where things go' does not name {rel}"


def test_contributings_flow_of_data_is_the_import_graph():
    """ "Data flows one way: `cli` → … → `engines`": no package imports one listed above it."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    flow = re.search(r"Data flows one way: (.*?), with", text, flags=re.S)
    assert flow is not None
    levels = [set(re.findall(r"`(\w+)`", step)) for step in re.sub(r"\s+", " ", flow.group(1)).split("→")]
    rank = {f"qar_sql.{name}": i for i, step in enumerate(levels) for name in step}
    assert len(rank) >= 10
    for module, targets in GRAPH.items():
        unit = _unit(module)
        for target in {_unit(t) for t in targets}:
            if unit in rank and target in rank and target != unit:
                assert rank[target] > rank[unit], f"{unit} imports {target}, listed above it in CONTRIBUTING.md"


def test_contributing_has_four_recipes_each_naming_files_that_exist():
    """CONTRIBUTING's "where things go" is four recipes (issue 25) — an engine, a measure or
    command, an output format, a treatment kind — each naming the files a newcomer touches."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    recipes = dict(re.findall(r"^### Recipe: ([^\n]+)\n(.*?)(?=^##)", text, flags=re.M | re.S))
    assert list(recipes) == ["a new engine", "a new measure or command", "a new output format", "a new treatment kind"]
    for name, body in recipes.items():
        named = [t for t in re.findall(r"`([\w./-]+\.(?:py|sql|md))`", body) if "/" in t]
        assert len(named) >= 3, f"the recipe for {name} names {named}"
        missing = [t for t in named if not (REPO / t).exists()]
        assert not missing, f"the recipe for {name} names files that do not exist: {missing}"

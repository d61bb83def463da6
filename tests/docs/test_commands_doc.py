"""The docs keep up with the code: every option of every command is in docs/commands.md (in its
command's section, with its environment variable), every command and option has help text, the
README stays short and its links into docs/ resolve.

No database and no mkdocs needed; ``mkdocs build --strict`` checks the links inside the site.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

import click
import pytest

from qar_sql.cli import main

REPO = Path(__file__).resolve().parents[2]
COMMANDS_MD = REPO / "docs" / "commands.md"
README = REPO / "README.md"
README_MAX_LINES = 250


def root_group() -> click.Group:
    """The ``qar`` click group: ``main`` itself, or the group that the ``main()`` function runs."""
    if isinstance(main, click.Group):
        return main
    groups = [v for v in vars(sys.modules[main.__module__]).values() if isinstance(v, click.Group)]
    roots = [g for g in groups if "audit" in g.commands]
    assert len(roots) == 1, f"cannot find the qar group beside {main!r}: {groups}"
    return roots[0]


def walk(command: click.Command, path: tuple[str, ...] = ("qar",)):
    """(path, command) for the command and every subcommand, depth first, hidden ones left out."""
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            if not sub.hidden:
                yield from walk(sub, (*path, name))


COMMANDS = list(walk(root_group()))
OPTIONS = [
    (path, param)
    for path, command in COMMANDS
    for param in command.params
    if isinstance(param, click.Option) and not param.hidden
]


def long_flag(option: click.Option) -> str:
    flags = [o for o in (*option.opts, *option.secondary_opts) if o.startswith("--")]
    assert flags, f"option {option.opts} has no long flag; give it one (the docs list options by it)"
    return flags[0]


def sections(markdown: str) -> dict[str, str]:
    """Level-2 headings → their text, up to the next level-2 heading."""
    parts = re.split(r"^## (.+)$", markdown, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def slugify(heading: str) -> str:
    """The anchor Python-Markdown's toc extension (mkdocs' default) gives a heading."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    return {slugify(h) for h in re.findall(r"^#{1,6} (.+?)\s*$", text, flags=re.MULTILINE)}


def test_walk_finds_the_commands():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"qar", "qar audit", "qar records", "qar scan"} <= names


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_has_help(path, command):
    assert (command.help or "").strip(), f"`{' '.join(path)}` has no help text; give it a docstring"


@pytest.mark.parametrize("path,option", OPTIONS, ids=[f"{' '.join(p)} {o.opts[-1]}" for p, o in OPTIONS])
def test_every_option_has_help(path, option):
    assert (option.help or "").strip(), f"`{' '.join(path)} {long_flag(option)}` has no help text"


@pytest.mark.parametrize("path,option", OPTIONS, ids=[f"{' '.join(p)} {o.opts[-1]}" for p, o in OPTIONS])
def test_every_option_is_in_commands_md(path, option):
    title = " ".join(path)
    doc = sections(COMMANDS_MD.read_text(encoding="utf-8"))
    assert title in doc, f"docs/commands.md has no section '## {title}'; add one with a table of its options"
    flag = long_flag(option)
    # A row of the section's option table whose first cell names the flag in backticks
    # ("`--p`" does not match "`--pi-u`").
    rows = [line.split("|")[1] for line in doc[title].splitlines() if line.startswith("|") and line.count("|") > 2]
    assert any(f"`{flag}`" in first for first in rows), (
        f"`{title} {flag}` has no row in the option table of its section in docs/commands.md; add one"
    )
    envvars = [option.envvar] if isinstance(option.envvar, str) else list(option.envvar or ())
    for name in envvars:
        assert name in doc[title], f"`{title} {flag}` reads ${name}; name it in the env column of docs/commands.md"


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}); move reference material to docs/"
    )


def test_readme_links_into_docs_resolve():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)\s]+)\)", text)
    assert links, "README.md links to no page under docs/"
    for link in links:
        target, _, anchor = link.partition("#")
        path = REPO / target
        assert path.is_file(), f"README.md links to {target}, which does not exist"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"README.md links to {link}, but {target} has no heading with that anchor"


def _registered() -> set[str]:
    return {name for name, sub in root_group().commands.items() if not sub.hidden}


def test_readme_and_commands_md_list_every_command():
    """README's command table and docs/commands.md's sections name exactly the registered
    commands (issue 31: risk, compare, report and config were missing from the README)."""
    readme = README.read_text(encoding="utf-8")
    table = sections(readme)["Commands"]
    in_readme = set(re.findall(r"^\| \[`qar ([a-z-]+)", table, flags=re.MULTILINE))
    assert in_readme == _registered(), f"README command table: {sorted(in_readme ^ _registered())}"
    titles = {t.split()[1] for t in sections(COMMANDS_MD.read_text(encoding="utf-8")) if t.startswith("qar ")}
    assert titles == _registered(), f"docs/commands.md sections: {sorted(titles ^ _registered())}"


def _rows():
    doc = sections(COMMANDS_MD.read_text(encoding="utf-8"))
    for path, command in COMMANDS:
        title = " ".join(path)
        for line in doc.get(title, "").splitlines():
            if line.startswith("| `-"):
                yield title, command, line


ROWS = list(_rows())


@pytest.mark.parametrize("title,command,line", ROWS, ids=[f"{t} {ln.split('`')[1]}" for t, _, ln in ROWS])
def test_every_option_row_is_well_formed(title, command, line):
    """A row's cells are option | env | default | meaning: its flags in the first cell (and
    every choice, there or in the meaning), exactly the option's variable in the second (issue 31: `--pwm` and
    `--components` rows had the variable in the first cell and an empty second)."""
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
    assert len(cells) == 4, f"{title}: {line}"
    flag = re.match(r"`(-{1,2}[\w-]+)`", cells[0]).group(1)
    option = next((p for p in command.params if flag in (*p.opts, *p.secondary_opts)), None)
    assert option is not None, f"{title} has no option {flag}: {line}"
    assert "QAR_" not in cells[0], f"{title} {flag}: a variable in the option cell: {line}"
    for short in [o for o in option.opts if not o.startswith("--")]:
        assert f"`{short}`" in cells[0], f"{title} {flag}: its short flag {short} is missing: {line}"
    if isinstance(option.type, click.Choice):
        written = f"{cells[0]} {cells[3]}"  # a long list of choices may be in the meaning
        written = written if option.type.case_sensitive else written.lower()
        for choice in option.type.choices:
            choice = str(choice) if option.type.case_sensitive else str(choice).lower()
            assert f"`{choice}`" in written, f"{title} {flag}: the choice {choice} is missing: {line}"
    envvar = option.envvar if isinstance(option.envvar, str) else None
    expected = {f"`{envvar}`"} if envvar else {"", "`QAR_STORE`"}  # --store: the store's variable
    assert cells[1] in expected, f"{title} {flag}: env cell {cells[1]!r}, expected {expected}: {line}"

"""Render SQL from the Jinja templates, dialect first.

``render("class_sizes.sql", dialect, ...)`` uses ``templates/<dialect>/class_sizes.sql`` when it
exists and ``templates/default/class_sizes.sql`` otherwise (dbt's dispatch order). Undefined
template variables are errors, never empty strings. A statement rendered in a dialect that
carries a log (:attr:`Dialect.sql_log`, a session's while it logs) is kept there.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from qar_sql.engines.dialects import Dialect

if TYPE_CHECKING:
    import jinja2


def _find(folder: str) -> Path:
    """A data folder: inside the installed package, or at the top of a source checkout."""
    package = Path(__file__).resolve().parents[1]  # qar_sql/
    for candidate in (package / folder, package.parent / folder):
        if candidate.is_dir():
            return candidate
    raise RuntimeError(f"qar-sql is installed without its {folder}/ folder; reinstall it")


def templates_dir() -> Path:
    return _find("templates")


def migrations_dir() -> Path:
    return _find("migrations")


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    import jinja2  # here, once (the environment is cached): importing this module stays light

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        autoescape=False,
    )


def render(template_name: str, dialect: Dialect, **context) -> str:
    template = environment().select_template([f"{dialect.name}/{template_name}", f"default/{template_name}"])
    sql = template.render(dialect=dialect, q=dialect.quote, **context)
    # Collapse the blank lines Jinja leaves behind, so printed SQL reads well.
    # Split on "\n" only: splitlines() also breaks at U+2028, U+0085 and form feed, which would
    # silently rewrite a quoted name or literal that contained one.
    lines = [line.rstrip() for line in sql.split("\n")]
    sql = "\n".join(line for line in lines if line.strip()) + "\n"
    if dialect.sql_log is not None:  # a session logging its SQL (list.append is atomic: worker threads too)
        dialect.sql_log.append(sql)
    return sql

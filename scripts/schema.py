"""Write qar.toml's JSON Schema, qar_sql/schemas/qar.schema.json, and that of pyproject.toml's
[tool.qar] table, qar_sql/schemas/tool-qar.schema.json, from the parameter definitions
(qar_sql/toml_schema.py); ``--check`` exits 1 when a file is not what they give (the test runs
it). Run it after adding or changing a setting: PYTHONPATH=$PWD python scripts/schema.py"""

from __future__ import annotations

import sys

from qar_sql import toml_schema


def main(argv: list[str]) -> int:
    files = [
        (toml_schema.PATH, toml_schema.render()),
        (toml_schema.TOOL_PATH, toml_schema.render(toml_schema.tool_schema())),
    ]
    if "--check" in argv:
        stale = [path for path, text in files if (path.read_text(encoding="utf-8") if path.exists() else "") != text]
        for path in stale:
            print(f"{path} is not current; run: python scripts/schema.py", file=sys.stderr)
        if stale:
            return 1
        print(f"{', '.join(str(path) for path, _ in files)} are current")
        return 0
    for path, text in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

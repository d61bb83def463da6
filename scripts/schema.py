"""Write qar.toml's JSON Schema, qar_sql/schemas/qar.schema.json, from the parameter definitions
(qar_sql/toml_schema.py); ``--check`` exits 1 when the file is not what they give (the test runs
it). Run it after adding or changing a setting: PYTHONPATH=$PWD python scripts/schema.py"""

from __future__ import annotations

import sys

from qar_sql import toml_schema


def main(argv: list[str]) -> int:
    text = toml_schema.render()
    if "--check" in argv:
        current = toml_schema.PATH.read_text(encoding="utf-8") if toml_schema.PATH.exists() else ""
        if current != text:
            print(f"{toml_schema.PATH} is not current; run: python scripts/schema.py", file=sys.stderr)
            return 1
        print(f"{toml_schema.PATH} is current")
        return 0
    toml_schema.PATH.parent.mkdir(parents=True, exist_ok=True)
    toml_schema.PATH.write_text(text, encoding="utf-8")
    print(f"wrote {toml_schema.PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

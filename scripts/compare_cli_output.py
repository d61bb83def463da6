"""Run the same qar commands in two checkouts and compare their output byte for byte.

    python scripts/compare_cli_output.py OLD_CHECKOUT NEW_CHECKOUT

For refactors that must not change behaviour (the layout change of issue 17 was checked with it).
Each checkout's own `qar_sql` is imported (the command runs with the checkout as working
directory). Wall-clock fields ("seconds" in JSON, "(… s)" in headers) are masked; everything else
must be identical. Uses ../shared/data/arx/adult.csv when present.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

RUN = "import sys; from qar_sql.cli import main; sys.argv[0] = 'qar'; main()"


def commands(demo: str, adult: Path | None, treatments: str) -> list[list[str]]:
    db = [demo, "-t", "population"]
    out = [["audit", *db, "-x", "person_id", "-f", fmt] for fmt in ("text", "json", "markdown")] + [
        ["audit", *db, "-x", "person_id", "-f", "json", "--histograms", "-p", "2"],
        ["sql", *db, "-c", "age,sex,postcode"],
        ["records", *db, "-x", "person_id", "--key", "person_id", "-f", "json", "--top", "20"],
        ["records", *db, "-x", "person_id", "--key", "person_id", "--by", "influence", "-f", "json"],
        ["eliminate", *db, "-x", "person_id", "--key", "person_id", "-f", "json"],
        ["discover", *db, "-x", "person_id", "-f", "json"],
        ["discover", *db, "-x", "person_id"],
        ["whatif", *db, "-x", "person_id", "-T", treatments, "-f", "json"],
        ["whatif", *db, "-x", "person_id", "-T", treatments],
        ["whatif", *db, "-x", "person_id", "-T", treatments, "--emit-sql"],
    ]
    if adult is not None:
        a = [str(adult)]
        out += [
            ["audit", *a, "-f", "json"],
            ["audit", *a],
            ["records", *a, "-f", "json", "--top", "10"],
            ["discover", *a, "-f", "json"],
        ]
    return out


def mask(text: str) -> str:
    text = re.sub(r'"seconds": [0-9.e+-]+', '"seconds": 0', text)
    return re.sub(r"\d+\.\d\d s\)", "… s)", text)


def run(checkout: Path, args: list[str]) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-c", RUN, *args, "--quiet"]
        if args[0] not in ("sql",)
        else [sys.executable, "-c", RUN, *args],
        cwd=checkout,
        capture_output=True,
        text=True,
    )
    return proc.returncode, mask(proc.stdout) + "\n--stderr--\n" + mask(proc.stderr)


def main() -> int:
    old, new = (Path(a).resolve() for a in sys.argv[1:3])
    adult = new.parent / "shared" / "data" / "arx" / "adult.csv"
    with tempfile.TemporaryDirectory() as tmp:
        demo = str(Path(tmp) / "demo.duckdb")
        code, _ = run(old, ["demo", "--path", demo, "--rows", "20000"])
        assert code == 0, "the demo did not run"
        treatments = str(new / "examples" / "treatments.toml")
        differ = 0
        cmds = commands(demo, adult if adult.is_file() else None, treatments)
        for args in cmds:
            a, b = run(old, args), run(new, args)
            same = a == b
            differ += not same
            print(("same   " if same else "DIFFER ") + "qar " + " ".join(args).replace(tmp, "$TMP"))
            if not same:
                print(f"  exit {a[0]} vs {b[0]}\n--- old\n{a[1][:2000]}\n--- new\n{b[1][:2000]}")
        print(f"{len(cmds) - differ} identical, {differ} different")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

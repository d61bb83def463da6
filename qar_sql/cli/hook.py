"""The pre-commit hook (``.pre-commit-hooks.yaml``, id ``qar-scan``): ``qar scan`` on each changed
``qar.toml``. pre-commit passes the hook's ``args`` and then the changed files in one call, and
``qar scan`` takes one config, so this runs it once per file with the same arguments and exits
with the worst code (1: a risk above its fail_above; 2 or 3: a scan could not run).

Run as ``python -m qar_sql.cli.hook [qar scan options] FILE...``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from qar_sql.cli.main import cli


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # The files pre-commit passes come last; an option's value (--fail-above 0.5) is never a
    # qar.toml that exists.
    files = [a for a in argv if Path(a).name == "qar.toml" and Path(a).is_file()]
    options = [a for a in argv if a not in files]
    worst = 0
    for name in files:
        print(f"qar scan {name}", flush=True)
        try:
            cli.main(["scan", name, *options], prog_name="qar", auto_envvar_prefix="QAR")
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        worst = max(worst, code)
    return worst


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

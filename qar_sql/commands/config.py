"""``qar config``: the settings that apply here and where each came from.

The command's shape without a session (it reads no data): ``run(config) → result``, where
``config`` is the file the ``qar`` group found (``--config``, ``$QAR_CONFIG``, or discovery).
"""

from __future__ import annotations

from qar_sql import config_file as qar_config
from qar_sql.config_file import Config
from qar_sql.results import Settings

NAME = "config"


def run(config: Config | None = None) -> Settings:
    """Each setting's value and origin (a ``QAR_`` variable, the file, or the built-in default),
    from ``config`` (default: the one found in the working directory or a parent)."""
    return Settings(tuple(qar_config.resolve(config or qar_config.find())), config)

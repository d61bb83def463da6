"""The one version string: the package, `qar --version`, reports and the results store read it."""

__version__ = "0.1.0"

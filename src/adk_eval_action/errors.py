"""Named errors, each mapped to an exit code at the top of the CLI.

Exit codes follow the project's contract: 0 gate passed, 1 gate failed, 2 usage, config or
infrastructure error.
"""

from __future__ import annotations

from pathlib import Path

EXIT_PASS = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2


class AdkEvalActionError(Exception):
    """Base class of every error this tool raises on purpose; always exit code 2."""

    exit_code = EXIT_USAGE


class ConfigError(AdkEvalActionError):
    """A config file (adk-eval.yaml, an eval config) is unreadable or invalid.

    The message names the file and, where known, the field.
    """

    def __init__(self, path: Path | str | None, message: str, field: str | None = None):
        self.path = str(path) if path is not None else None
        self.field = field
        where = self.path or "<config>"
        if field:
            where += f" (field `{field}`)"
        super().__init__(f"{where}: {message}")


class EvalSetError(AdkEvalActionError):
    """An eval set file cannot be loaded in any accepted shape. The message names the file."""

    def __init__(self, path: Path | str, message: str):
        self.path = str(path)
        super().__init__(f"{path}: {message}")


class ResultsFileError(AdkEvalActionError):
    """A results file (ours or ADK's eval_history) cannot be read."""

    def __init__(self, path: Path | str, message: str):
        self.path = str(path)
        super().__init__(f"{path}: {message}")

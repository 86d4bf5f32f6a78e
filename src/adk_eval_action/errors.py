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


class InternalError(AdkEvalActionError):
    """An unexpected exception, turned into exit 2 ("internal error") at the top: the
    message names the exception and where it was raised (file and line)."""


#: Exit codes of a run stopped by a signal, as shells report them (128 + signal number).
EXIT_SIGINT = 130
EXIT_SIGTERM = 143


class Interrupted(BaseException):  # noqa: N818 - it is a signal, not an error of ours
    """SIGINT or SIGTERM arrived (raised by ``run.signals.interrupt_on_signals``): a
    BaseException so that ``except Exception`` in the evaluation does not swallow it.
    ``exit_code`` is 128 + the signal number (130 SIGINT, 143 SIGTERM)."""

    def __init__(self, signum: int) -> None:
        import signal

        self.signum = signum
        self.exit_code = 128 + signum
        self.name = signal.Signals(signum).name
        super().__init__(f"stopped by {self.name}")


def describe_exception(error: BaseException) -> str:
    """``Type: message (at file:line)`` of an unexpected exception, naming the innermost
    frame of its traceback, so that an "internal error" can be found in the source."""
    import os
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if f"{os.sep}adk_eval_action{os.sep}" in f.filename]
    shown = [f for f in (ours[-1:] + frames[-1:]) if f]
    where = ", ".join(dict.fromkeys(
        f"{Path(f.filename).parent.name}/{Path(f.filename).name}:{f.lineno}" for f in shown))
    return f"{type(error).__name__}: {error}" + (f" (at {where})" if where else "")

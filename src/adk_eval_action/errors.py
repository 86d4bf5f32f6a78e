"""Named errors, each mapped to an exit code at the top of the CLI.

Exit codes follow the project's contract: 0 gate passed, 1 gate failed, 2 usage, config or
infrastructure error.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

EXIT_PASS = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2


class AdkEvalActionError(Exception):
    """Base class of every error this tool raises on purpose; always exit code 2."""

    exit_code = EXIT_USAGE


class ConfigError(AdkEvalActionError):
    """A config file (adk-eval.yaml, an eval config, a comment template, a baseline file)
    is unreadable or invalid.

    The message names the file (``path:line`` when ``line``, from 1, is known) and, where
    known, the field.
    """

    def __init__(self, path: Path | str | None, message: str, field: str | None = None,
                 line: int | None = None):
        self.path = str(path) if path is not None else None
        self.field = field
        self.line = line
        self.detail = message
        where = self.path or "<config>"
        if line is not None and self.path is not None:
            where += f":{line}"
        if field:
            where += f" (field `{field}`)"
        super().__init__(f"{where}: {message}")

    def relative_to(self, root: Path) -> ConfigError:
        """The same error naming its file relative to ``root`` when it lies inside (as
        every other message names a repository file), else unchanged."""
        if self.path is None or not Path(self.path).is_absolute():
            return self
        try:
            shown = Path(self.path).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return self
        return ConfigError(shown, self.detail, self.field, self.line)


class OverwritesBaseline(ConfigError):
    """The run's results path is the baseline file it compares with (the same file once
    links are resolved): the run is refused before it evaluates anything, and its results
    file is not written, so the baseline is left as it was."""


class OutputPathError(ConfigError):
    """A file the command would write is a file it reads (an input), or one another of its
    outputs writes, or a path it cannot write (a folder, a block device, a socket): the
    command is refused before it does any work, naming the option, and writes none of its
    files, so nothing it reads or writes is lost (``run.outputs``)."""


class EvalSetError(AdkEvalActionError):
    """An eval set file cannot be loaded in any accepted shape. The message names the file."""

    def __init__(self, path: Path | str, message: str):
        self.path = str(path)
        super().__init__(f"{path}: {message}")


class ResultsFileError(AdkEvalActionError):
    """A results file (ours or ADK's eval_history) cannot be read. ``detail`` is the
    message without the path."""

    def __init__(self, path: Path | str, message: str):
        self.path = str(path)
        self.detail = message
        super().__init__(f"{path}: {message}")


class OutputError(AdkEvalActionError):
    """A file the run writes (the results file, the comment, a job summary file) could
    not be written; ``str()`` names it and why: ``no space left on device writing X`` for
    a full disk (ENOSPC, and EDQUOT for a quota), else ``cannot write X: <reason>``."""

    def __init__(self, path: Path | str, error: OSError, what: str = "") -> None:
        import errno

        self.path = str(path)
        named = f"{what} {path}" if what else str(path)
        full = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded"}
        if error.errno in full:
            super().__init__(f"{full[error.errno]} writing {named}")
        else:
            super().__init__(f"cannot write {named}: {error.strerror or error}")


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


def error_kind(error: BaseException) -> str:
    """The results file's error kind (``results.model.ErrorKind``) of an exception that
    stopped a run: ``interrupted`` (a signal), ``eval_set`` (an EvalSetError), ``output``
    (an OutputError: a file of the run could not be written), ``internal`` (an
    InternalError, or an exception not raised on purpose: a bug), else ``config``
    (adk-eval.yaml, an option or input, a path)."""
    if isinstance(error, Interrupted):
        return "interrupted"
    if isinstance(error, EvalSetError):
        return "eval_set"
    if isinstance(error, OutputError):
        return "output"
    if isinstance(error, InternalError) or not isinstance(error, AdkEvalActionError):
        return "internal"
    return "config"


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


# Pydantic puts the member of a union or a validator it tried into an error's location
# (``criteria.response_match_score.float``, ``function-after[...]``); the user never wrote
# these (pydantic_core's ``ErrorDetails.loc``).
_TYPE_TAGS = {"float", "int", "str", "bool", "bytes", "none", "dict", "list", "tuple",
              "set", "decimal", "date", "datetime", "json-or-python", "lax-or-strict"}
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def field_location(loc: Sequence[int | str], data: Any = None) -> str:
    """A pydantic error's location (``ErrorDetails.loc``) as the user wrote the field:
    dotted, list items as ``[i]`` (``suites[0].thresholds.response_match_score``, as every
    other message names a field), without the union members and validators pydantic
    adds (:data:`_TYPE_TAGS`, class names such as ``BaseCriterion``,
    ``name[...]``, ``constrained-*``), and in snake_case where the user's ``data`` (the
    validated input, followed along the location) spells its keys so, although the model
    reports its camelCase alias (ADK's models validate by alias: ``userContent``)."""
    return "".join(_steps(loc, data)[0]).removeprefix(".")


def node_at(loc: Sequence[int | str], data: Any) -> Any:
    """The value of ``data`` at a pydantic error's location, followed as
    :func:`field_location` follows it; None where the location leaves ``data``."""
    return _steps(loc, data)[1]


def _steps(loc: Sequence[int | str], data: Any) -> tuple[list[str], Any]:
    """The parts of :func:`field_location` (``.key``, ``[i]``) and the node they lead to."""
    parts: list[str] = []
    node = data
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
            continue
        mapping = node if isinstance(node, dict) else {}
        # A union member is tagged by its class name (``IntermediateData``), which no key
        # of ours or ADK's is spelt like.
        if part not in mapping and (part in _TYPE_TAGS or "[" in part or part[:1].isupper()
                                    or part.startswith("constrained-")):
            continue
        key = part
        if part not in mapping:
            snake = snake_case(part)
            if snake in mapping or not any(_CAMEL.search(str(k)) for k in mapping):
                key = snake
        parts.append(f".{key}")
        node = mapping.get(key)
    return parts, node


def model_keys(model: type[BaseModel]) -> dict[str, str]:
    """Every spelling a pydantic model accepts for its fields (the name, and the alias its
    ``alias_generator`` gives: ADK's models take camelCase) -> the field's name."""
    names: dict[str, str] = {}
    generator = model.model_config.get("alias_generator")
    for field, info in model.model_fields.items():
        names[field] = field
        alias = info.alias or (generator(field) if callable(generator) else None)
        if alias:
            names[alias] = field
    return names


def closest_key(word: str, accepted: Iterable[str], siblings: Iterable[object] = ()) -> str | None:
    """The accepted key ``word`` was most likely meant to be (``difflib``), spelt as the
    user spells keys: camelCase when ``word`` is (``matchTyp`` -> ``matchType``), snake_case
    when it has an underscore (``num_sample`` -> ``num_samples``), else as its ``siblings``
    (the other keys of its mapping) are; None when no key is close.

    ``accepted`` holds both spellings of a field where a model has both (ADK's models take
    a field's name and its camelCase alias), so the suggestion can be pasted into the same
    file without mixing styles."""
    options = [str(k) for k in accepted]
    style = _key_style(word) or next(
        (s for s in (_key_style(str(k)) for k in siblings) if s), None)
    if style == "camel":
        styled = [k for k in options if "_" not in k]
    elif style == "snake":
        styled = [k for k in options if not _CAMEL.search(k)]
    else:
        styled = options
    close = difflib.get_close_matches(word, styled or options, n=1)
    return close[0] if close else None


def snake_case(key: str) -> str:
    """``key`` in snake_case (``matchType`` -> ``match_type``); snake_case unchanged."""
    return _CAMEL.sub(lambda m: "_" + m.group(1).lower(), key)


def _key_style(key: str) -> str | None:
    """``camel``, ``snake`` or None (one lower-case word says neither)."""
    if _CAMEL.search(key):
        return "camel"
    return "snake" if "_" in key.strip("_") else None


def json_problem(error: json.JSONDecodeError) -> str:
    """``not valid JSON: <what> at line L, column C``: json's message with its position
    (its ``msg`` alone can end mid-sentence: ``Unterminated string starting at``)."""
    what = error.msg.removesuffix(" at")
    return f"not valid JSON: {what} at line {error.lineno}, column {error.colno}"

"""The console, through :mod:`logging`: modules log, the entry points choose how lines look.

Every module logs to ``logging.getLogger(__name__)`` (under ``adk_eval_action``):
``log.info(...)`` prints the message, ``log.warning(...)`` prints ``warning: <message>``,
``log.error(...)`` ``error: <message>``. An annotation, a log group or a raw workflow command
is a record with a :class:`WorkflowCommand` in ``extra`` (:func:`annotation`,
:func:`group`, :func:`command`, :func:`mask`).

Two formatters render records, chosen by the entry point with :func:`log_to`:

- :class:`PlainFormatter` (the CLI, a terminal): messages only; annotations print as
  their level's plain line; groups print their title; raw commands print nothing.
- :class:`GitHubFormatter` (the action, the runner's log): workflow commands with their
  message and properties escaped (the runner's ``ActionCommand.cs``,
  https://github.com/actions/runner/blob/main/src/Runner.Common/ActionCommand.cs), and every
  other line made inert for the runner's command parser (:func:`inert`): the one place
  where what is printed from data is escaped for the runner.

Both write control and bidi characters (NUL, ESC, CR, U+202E...) as visible escapes
(:func:`adk_eval_action.text.visible`): an eval id or an agent's answer can neither move
the terminal's cursor, colour or hide text, nor reorder what a reader sees.

A handler writes a whole record (all its lines) in one write under its lock, so
concurrent work cannot interleave half lines.
"""

from __future__ import annotations

import logging
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from adk_eval_action.logscope import diverted
from adk_eval_action.text import shorten, visible, without_surrogates

__all__ = [
    "ROOT_LOGGER",
    "GitHubFormatter",
    "PlainFormatter",
    "WorkflowCommand",
    "annotation",
    "case_title",
    "command",
    "commands_stopped",
    "escape_data",
    "escape_property",
    "group",
    "inert",
    "log_to",
    "mask",
    "workflow_command",
]

#: The logger every module of this package logs under.
ROOT_LOGGER = "adk_eval_action"
#: The runner cuts an annotation's message at 4,096 characters (ExecutionContext.cs).
ANNOTATION_MAX_CHARS = 4000


def escape_data(value: str) -> str:
    """Escape a command's message: ``%``, CR, LF (the runner's ``ActionCommand.cs``,
    https://github.com/actions/runner/blob/main/src/Runner.Common/ActionCommand.cs)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a command property: as data, plus ``:`` and ``,`` (runner ActionCommand.cs)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def workflow_command(name: str, message: str = "", **properties: object) -> str:
    """``::name k=v,...::message`` with escaping; properties that are None are left out."""
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items() if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


@dataclass(frozen=True)
class WorkflowCommand:
    """A workflow command a record stands for (``extra={"github": ...}``): ``name`` is
    ``error``/``warning``/``notice`` (annotations), ``group``/``endgroup``, ``add-mask``,
    ``stop-commands`` or a resume token; ``properties`` are ``file``, ``line``, ``title``
    (None left out)."""

    name: str
    properties: dict[str, Any] = field(default_factory=dict)


def annotation(
    kind: Literal["error", "warning", "notice"] = "error", *, title: str | None = None,
    file: str | None = None, line: int | None = None,
) -> dict[str, Any]:
    """``extra=`` of a log call that the runner shows as an annotation (log the call at
    the matching level). The runner keeps 10 annotations per type per step, so callers
    log the worst first."""
    return {"github": WorkflowCommand(kind, {"file": file, "line": line, "title": title})}


TITLE_SUITE_CHARS = 40
TITLE_WHAT_CHARS = 60


def case_title(suite: str, what: str) -> str:
    """An annotation's title ``suite: what`` (an eval case's id, an error's kind), each
    part cut where it says least (:func:`adk_eval_action.text.shorten`): the runner shows
    the title on one line above the message, and a path-long suite name repeated in every
    title pushed the eval case out of it."""
    return f"{shorten(suite, TITLE_SUITE_CHARS)}: {shorten(what, TITLE_WHAT_CHARS)}"


def command(logger: logging.Logger, name: str, value: str = "") -> None:
    """Log a raw workflow command (``::name::value``); printed only for the runner."""
    logger.info(value, extra={"github": WorkflowCommand(name)})


def mask(logger: logging.Logger, secret: str) -> None:
    """``::add-mask::`` for each line of ``secret``: the runner masks each registered
    string verbatim, so a multi-line value is registered line by line (as the toolkit
    does). Log it before anything could print the value."""
    for part in secret.splitlines():
        if part:
            command(logger, "add-mask", part)


@contextmanager
def group(logger: logging.Logger, title: str) -> Iterator[None]:
    """Fold what is logged inside into one collapsible group of the runner's log."""
    logger.info(title, extra={"github": WorkflowCommand("group")})
    try:
        yield
    finally:
        logger.info("", extra={"github": WorkflowCommand("endgroup")})


def _command_of(record: logging.LogRecord) -> WorkflowCommand | None:
    found = getattr(record, "github", None)
    return found if isinstance(found, WorkflowCommand) else None


class PlainFormatter(logging.Formatter):
    """A record as a terminal shows it: ``warning: ``/``error: `` before warnings and
    errors, the message as is otherwise; a group prints its title.

    ``redact`` (``redaction.Redactor``) replaces known secret values in every line. Each
    line is also made :func:`inert`: the CLI may run in a workflow's ``run:`` step, whose
    output the runner parses for workflow commands too.
    """

    def __init__(self, redact: Callable[[str], str] | None = None) -> None:
        super().__init__()
        self.redact = redact or (lambda text: text)

    def format(self, record: logging.LogRecord) -> str:
        text = self._clean(self._plain(record))
        return "\n".join(inert(x) for x in text.splitlines() or [""])

    def _clean(self, text: str) -> str:
        """``text`` redacted, with lone surrogates replaced and control characters but
        newlines and tabs made visible (after redacting, so a secret is still matched)."""
        return visible(self.redact(without_surrogates(text)).replace("\r\n", "\n"))

    def _plain(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        found = _command_of(record)
        if found is not None and found.name == "group":
            return message
        if record.levelno >= logging.ERROR:
            return f"error: {message}"
        if record.levelno >= logging.WARNING:
            return f"warning: {message}"
        return message


class _Printable(logging.Filter):
    """Drops what only the runner reads (raw commands, group ends) from a plain log."""

    def filter(self, record: logging.LogRecord) -> bool:
        found = _command_of(record)
        return found is None or found.name in ("group", "error", "warning", "notice")


def _no_legacy(text: str) -> str:
    """``##[`` anywhere in a line is a legacy command to the runner (TryParse): broken
    with a zero-width space, in a command's message and properties too."""
    return text.replace("##[", "#\u200b#[")


def inert(line: str) -> str:
    """``line`` as the runner's command parser ignores it: a line that starts with ``::``
    (after blanks) would be read as a workflow command (ActionCommand.TryParseV2) and
    ``##[`` anywhere as a legacy one (TryParse), so a zero-width space goes between the
    two characters. The line looks the same to a reader."""
    if line.lstrip().startswith("::"):
        start = len(line) - len(line.lstrip())
        line = line[:start] + ":\u200b:" + line[start + 2:]
    return _no_legacy(line)


class GitHubFormatter(PlainFormatter):
    """A record as the runner's log takes it: a workflow command for records that are
    one, escaped; every other line through :func:`inert`."""

    def format(self, record: logging.LogRecord) -> str:
        found = _command_of(record)
        if found is None:
            return super().format(record)
        message = without_surrogates(record.getMessage())
        if found.name == "add-mask":  # the one record whose message is the secret itself
            return workflow_command(found.name, message)
        message = self._clean(message)
        if found.name in ("error", "warning", "notice"):
            message = message[:ANNOTATION_MAX_CHARS]
        if found.name == "endgroup":
            return "::endgroup::"
        properties = {k: _no_legacy(self._clean(str(v)))
                      if v is not None else None for k, v in found.properties.items()}
        return workflow_command(found.name, _no_legacy(message), **properties)


@contextmanager
def log_to(
    stream: TextIO, formatter: PlainFormatter, level: int = logging.INFO,
) -> Iterator[None]:
    """Send this package's log to ``stream`` through ``formatter`` while the block runs,
    and keep third-party noise off it; everything is restored on exit (entry points and
    tests only, never a library call).

    Quieted: ADK's experimental-feature warnings (every use of its eval classes warns) and
    ADK's own log below CRITICAL (it logs each failed inference or metric with a full
    traceback; the results keep the reason and this log prints it once). Other libraries'
    errors still reach ``stream`` through the root logger.
    """
    ours = logging.getLogger(ROOT_LOGGER)
    adk = logging.getLogger("google_adk")
    root = logging.getLogger()
    # StreamHandler writes a record and its terminator in one write, under its lock.
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    if not isinstance(formatter, GitHubFormatter):
        handler.addFilter(_Printable())
    # Other libraries' errors: through the same formatter, so their lines (which may quote
    # agent or model text) are inert for the runner and redacted too.
    others = logging.StreamHandler(stream)
    others.setFormatter(formatter)
    others.setLevel(logging.ERROR)
    adk_level = adk.level
    adk.setLevel(logging.CRITICAL)
    root.addHandler(others)
    try:
        with diverted([ours], [handler], level), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]")
            yield
    finally:
        root.removeHandler(others)
        adk.setLevel(adk_level)


@contextmanager
def commands_stopped(log: logging.Logger) -> Iterator[None]:
    """Within the block the runner obeys no workflow command (``::stop-commands::`` with a
    random token, resumed at its end; both written to ``log``): what is printed there
    comes from the repository, an agent or an installer, and may hold lines that look like
    commands (workflow-commands doc, "Stopping and starting workflow commands")."""
    resume = f"adk-eval-{uuid.uuid4().hex}"
    command(log, "stop-commands", resume)
    try:
        yield
    finally:
        command(log, resume)

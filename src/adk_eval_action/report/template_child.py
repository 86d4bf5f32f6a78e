"""The child interpreter that renders a user's template (started by
:func:`adk_eval_action.report.sandbox.render_user_template`, which says why)."""

from __future__ import annotations

import json
import math
import pickle
import resource
import sys
import traceback

from adk_eval_action.report.render import template_environment
from adk_eval_action.report.sandbox import EXIT_TOO_LONG, READY, TEMPLATE_MEMORY_BYTES

__all__ = ["failure_report", "main"]

#: The file name jinja2 gives the frames of a template made ``from_string``.
TEMPLATE_FRAME = "<template>"


def failure_report(error: BaseException) -> str:
    """One JSON line the parent reads (``report.sandbox.template_failure``):
    ``{"error": "Type: message", "line": N or null}``. ``line`` (from 1) is where the
    template failed: a ``TemplateSyntaxError``'s ``lineno``, else the innermost template
    frame of the traceback (jinja2 rewrites its tracebacks so that template code has the
    file name ``<template>`` and the template's line numbers: jinja2.debug)."""
    line = getattr(error, "lineno", None)
    if not isinstance(line, int):
        frames = [f for f in traceback.extract_tb(error.__traceback__)
                  if f.filename == TEMPLATE_FRAME]
        line = frames[-1].lineno if frames else None
    return json.dumps({"error": f"{type(error).__name__}: {error}", "line": line})


def _limit_self(cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (TEMPLATE_MEMORY_BYTES, TEMPLATE_MEMORY_BYTES))
    # RLIMIT_CPU counts from the process's start: the render gets cpu_seconds on top of
    # what start-up and imports used, as its wall limit starts after them too.
    usage = resource.getrusage(resource.RUSAGE_SELF)
    limit = math.ceil(usage.ru_utime + usage.ru_stime) + cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit))


def main() -> None:  # pragma: no cover - runs in the rendering child
    """The rendering child: once imported, writes ``READY`` on stdout; then reads
    ``(source, variables, max_chars, cpu_seconds)`` pickled on stdin, limits its own
    memory and CPU time (``cpu_seconds`` more than it used so far),
    writes the output on stdout; exit 3 when the output passes ``max_chars``, 1 with
    ``Type: message`` (:func:`failure_report`'s JSON line, with the template's line) on
    stderr when the template fails."""
    sys.stdout.buffer.write(READY)
    sys.stdout.buffer.flush()
    source, variables, max_chars, cpu_seconds = pickle.loads(sys.stdin.buffer.read())
    _limit_self(cpu_seconds)
    written = 0
    chunks: list[str] = []
    try:
        for chunk in template_environment().from_string(source).generate(**variables):
            written += len(chunk)
            if written > max_chars:
                sys.exit(EXIT_TOO_LONG)
            chunks.append(chunk)
    except MemoryError:
        sys.stderr.write(f"MemoryError: the template used more than "
                         f"{TEMPLATE_MEMORY_BYTES // 2**20} MiB\n")
        sys.exit(1)
    except Exception as e:  # noqa: BLE001 - any failure of a user's template is theirs to fix
        sys.stderr.write(failure_report(e) + "\n")
        sys.exit(1)
    sys.stdout.buffer.write("".join(chunks).encode("utf-8", "replace"))

"""A user's comment template, rendered with bounded time, memory and output.

A template is repository content: a pull request can change it. jinja2's
``SandboxedEnvironment`` keeps it from reaching Python's internals, but not from
``{{ 'x' * 10**9 }}``, ``{{ 10**(10**9) }}``, ``lipsum(n=10**6)`` or nested
``range(100000)`` loops, each of which ran for minutes and took gigabytes. So a user's
template is rendered once, in a child interpreter (``python -c``, no google-adk imported)
that runs under ``RLIMIT_AS`` (:data:`TEMPLATE_MEMORY_BYTES`) and ``RLIMIT_CPU``, stops
writing past :data:`TEMPLATE_MAX_CHARS` and is ended with its process group after
:data:`TEMPLATE_TIMEOUT_S` seconds of rendering (or when the run is interrupted). Any of
these is a ``ConfigError`` naming the template (exit 2).

The render's limits start when the child is ready: it writes :data:`READY` once its
imports are done (jinja2 and our modules: ~1 s CPU, several seconds of wall time on a
loaded runner), and only then is sent the template. Its start-up has a limit of its own
(:data:`TEMPLATE_STARTUP_TIMEOUT_S`), so a slow machine does not eat the template's time
and fail a template that renders in milliseconds.
"""

from __future__ import annotations

import json
import os
import pickle
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

from adk_eval_action.children import end_process_group
from adk_eval_action.errors import ConfigError

__all__ = [
    "EXIT_TOO_LONG",
    "READY",
    "TEMPLATE_MAX_CHARS",
    "TEMPLATE_MEMORY_BYTES",
    "TEMPLATE_STARTUP_TIMEOUT_S",
    "TEMPLATE_TIMEOUT_S",
    "render_user_template",
    "template_failure",
]

#: Seconds a user's template may take to render (the packaged one takes milliseconds),
#: counted from the child's :data:`READY`; also its CPU seconds after start-up (+2).
TEMPLATE_TIMEOUT_S = 10.0
#: Seconds the child may take to start and import before it is ready (~1 s CPU; generous
#: because a loaded runner's wall time is several times that, and the user's template
#: has not run yet, so only the machine can be slow here).
TEMPLATE_STARTUP_TIMEOUT_S = 120.0
#: Characters a user's template may output (the comment keeps 65,536 of them).
TEMPLATE_MAX_CHARS = 1_000_000
#: Address space of the rendering process.
TEMPLATE_MEMORY_BYTES = 1024 * 1024 * 1024
#: The child's exit code when the output passed TEMPLATE_MAX_CHARS.
EXIT_TOO_LONG = 3
#: The byte the child writes on stdout (before the output) once its imports are done.
READY = b"\x06"


def render_user_template(template: Path, variables: dict[str, Any]) -> str:
    """``template`` (a user's file) rendered with ``variables`` in a bounded child process
    (module docstring).

    Raises:
        ConfigError: the template is unreadable, invalid or fails; or it passes its time,
            memory or output limit (names the template file and the limit).
    """
    from adk_eval_action.files import read_text

    try:
        source = read_text(template)
    except (OSError, ValueError) as e:
        raise ConfigError(template, f"template error: {type(e).__name__}: {e}") from e
    payload = pickle.dumps((source, variables, TEMPLATE_MAX_CHARS, int(TEMPLATE_TIMEOUT_S) + 2))
    process = subprocess.Popen(
        # By name, not imported: the child module imports report.render, which imports this.
        [sys.executable, "-c", "from adk_eval_action.report.template_child import main; main()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    try:
        _wait_until_ready(template, process)
        out, err = process.communicate(payload, timeout=TEMPLATE_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        raise ConfigError(template, f"template error: rendering took longer than "
                          f"{TEMPLATE_TIMEOUT_S:g} s (the limit)") from e
    finally:
        end_process_group(process, grace=1.0)
    if process.returncode == 0:
        return out.decode("utf-8", "replace")
    said = err.decode("utf-8", "replace").strip().splitlines()
    if process.returncode == EXIT_TOO_LONG:
        reason = f"its output passed {TEMPLATE_MAX_CHARS:,} characters (the limit)"
    elif process.returncode < 0 or not said:
        reason = (f"rendering was stopped (signal {-process.returncode}): it passed its "
                  f"CPU time or memory limit ({TEMPLATE_MEMORY_BYTES // 2**20} MiB)")
    else:
        raise template_failure(template, said[-1])
    raise ConfigError(template, f"template error: {reason}")


def template_failure(template: Path, report: str) -> ConfigError:
    """The error of a template that failed in the child, from the last line it wrote on
    stderr: ``template_child.failure_report``'s JSON (the error and the template's line),
    or any other text as it is (an interpreter that failed before the render). Messages
    are cut at 500 characters."""
    try:
        said = json.loads(report)
        reason, line = str(said["error"]), said.get("line")
    except (ValueError, TypeError, KeyError, AttributeError):
        reason, line = report, None
    return ConfigError(template, f"template error: {reason[:500]}",
                       line=line if isinstance(line, int) and line > 0 else None)


def _wait_until_ready(template: Path, process: subprocess.Popen[bytes]) -> None:
    """Returns once the child wrote :data:`READY` or ended (its exit code and stderr then
    say why, read by the caller's ``communicate``).

    Raises:
        ConfigError: the child was not ready within :data:`TEMPLATE_STARTUP_TIMEOUT_S`.
    """
    assert process.stdout is not None
    # os.read on the descriptor, not the buffered file: communicate() reads the descriptor
    # too, so nothing may wait in a Python buffer. The child sends nothing else before it
    # has the payload, so this reads exactly READY (or b"" if it ended).
    ready, _, _ = select.select([process.stdout], [], [], TEMPLATE_STARTUP_TIMEOUT_S)
    if not ready:
        raise ConfigError(template, f"template error: the rendering process did not start "
                          f"within {TEMPLATE_STARTUP_TIMEOUT_S:g} s (the machine is too slow)")
    os.read(process.stdout.fileno(), len(READY))

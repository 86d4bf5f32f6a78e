"""A user's comment template, rendered with bounded time, memory and output.

A template is repository content: a pull request can change it. jinja2's
``SandboxedEnvironment`` keeps it from reaching Python's internals, but not from
``{{ 'x' * 10**9 }}``, ``{{ 10**(10**9) }}``, ``lipsum(n=10**6)`` or nested
``range(100000)`` loops, each of which ran for minutes and took gigabytes. So a user's
template is rendered once, in a child interpreter (``python -c``, no google-adk imported)
that runs under ``RLIMIT_AS`` (:data:`TEMPLATE_MEMORY_BYTES`) and ``RLIMIT_CPU``, stops
writing past :data:`TEMPLATE_MAX_CHARS` and is ended with its process group after
:data:`TEMPLATE_TIMEOUT_S` seconds (or when the run is interrupted). Any of these is a
``ConfigError`` naming the template (exit 2).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

from adk_eval_action.children import end_process_group
from adk_eval_action.errors import ConfigError

__all__ = [
    "EXIT_TOO_LONG",
    "TEMPLATE_MAX_CHARS",
    "TEMPLATE_MEMORY_BYTES",
    "TEMPLATE_TIMEOUT_S",
    "render_user_template",
]

#: Seconds a user's template may take to render (the packaged one takes milliseconds).
TEMPLATE_TIMEOUT_S = 10.0
#: Characters a user's template may output (the comment keeps 65,536 of them).
TEMPLATE_MAX_CHARS = 1_000_000
#: Address space of the rendering process.
TEMPLATE_MEMORY_BYTES = 1024 * 1024 * 1024
#: The child's exit code when the output passed TEMPLATE_MAX_CHARS.
EXIT_TOO_LONG = 3


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
        reason = said[-1][:500]
    raise ConfigError(template, f"template error: {reason}")

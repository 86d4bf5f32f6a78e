"""The runner's file commands: step outputs (``GITHUB_OUTPUT``) and the job summary
(``GITHUB_STEP_SUMMARY``), as GitHub's "Workflow commands for GitHub Actions" gives them
(https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands)
and actions/toolkit writes them
(https://github.com/actions/toolkit/blob/main/packages/core/src/file-command.ts). Each is
written on its own (:func:`write_runner_file`): one that cannot be written is a warning
naming it, and the others are still written; a write that fails is undone, so no cut
block is left for the runner to parse."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

from adk_eval_action.errors import OutputError
from adk_eval_action.github.logs import annotation
from adk_eval_action.text import fit, without_surrogates

__all__ = ["STEP_SUMMARY_MAX_BYTES", "append_job_summary", "write_outputs",
           "write_runner_file"]

log = logging.getLogger(__name__)

#: The runner refuses to upload a step summary above 1 MiB (``AttachmentSizeLimit``;
#: "Adding a job summary" in
#: https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands).
STEP_SUMMARY_MAX_BYTES = 1024 * 1024
_SUMMARY_NOTE = (
    "\n\n> **Note:** the summary was cut to fit GitHub's 1 MiB step summary limit; "
    "the results file has everything.\n"
)


def write_outputs(path: Path, outputs: Mapping[str, str]) -> None:
    """Append step outputs to the ``GITHUB_OUTPUT`` file, each as a multiline-safe block.

    Format ``name<<DELIM\\nvalue\\nDELIM\\n`` with a random ``ghadelimiter_<uuid>`` that is
    checked not to occur in the value, as actions/toolkit's file-command.ts does (GitHub's
    workflow commands page, "Multiline strings").

    Raises:
        ValueError: a bad output name.
        OSError: the file cannot be written.
    """
    chunks = []
    for name, value in outputs.items():
        if not name or "\n" in name or "<<" in name or "=" in name:
            raise ValueError(f"invalid output name {name!r}")
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        while delimiter in value or delimiter in name:  # practically never
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
        chunks.append(f"{name}<<{delimiter}\n{without_surrogates(value)}\n{delimiter}\n")
    with _undone_on_error(path), path.open("a", encoding="utf-8", newline="\n") as handle:
        handle.write("".join(chunks))


def append_job_summary(
    path: Path, markdown: str, limit_bytes: int = STEP_SUMMARY_MAX_BYTES,
) -> bool:
    """Append markdown to the ``GITHUB_STEP_SUMMARY`` file without passing its 1 MiB limit.

    Above 1 MiB the runner drops the whole summary (workflow commands, "Step isolation and
    limits"; the runner's ``AttachmentSizeLimit``), so what would not fit is
    cut at a line boundary with a note (``text.fit``). Returns True when everything fitted.

    Raises:
        OSError: the file cannot be written.
    """
    used = path.stat().st_size if path.exists() else 0
    text = without_surrogates(markdown if markdown.endswith("\n") else markdown + "\n")
    room = max(0, limit_bytes - used)
    data = fit(text, room, _SUMMARY_NOTE, unit="bytes").encode("utf-8")
    with _undone_on_error(path), path.open("ab") as handle:
        handle.write(data)
    return len(data) == len(text.encode("utf-8"))


@contextmanager
def _undone_on_error(path: Path) -> Iterator[None]:
    """An append to ``path`` that fails (a full disk) is cut back to the size before it,
    where the file allows it (not a device such as ``/dev/full``)."""
    try:
        size = path.stat().st_size if path.is_file() else None
    except OSError:
        size = None
    try:
        yield
    except OSError:
        if size is not None:
            with suppress(OSError):
                os.truncate(path, size)
        raise


def write_runner_file(variable: str, path: Path | None, write: Callable[[Path], object]) -> bool:
    """``write(path)`` for the runner file ``variable`` names (``GITHUB_OUTPUT``,
    ``GITHUB_STEP_SUMMARY``); None: not set, nothing written. One that cannot be written (a
    folder, ``/dev/full``, a full disk) is a warning annotation naming the variable, the
    path and why, and the run goes on: the exit code stays the gate's. Returns whether it
    was written."""
    if path is None:
        return False
    try:
        write(path)
    except OSError as error:
        log.warning("%s; the run's other files are still written",
                    OutputError(f"{variable}={path}", error),
                    extra=annotation("warning", title="adk-eval-action"))
        return False
    return True

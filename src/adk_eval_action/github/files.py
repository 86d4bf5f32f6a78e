"""The runner's file commands: step outputs (``GITHUB_OUTPUT``) and the job summary
(``GITHUB_STEP_SUMMARY``), as GitHub's "Workflow commands for GitHub Actions" gives them
(https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands)
and actions/toolkit writes them
(https://github.com/actions/toolkit/blob/main/packages/core/src/file-command.ts)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path

from adk_eval_action.text import fit, without_surrogates

__all__ = ["STEP_SUMMARY_MAX_BYTES", "append_job_summary", "write_outputs"]

#: The runner refuses to upload a step summary above 1 MiB (``AttachmentSizeLimit``, §2).
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
    with path.open("a", encoding="utf-8", newline="\n") as handle:
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
    with path.open("ab") as handle:
        handle.write(data)
    return len(data) == len(text.encode("utf-8"))

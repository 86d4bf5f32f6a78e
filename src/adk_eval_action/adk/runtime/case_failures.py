"""Why a case run produced no scores: the model could not be reached, the credentials were
refused, the agent's own code raised, or ADK failed.

ADK's ``LocalEvalService`` catches every exception of a case's inference and keeps only its
text (``InferenceResult.error_message``); the exception itself is in the log record ADK writes
("Inference failed for eval case `%s` ...", ``exc_info=True``,
google.adk.evaluation.local_eval_service). :func:`capture_inference_failures` routes that
record to the :class:`FailureSlot` of the case run being inferred (a context variable each
run sets with :func:`failure_slot`; the tasks ADK spawns inherit it) and keeps ADK's
traceback off the console. :func:`classify_inference_failure` then decides what the run is:

* a :class:`ModelCallError` anywhere in the exception's chain: an error of kind ``model`` or
  ``credentials`` (infrastructure, never a score), or ``agent`` when the API does not know
  the agent's model (:attr:`ModelCallError.error_kind`);
* a credentials fault anywhere in the chain (:func:`classify_fault`: google.auth's
  ``RefreshError`` of expired or revoked credentials, also raised through a model class or
  a tool in the repository): an error of kind ``credentials`` naming what to refresh;
* an exception raised in the repository's own code (the agent, its tools, its callbacks):
  a failure of that case, with file and line (that is the agent's behaviour);
* what the model or the agent did that google-adk refused (a transfer to an agent that is
  not in the tree, a call of a tool the agent does not have) or a tool's own code that
  raised outside the repository (:mod:`.behaviour`): a failure of that case too, with
  google-adk's words or the tool's file and line;
* an eval case field google-adk refused when the case ran (an empty
  ``session_input.app_name``): an error of kind ``eval_set`` naming the field;
* anything else: an error of kind ``inference`` (ADK could not run the case).
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from adk_eval_action.adk.runtime.behaviour import (
    eval_set_refusal,
    exception_chain,
    model_refusal,
    tool_frame,
)
from adk_eval_action.adk.runtime.model_faults import ModelCallError, classify_fault
from adk_eval_action.adk.runtime.user_exits import described
from adk_eval_action.logscope import diverted
from adk_eval_action.results.model import CaseStatus

INFERENCE_LOGGER = "google_adk.google.adk.evaluation.local_eval_service"
"""The logger ADK reports a failed inference on, with the exception (``google_adk.`` +
module)."""


@dataclass
class FailureSlot:
    """Where the exception of one case run's failed inference lands (None until one)."""

    error: BaseException | None = None


_CURRENT_SLOT: contextvars.ContextVar[FailureSlot | None] = contextvars.ContextVar(
    "adk_eval_action_failure_slot", default=None
)


class _InferenceFailureHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        slot = _CURRENT_SLOT.get()
        if slot is not None and record.exc_info and record.exc_info[1] is not None:
            slot.error = slot.error or record.exc_info[1]


@contextmanager
def capture_inference_failures() -> Iterator[None]:
    """Within the block, the inference failures ADK logs go to the slot of the case run
    that failed, not to the console; the logger's handlers, level and propagation are
    restored on exit."""
    # The console quiets ADK's loggers (github.logs.log_to); this one must still emit.
    with diverted([logging.getLogger(INFERENCE_LOGGER)],
                  [_InferenceFailureHandler(level=logging.ERROR)], logging.ERROR):
        yield


@contextmanager
def failure_slot() -> Iterator[FailureSlot]:
    """A slot for the inference failure of the case run started inside the block."""
    slot = FailureSlot()
    token = _CURRENT_SLOT.set(slot)
    try:
        yield slot
    finally:
        _CURRENT_SLOT.reset(token)


BEHAVIOUR_PREFIXES = ("the agent raised ", "a tool raised ", "the model ")
"""How the error of a case run that failed for what the agent or the model did begins (the
run is ``failed``, never ``error``: :func:`classify_inference_failure`)."""


class CaseRunFailure(BaseModel):
    """What a failed inference makes of its case run.

    Attributes:
        status: ``error`` (no scores: infrastructure) or ``failed`` (the agent's code raised).
        kind: The error kind (``model``, ``credentials``, ``agent``, ``inference``); None for
            a failure.
        message: For people: what happened and, for the agent's code, where.
        cause: The model fault's short cause (``503 UNAVAILABLE``), for the run's summary.
    """

    status: CaseStatus
    kind: str | None
    message: str
    cause: str | None = None
    #: Where the agent's own code raised (repository-relative POSIX path, line from 1).
    raised_at: tuple[str, int] | None = None


def _user_file(filename: str, root: Path) -> bool:
    """A file under ``root`` that is not installed code (a virtualenv inside the repository
    holds google-adk's own files)."""
    installed = ("site-packages", "dist-packages")
    return (
        filename.startswith(str(root))
        and not any(part in installed for part in Path(filename).parts)
        and not filename.startswith((sys.prefix, sys.base_prefix))
    )


def innermost_user_frame(error: BaseException, root: Path) -> traceback.FrameSummary | None:
    """The innermost traceback frame of ``error`` or its causes in the repository's own code
    (under ``root``, not installed packages), or None."""
    inside: list[traceback.FrameSummary] = []
    for link in exception_chain(error):
        frames = traceback.extract_tb(link.__traceback__)
        inside = [f for f in frames if _user_file(f.filename, root)] or inside
    return inside[-1] if inside else None


def _is_os_module(filename: str) -> bool:
    """Whether a frame's file is the ``os`` module (CPython names a frozen module's frames
    ``<frozen os>``)."""
    return filename == "<frozen os>" or Path(filename).resolve() == Path(os.__file__).resolve()


def missing_variable(error: BaseException) -> str | None:
    """The name of the environment variable whose reading raised ``error``: a ``KeyError``
    raised by ``os.environ[...]`` (its innermost frame is ``os``'s mapping), else None."""
    for link in exception_chain(error):
        frames = traceback.extract_tb(link.__traceback__)
        if (isinstance(link, KeyError) and frames and link.args
                and _is_os_module(frames[-1].filename) and frames[-1].name == "__getitem__"):
            return str(link.args[0])
    return None


def classify_inference_failure(
    error: BaseException | None, message: str, repo_root: Path
) -> CaseRunFailure:
    """Decides what a failed inference is (module docstring).

    Args:
        error: The exception ADK logged for the case run (None when it was not seen).
        message: ADK's ``error_message`` of the inference.
        repo_root: The repository root: code under it (not installed packages) is the user's.
    """
    for link in exception_chain(error) if error is not None else ():
        if isinstance(link, ModelCallError):
            return CaseRunFailure(
                status=CaseStatus.ERROR,
                kind=link.error_kind,
                message=str(link),
                cause=link.cause,
            )
    chain = exception_chain(error) if error is not None else iter(())
    fault = next((f for f in map(classify_fault, chain) if f), None)
    if fault is not None and fault.kind == "credentials":
        # Before the agent's own frames: credentials that fail inside a model class or a
        # tool of the repository (google.auth's RefreshError) are still credentials.
        return CaseRunFailure(
            status=CaseStatus.ERROR, kind="credentials", message=message, cause=fault.summary,
        )
    root = repo_root.resolve()
    frame = innermost_user_frame(error, root) if error is not None else None
    if frame is not None and error is not None:
        where = Path(frame.filename).resolve().relative_to(root).as_posix()
        unset = missing_variable(error)
        return CaseRunFailure(
            status=CaseStatus.FAILED,
            kind=None,
            message=f"the agent raised {described(error)} (at {where}:{frame.lineno})"
            + (f": the environment variable `{unset}` is not set" if unset else ""),
            raised_at=(where, frame.lineno or 0),
        )
    return _behaviour(error) or CaseRunFailure(
        status=CaseStatus.ERROR, kind="inference", message=f"inference failed: {message}"
    )


def _behaviour(error: BaseException | None) -> CaseRunFailure | None:
    """What the model or the agent did, or an eval case field google-adk refused
    (:mod:`.behaviour`); None: neither."""
    if error is None:
        return None
    refused = model_refusal(error)
    if refused is not None:
        return CaseRunFailure(status=CaseStatus.FAILED, kind=None, message=refused)
    frame = tool_frame(error)
    if frame is not None:
        where = f"{Path(frame.filename).name}:{frame.lineno}, outside the repository"
        return CaseRunFailure(status=CaseStatus.FAILED, kind=None,
                              message=f"a tool raised {described(error)} (at {where})")
    field = eval_set_refusal(error)
    if field is not None:
        return CaseRunFailure(status=CaseStatus.ERROR, kind="eval_set", message=field)
    return None

"""Exceptions of a case run that say what the model or the agent did, not that something
failed around it: the case then fails with the exception in its evidence (exit 1), as it
does when the agent's own code raises (:mod:`.case_failures`); or that an eval case field
is one google-adk refuses when the case runs (an ``eval_set`` error naming the field).

* google-adk's refusals of what the model asked for (:data:`MODEL_REFUSALS`): a transfer to
  an agent that is not in the agent tree (google.adk.workflow._dynamic_node_scheduler in
  2.x: ``Transfer target agent 'x' not found.``, ``Cannot transfer from 'a' to unrelated
  agent 'x'``; google.adk.flows.llm_flows.base_llm_flow in 1.x: ``Agent x not found in the
  agent tree.``), a call of a tool the agent does not have (``Tool 'x' not found.``:
  google.adk.flows.llm_flows.functions in 1.x, flows/llm_flows/tools/_caller in 2.x);
* a tool's own code that raised (:func:`tool_frame`): a frame of google-adk's tool calling
  (its ``tools`` package, ``flows/llm_flows/functions.py`` or ``flows/llm_flows/tools/``)
  above an innermost frame outside google-adk, e.g. a tool of an installed package. A
  network, operating-system or timeout error (:func:`is_infrastructure`) is not the tool's
  behaviour: the run stays incomplete;
* google-adk's run-time refusals of an eval case field (:data:`EVAL_SET_REFUSALS`): an
  empty ``session_input.app_name`` (google.adk.runners.Runner, 2.x and 1.x words), when
  the agent module defines no ``app`` to take the name from. The eval set loader finds
  it before any model call (adk.files.evalsets.refused_fields); this names it should one
  get through.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Iterator

__all__ = ["EVAL_SET_REFUSALS", "MODEL_REFUSALS", "eval_set_refusal", "exception_chain",
           "is_infrastructure", "model_refusal", "tool_frame"]

MODEL_REFUSALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Transfer target agent '(?P<name>.*?)' not found"),
     "the model transferred to agent `{name}`, which is not in the agent tree"),
    (re.compile(r"Cannot transfer from '(?P<source>.*?)' to unrelated agent '(?P<name>.*?)'"),
     "the model transferred from `{source}` to agent `{name}`, which it may not transfer to"),
    (re.compile(r"^Agent (?P<name>.*?) not found in the agent tree"),
     "the model transferred to agent `{name}`, which is not in the agent tree"),
    (re.compile(r"^Tool '(?P<name>.*?)' not found\."),
     "the model called tool `{name}`, which the agent does not have"),
)
"""google-adk's messages for a model's call it cannot carry out, and what the case's
evidence says of each (the regex's groups filled in)."""

EVAL_SET_REFUSALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"app_name is required when agent is provided without app"
                r"|Either app or both app_name and agent must be provided"),
     "the eval case's `session_input.app_name` is empty, which google-adk refuses when the "
     "case runs; give the app's name (`adk web` writes the agent folder's name)"),
)
"""google-adk's run-time refusals of an eval case's fields, and what the error says."""

_TOOL_CALLING = ("google/adk/tools/", "google/adk/flows/llm_flows/functions.py",
                 "google/adk/flows/llm_flows/tools/")
_ADK = "google/adk/"
_INFRASTRUCTURE_MODULES = ("httpx", "httpcore", "aiohttp", "urllib3", "requests", "grpc",
                           "google.api_core")


def exception_chain(error: BaseException) -> Iterator[BaseException]:
    """``error``, then the exceptions it was raised from or during, each once."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0]


def _said(table: tuple[tuple[re.Pattern[str], str], ...], error: BaseException) -> str | None:
    for link in exception_chain(error):
        text = _first_line(link)
        for pattern, said in table:
            found = pattern.search(text)
            if found:
                return f"{said.format(**found.groupdict())} (google-adk: {text})"
    return None


def model_refusal(error: BaseException) -> str | None:
    """What the model asked for that google-adk refused (:data:`MODEL_REFUSALS`), with
    google-adk's own words, e.g. ``the model transferred to agent `billing`, which is not
    in the agent tree (google-adk: Transfer target agent 'billing' not found.)``; None
    when ``error`` (or an exception it was raised from) is none of them."""
    return _said(MODEL_REFUSALS, error)


def eval_set_refusal(error: BaseException) -> str | None:
    """The eval case field google-adk refused when the case ran (:data:`EVAL_SET_REFUSALS`),
    with its own words; None when ``error`` is not such a refusal."""
    return _said(EVAL_SET_REFUSALS, error)


def is_infrastructure(error: BaseException) -> bool:
    """Whether ``error`` is a network, operating-system or timeout error (``OSError``,
    ``TimeoutError``, or an exception of an HTTP or RPC client library): something around
    the agent failed, not its behaviour."""
    if isinstance(error, (OSError, TimeoutError)):
        return True
    module = type(error).__module__ or ""
    return module.split(".")[0] in _INFRASTRUCTURE_MODULES or module.startswith(
        _INFRASTRUCTURE_MODULES)


def tool_frame(error: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of a tool's own code that raised ``error`` (or an exception it
    was raised from) while google-adk called the tool: a frame outside google-adk below a
    frame of google-adk's tool calling; None otherwise, and for infrastructure errors
    (:func:`is_infrastructure`)."""
    for link in exception_chain(error):
        if is_infrastructure(link):
            return None
        frames = traceback.extract_tb(link.__traceback__)
        paths = [f.filename.replace("\\", "/") for f in frames]
        calling = [i for i, p in enumerate(paths) if any(t in p for t in _TOOL_CALLING)]
        if calling and _ADK not in paths[-1] and "/adk_eval_action/" not in paths[-1]:
            return frames[-1]
    return None

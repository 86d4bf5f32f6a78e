"""Each agent's details once per suite: the results file keeps every distinct ADK
``AgentDetails`` (an agent's name, instructions and tool declarations) in its suite's
``agent_details`` table, and each recorded invocation refers to them by key.

google-adk records ``app_details`` on every invocation it evaluates
(``google.adk.evaluation.eval_case.Invocation.app_details``: an ``AppDetails`` whose
``agent_details`` maps each agent's name to its ``AgentDetails``), and its rubric-based
judges read the tool declarations from there (``rubric_based_tool_use_quality_v1``,
``rubric_based_final_response_quality_v1``, ``hallucinations_v1``). Stored in every
invocation, one agent's instruction and tool declarations were most of a results file:
23 KB per invocation for an 11 KB instruction. Here an invocation's
``app_details.agent_details`` maps each agent's name to the key of its details in the
table instead (a str where ADK has an object); :func:`expanded` puts them back for ADK
(re-scoring a baseline, adk.evaluate.rescore). An invocation whose details are objects (a file of
``schema_version`` 1, an ADK eval_history file) is read as it is.

The key is a hash of the details' JSON, so the same details get the same key in every
file: the tables of two records of one suite (shards, adaptive repeats) merge by union.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from adk_eval_action.results.model import RunResults, SuiteRecord

__all__ = ["details_key", "expanded", "share_details", "share_suite", "shared_results"]

Invocation = dict[str, Any]
"""An ADK ``Invocation`` as the results file keeps it (JSON, snake_case)."""


def details_key(details: Mapping[str, Any]) -> str:
    """The key of one agent's details: the first 16 hex digits of the SHA-256 of their
    JSON with sorted keys (64 bits: a collision among one suite's few agents is not a
    concern)."""
    text = json.dumps(details, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def share_details(invocations: Iterable[Invocation] | None, table: dict[str, Any]) -> None:
    """Moves each agent's details of ``invocations`` into ``table`` (key -> details, added
    once) and leaves its key in the invocation, in place. Details already shared (a str)
    and invocations without ``app_details`` are left as they are."""
    for invocation in invocations or ():
        app = invocation.get("app_details")
        agents = app.get("agent_details") if isinstance(app, dict) else None
        if not isinstance(agents, dict):
            continue
        for name, details in agents.items():
            if isinstance(details, dict):
                key = details_key(details)
                table.setdefault(key, details)
                agents[name] = key


def share_suite(suite: SuiteRecord) -> None:
    """:func:`share_details` for every expected and actual invocation of ``suite``, into
    its ``agent_details`` table, in place."""
    for eval_set in suite.eval_sets:
        for case in eval_set.eval_cases:
            share_details(case.expected_invocations, suite.agent_details)
            for run in case.runs:
                share_details(run.actual_invocations, suite.agent_details)


def shared_results(results: RunResults) -> RunResults:
    """``results`` (read from a file of ``schema_version`` 1, or ADK's eval_history) with
    every suite's agent details shared (:func:`share_suite`), in place; returned."""
    for suite in results.suites:
        share_suite(suite)
    return results


def expanded(invocation: Invocation, table: Mapping[str, Any]) -> Invocation:
    """A copy of ``invocation`` with each agent's details in place of its key, as ADK
    recorded it (the rest is shared with ``invocation``, not copied). A key the table does
    not hold stays a str, which ADK's ``Invocation`` model refuses (a broken file)."""
    app = invocation.get("app_details")
    agents = app.get("agent_details") if isinstance(app, dict) else None
    if not isinstance(app, dict) or not isinstance(agents, dict):
        return invocation
    restored = {name: table.get(d, d) if isinstance(d, str) else d for name, d in agents.items()}
    return {**invocation, "app_details": {**app, "agent_details": restored}}

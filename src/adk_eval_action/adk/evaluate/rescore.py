"""Re-scoring a baseline under the head's eval config, without running any agent.

When a pull request changes only the eval config of a suite (a new metric, a new rubric,
another judge or threshold) and none of its eval sets, the baseline's recorded actual
invocations are evaluated again with google-adk's ``LocalEvalService.evaluate`` under the
head's eval config, so baseline and head are scored by the same rules (docs/baselines.md,
"Re-scoring instead of re-running"). The invocations are exactly what ADK's evaluators saw
the first time: the ``Invocation`` dumps kept in the results file, with their
``app_details`` (tool declarations for rubric judges: each agent's details, kept once per
suite, put back), intermediate data, usage metadata and durations.

Both go through the one harness (:mod:`adk_eval_action.adk.evaluate.harness`): the suite's eval
config and eval sets load and get the rubric rules as in a head run (:mod:`.prepare`), the
agent is imported (not run) so custom metric modules resolve as in the head run, judge
failures are recorded the same way, and the results convert with ``run_record_from_adk``.

Re-scoring costs judge calls for LLM-judged metrics, but no agent calls.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from google.adk.evaluation.eval_case import Invocation
from pydantic import ValidationError

from adk_eval_action.adk.evaluate.engine import infer_directions
from adk_eval_action.adk.evaluate.harness import SuiteHarness, bounded, evaluation_scope
from adk_eval_action.adk.files.evalconfig import LoadedEvalConfig, effective_eval_config
from adk_eval_action.adk.files.prepare import load_suite_inputs
from adk_eval_action.adk.runtime.agent import AgentLoadError, LoadedAgent, load_agent
from adk_eval_action.adk.runtime.model_calls import ModelCalls
from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.project.discovery import Suite
from adk_eval_action.results.agentdetails import expanded
from adk_eval_action.results.model import CaseStatus, EvalCaseRecord, RunResults, SuiteRecord

log = logging.getLogger(__name__)


class RescoreError(AdkEvalActionError):
    """A suite's baseline cannot be re-scored (its eval config or eval sets do not load)."""


def rescore_reason(baseline: SuiteRecord, head: SuiteRecord) -> str | None:
    """Why ``baseline`` should be re-scored under ``head``'s eval config, or None.

    Yes when the eval config differs (content hash, effective config, or judge models) and
    every eval set of the head is in the baseline with the same content hash, and at least
    one baseline run kept its actual invocations.
    """
    config_changed = (
        baseline.eval_config_hash != head.eval_config_hash
        or effective_eval_config(baseline.eval_config) != effective_eval_config(head.eval_config)
        or baseline.judge_models != head.judge_models
    )
    if not config_changed or not head.eval_sets:
        return None
    base_hashes = {s.eval_set_id: s.content_hash for s in baseline.eval_sets}
    for eval_set in head.eval_sets:
        if not eval_set.content_hash or base_hashes.get(eval_set.eval_set_id) != (
            eval_set.content_hash
        ):
            return None
    if not any(
        run.actual_invocations for s in baseline.eval_sets for c in s.eval_cases for run in c.runs
    ):
        return None
    return "the eval config changed and the eval sets did not"


def _invocations(recorded: list[dict[str, Any]], details: dict[str, Any]) -> list[Invocation]:
    """Recorded dumps as ADK invocations, each agent's details (``details``: the suite's
    ``agent_details``) back in their ``app_details`` (the tool declarations rubric judges
    read). Rubrics are dropped: ADK copied the case's and expected invocation's rubrics
    onto them, and copies them again (from the head's eval set) when it evaluates, refusing
    duplicates."""
    return [Invocation.model_validate({**expanded(inv, details), "rubrics": None})
            for inv in recorded]


async def _rescore_run(
    harness: SuiteHarness,
    config: LoadedEvalConfig,
    record: SuiteRecord,
    eval_set_id: str,
    case: EvalCaseRecord,
    index: int,
) -> None:
    """Re-scores run ``index`` of ``case`` (of ``record``) in place from its recorded
    invocations."""
    run = case.runs[index]
    try:
        invocations = _invocations(run.actual_invocations or [], record.agent_details)
    except ValidationError as e:
        message = f"recorded invocations could not be re-scored: {e.errors()[0]['msg']}"
        case.runs[index] = run.model_copy(
            update={"status": CaseStatus.ERROR, "metrics": [], "error": message}
        )
        return
    inference = harness.recorded_inference(eval_set_id, case.eval_id, invocations,
                                           run.session_id)
    evaluation = await harness.evaluate(inference)
    if evaluation.result is None:
        case.runs[index] = run.model_copy(
            update={
                "status": CaseStatus.ERROR,
                "metrics": [],
                "error": f"re-score failed: {evaluation.error}",
            }
        )
        return
    rescored = evaluation.run_record(run.run, config.metric_meta)
    # Keep the invocations as recorded (with ADK's rubric copies), not the re-copied ones.
    rescored.actual_invocations = run.actual_invocations
    rescored.session_id = run.session_id
    case.runs[index] = rescored


async def rescore_suite(
    suite: Suite,
    head: SuiteRecord,
    baseline: SuiteRecord,
    *,
    parallelism: int,
    repo_root: Path,
    calls: ModelCalls | None = None,
) -> SuiteRecord:
    """A copy of ``baseline`` whose recorded runs are scored under ``head``'s eval config
    (the suite's files as they are now); eval sets the head no longer has, and runs
    without recorded invocations, stay as recorded. With ``calls``, the judges' calls are
    retried, counted and budgeted there (:mod:`adk_eval_action.adk.runtime.model_calls`).

    Raises:
        RescoreError: the suite's eval config or an eval set does not load.
    """
    inputs = load_suite_inputs(suite, repo_root)
    if inputs.config is None or inputs.errors:
        raise RescoreError(f"suite {suite.name}: {inputs.errors[0].message}")
    config = inputs.config
    record = baseline.model_copy(deep=True)
    record.recorded_eval_config = baseline.recorded_eval_config or baseline.eval_config
    record.eval_config_hash = head.eval_config_hash
    record.eval_config = head.eval_config
    record.eval_config_file = head.eval_config_file
    record.judge_models = dict(head.judge_models)
    record.judge_setup = head.judge_setup  # re-judged as the head is: its judges' setup
    loaded = {s.eval_set.eval_set_id for s in inputs.eval_sets}
    agent_dirs = [suite.agent_dir] if suite.agent_dir else []
    with evaluation_scope(agent_dirs, repo_root):
        agent = await _agent(suite, repo_root)
        harness = SuiteHarness(
            agent.app_name if agent else (suite.agent_dir or Path(suite.name)).name,
            config.eval_config,
            [s.eval_set for s in inputs.eval_sets],
            calls=calls,
            repo_root=repo_root,
        )
        await bounded(
            parallelism,
            (
                _rescore_run(harness, config, record, eval_set.eval_set_id, case, index)
                for eval_set in record.eval_sets
                if eval_set.eval_set_id in loaded  # removed in the head: kept as recorded
                for case in eval_set.eval_cases
                for index, run in enumerate(case.runs)
                if run.actual_invocations
            ),
        )
    infer_directions(record, set(suite.higher_is_better))
    return record


async def _agent(suite: Suite, repo_root: Path) -> LoadedAgent | None:
    """The suite's agent, imported (not run) so custom metric modules it holds resolve as
    in the head run; None (with a warning) when it does not import."""
    if suite.agent_dir is None:
        return None
    try:
        return await load_agent(suite.agent_dir, repo_root)
    except AgentLoadError as e:
        log.warning("re-score of %s: %s", suite.name, e)
        return None


async def rescore_baseline(
    baseline: RunResults,
    head: RunResults,
    *,
    suites: list[Suite],
    parallelism: int,
    repo_root: Path,
    calls: ModelCalls | None = None,
) -> list[str]:
    """Re-scores, in place, each suite of ``baseline`` whose eval config alone changed
    (:func:`rescore_reason`) under the head's eval config; returns the suites re-scored.
    With ``calls``, the judges' calls are retried, counted and budgeted there.

    A suite is replaced only once its re-score completed, so a failure leaves it as it was
    recorded.

    Raises:
        RescoreError: a head suite's eval config or eval sets do not load.
    """
    base_by_name = {s.name: i for i, s in enumerate(baseline.suites)}
    todo = [
        (head_suite, base_by_name[head_suite.name])
        for head_suite in head.suites
        if head_suite.name in base_by_name
        and not any(e.kind in ("config", "eval_set") for e in head_suite.errors)
        and rescore_reason(baseline.suites[base_by_name[head_suite.name]], head_suite)
    ]
    by_name = {s.name: s for s in suites}
    done = []
    for head_suite, index in todo:
        suite = by_name.get(head_suite.name)
        if suite is None:
            continue
        log.info("baseline: re-scoring suite %s under the head's eval config", suite.name)
        baseline.suites[index] = await rescore_suite(
            suite,
            head_suite,
            baseline.suites[index],
            parallelism=parallelism,
            repo_root=repo_root,
            calls=calls,
        )
        done.append(suite.name)
    return done


__all__ = ["RescoreError", "rescore_baseline", "rescore_reason", "rescore_suite"]

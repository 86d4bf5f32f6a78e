"""The eval_history file of ``adk eval --num_runs N`` (google/adk-python#4411, not yet in a
google-adk release), written by google-adk's own pieces as that change runs them: the agent
loaded as ``adk eval`` loads it, the eval set's inference request repeated N times
(``_collect_inferences``, as ``AgentEvaluator`` repeats its requests for ``num_runs``), all
the inferences evaluated by one ``LocalEvalService.evaluate`` (``_collect_eval_results``),
whose ``LocalEvalSetResultsManager`` saves them in one ``*.evalset_result.json``: N results
of each eval case, each a run with its own invocations and scores."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

from google.adk.cli import cli_eval
from google.adk.evaluation.base_eval_service import InferenceConfig, InferenceRequest
from google.adk.evaluation.eval_config import (
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from google.adk.evaluation.local_eval_service import LocalEvalService
from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file


async def _root_agent(agent_dir: Path) -> Any:
    load = getattr(cli_eval, "get_app_or_root_agent", None)
    if load is not None:
        _, agent = await load(str(agent_dir))
        return agent
    agent = cli_eval.get_root_agent(str(agent_dir))  # google-adk 1.x: not a coroutine
    return await agent if inspect.isawaitable(agent) else agent


def adk_eval_num_runs(agent_dir: Path, eval_set: Path, config: Path, num_runs: int) -> Path:
    """Evaluates ``eval_set`` ``num_runs`` times as ``adk eval AGENT_DIR EVAL_SET
    --config_file_path CONFIG --num_runs N`` would (module docstring); returns the agent's
    eval_history folder (``AGENT_DIR/.adk/eval_history``). Run it in a process set up as
    ``adk eval`` starts (``conftest.as_adk_eval_starts``), with the agent's parent folder
    on ``sys.path``."""
    app_name = agent_dir.name
    agent = asyncio.run(_root_agent(agent_dir))
    loaded = load_eval_set_from_file(str(eval_set), str(eval_set))
    manager = InMemoryEvalSetsManager()
    manager.create_eval_set(app_name=app_name, eval_set_id=loaded.eval_set_id)
    for case in loaded.eval_cases:
        manager.add_eval_case(app_name=app_name, eval_set_id=loaded.eval_set_id, eval_case=case)
    eval_config = get_evaluation_criteria_or_default(str(config))
    service = LocalEvalService(
        root_agent=agent, eval_sets_manager=manager,
        eval_set_results_manager=LocalEvalSetResultsManager(agents_dir=str(agent_dir.parent)),
    )
    request = InferenceRequest(app_name=app_name, eval_set_id=loaded.eval_set_id,
                               inference_config=InferenceConfig())
    inferences = asyncio.run(cli_eval._collect_inferences([request] * num_runs, service))
    asyncio.run(cli_eval._collect_eval_results(
        inferences, service, get_eval_metrics_from_config(eval_config)))
    return agent_dir / ".adk" / "eval_history"

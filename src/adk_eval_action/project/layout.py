"""Where eval configs sit in the layouts real ADK repositories use, and which files near a
suite's eval sets look like an eval config it does not use.

An eval set's eval config, first found wins:

1. ``test_config.json`` beside the eval set: ADK's ``AgentEvaluator.find_config_for_test_file``
   (google.adk.evaluation.agent_evaluator), the layout of google/adk-python's tests and of
   google/adk-samples (``my_agent/`` beside ``eval/data/x.test.json`` and its
   ``test_config.json``);
2. ``eval_config.json`` in the parent of an ``evalsets/`` folder: the agent-starter-pack
   template (GoogleCloudPlatform/agent-starter-pack), whose ``make eval`` runs
   ``adk eval ./app tests/eval/evalsets/X.evalset.json
   --config_file_path=tests/eval/eval_config.json``;
3. none: ADK's default criteria (``tool_trajectory_avg_score`` 1.0,
   ``response_match_score`` 0.8; google.adk.evaluation.eval_config).

When a suite ends up on the defaults while a file named like an eval config
(:data:`CONFIG_LIKE`) sits near its eval sets (:func:`nearby_configs`), the run says so: the
file is most likely what the eval sets were meant to be scored with.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path

from adk_eval_action.text import visible

BESIDE_NAME = "test_config.json"
STARTER_PACK_FOLDER = "evalsets"
STARTER_PACK_NAME = "eval_config.json"

#: Names (matched case-insensitively) of files that look like an eval config.
CONFIG_LIKE = (
    "test_config.json", "test_config.yaml", "test_config.yml",
    "*eval*config*.json", "*eval*config*.yaml", "*eval*config*.yml",
)
_NOT_CONFIGS = (".evalset.json", ".test.json")
DEFAULT_METRICS = ("tool_trajectory_avg_score", "response_match_score")
"""The metrics of ADK's default criteria (google.adk.evaluation.eval_config)."""
EFFICIENCY_METRICS = frozenset(
    {"tool_call_count_v1", "inference_call_count_v1", "token_usage_v1", "invocation_duration_v1"}
)
"""Reference-free metrics that ADK reports as INFORMATIONAL; lower is better for all of them
(google.adk.evaluation.eval_metrics.PrebuiltMetrics, "Efficiency metrics")."""
DEFAULT_CRITERIA = (
    "ADK's default criteria (tool_trajectory_avg_score 1.0, response_match_score 0.8)"
)


def eval_config_for(eval_set: Path) -> Path | None:
    """The eval config of one eval set file by the rules of the module docstring (1, 2),
    or None for ADK's default criteria."""
    beside = eval_set.parent / BESIDE_NAME
    if beside.is_file():
        return beside
    if eval_set.parent.name == STARTER_PACK_FOLDER:
        starter = eval_set.parent.parent / STARTER_PACK_NAME
        if starter.is_file():
            return starter
    return None


def shared_eval_config(eval_sets: Iterable[Path]) -> Path | None:
    """The eval config of ``eval_sets`` (:func:`eval_config_for`) when all of them have
    the same one; None when they differ or have none."""
    configs = {eval_config_for(p) for p in eval_sets}
    return next(iter(configs)) if len(configs) == 1 else None


def looks_like_config(path: Path) -> bool:
    """Whether a file's name is one of :data:`CONFIG_LIKE` (not an eval set file)."""
    name = path.name.lower()
    if name.endswith(_NOT_CONFIGS):
        return False
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in CONFIG_LIKE)


def _files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_file() and looks_like_config(p))
    except OSError:
        return []


def _near(folder: Path, root: Path) -> list[Path]:
    """``folder``, its parents up to ``root``, and its sibling folders (none of them
    outside ``root``; only ``folder`` itself when it is outside)."""
    if root not in folder.parents:
        return [folder]
    parents = [p for p in folder.parents if p == root or root in p.parents]
    try:
        siblings = sorted(p for p in folder.parent.iterdir() if p.is_dir() and p != folder)
    except OSError:
        siblings = []
    return [folder, *parents, *(s for s in siblings if not s.name.startswith("."))]


def nearby_configs(eval_sets: Iterable[Path], root: Path) -> list[Path]:
    """The files named like an eval config (:func:`looks_like_config`) directly in the
    folder of each of ``eval_sets``, in each parent folder up to ``root``, or in a sibling
    folder of it (hidden folders left out); sorted, each once. No folder is searched
    recursively, so this costs a directory listing per folder."""
    root = root.resolve()
    folders = {f for p in eval_sets for f in _near(p.parent.resolve(), root)}
    return sorted({f for folder in folders for f in _files(folder)})


def defaults_warning(suite: str, shown_folder: str, found: list[str], how: str) -> str:
    """The warning of ``suite`` scored with ADK's default criteria although eval config-like
    files (``found``, as shown to the user; three named at most) sit near its eval sets
    (``shown_folder``); ``how`` says how to use one. Paths are shown on one line, control
    and bidi characters as their escapes (:func:`adk_eval_action.text.visible`)."""
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    files = ", ".join(f"`{visible(f, keep='')}`" for f in found[:3]) + more
    shown_folder = visible(shown_folder, keep="")
    return (
        f"suite `{suite}`: the eval sets in {shown_folder} are scored with "
        f"{DEFAULT_CRITERIA}, but {files} {'looks' if len(found) == 1 else 'look'} like an "
        f"eval config: {how}"
    )

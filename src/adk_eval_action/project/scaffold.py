"""What ``adk-eval-action init`` writes as ``adk-eval.yaml``: the suites discovery found,
with their own dependency files and, when they are split into agent groups, the matrix job
of each (the workflow is :mod:`adk_eval_action.project.workflow`).

Text made from typed inputs, with no file read or written here
(:mod:`adk_eval_action.run.init` does that). Every value is written by the YAML library
(``files.yaml_node``) and the text read back to check it says what was meant
(:func:`check_project_config`). Paths in it are POSIX and relative to the folder
``adk-eval.yaml`` is written in.
"""

from __future__ import annotations

import glob
import json
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.files import yaml_node
from adk_eval_action.project.config import PROJECT_CONFIG_NAMES
from adk_eval_action.text import visible

SCHEMA_LINE = ("# yaml-language-server: $schema=https://raw.githubusercontent.com/"
               "adk-eval-action/adk-eval-action/v1/schemas/adk-eval.schema.json")
CONFIG_FILE = PROJECT_CONFIG_NAMES[0]


class SuiteEntry(BaseModel):
    """One suite of the written ``adk-eval.yaml``: its name, agent folder (``""``: none
    was found, to fill in; ``agent_candidates`` are the repository's agent folders, a
    comment), eval set patterns (globs or files), its eval config (None: ADK's default
    criteria), the eval config-like files found near its eval sets when it has none (a
    comment), ``source``, how the suite was found (``as Makefile:12 runs it``, a
    comment), the agent's
    own dependency files (None: none found; ``[]`` with ``requirements_note``: one found
    that cannot be installed, and why), and the matrix job (``shard``) that evaluates it
    (None: one job evaluates every suite)."""

    name: str
    agent: str
    eval_sets: list[str]
    eval_config: str | None = None
    nearby_configs: list[str] = Field(default_factory=list)
    source: str | None = None
    agent_candidates: list[str] = Field(default_factory=list)
    requirements: list[str] | None = None
    requirements_note: str | None = None
    shard: int | None = None


def eval_set_patterns(files: Iterable[Path], root: Path) -> list[str]:
    """``files`` (eval set files under ``root``) as few patterns as can name exactly them:
    ``<folder>/*<suffix>`` for the files of one folder and suffix (``.evalset.json``,
    ``.test.json``) when that glob matches those files and no other, else the files
    themselves; relative to ``root``, POSIX, sorted, ``*?[`` in names escaped
    (:func:`glob.escape`: adk-eval.yaml's eval sets are globs)."""
    groups: dict[tuple[Path, str], set[Path]] = {}
    for path in files:
        suffix = ".evalset.json" if path.name.endswith(".evalset.json") else ".test.json"
        groups.setdefault((path.parent, suffix), set()).add(path)
    patterns = []
    for (folder, suffix), members in groups.items():
        inside = folder.resolve().relative_to(root.resolve())
        relative = glob.escape(inside.as_posix())
        pattern = f"*{suffix}" if relative == "." else f"{relative}/*{suffix}"
        matched = {Path(p) for p in glob.glob(glob.escape(str(folder)) + f"/*{suffix}")}
        if matched == members:
            patterns.append(pattern)
        else:  # each by its name in the folder (a link as the link, wherever it points)
            patterns += [glob.escape((inside / p.name).as_posix()) for p in members]
    return sorted(patterns)


def exclude_pattern(path: str) -> str:
    """``path`` (POSIX, relative to adk-eval.yaml's folder) as a gitignore-style pattern
    that names that one file: anchored with a leading ``/``, and ``\\``, ``*``, ``?``,
    ``[``, ``]``, ``!``, ``#`` and a trailing blank escaped with a backslash (git's
    gitignore rules, which ``exclude`` follows)."""
    escaped = "".join("\\" + c if c in "\\*?[]!#" else c for c in path)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return "/" + escaped


GATE_LINES = (
    "# The regression gate (docs/getting-started.md#for-a-required-check-that-catches-",
    "# regressions; docs/gating.md): the check fails where `adk eval` fails (an eval case",
    "# misses a threshold of its eval config, kept as it is) and when a score drops below",
    "# the baseline's by more than the agent's noise explains.",
    "gate:",
    "  fail_on: any                # the thresholds, and regressions against the baseline",
    "  require_significance: true  # a drop fails only when the corrected test proves it (🔴)",
    "  # min_effect: 0.05          # the smallest drop worth failing, in metric units",
)
"""The gate ``init`` writes: docs/gating.md's recommended settings for a required check."""


def _runs_lines(num_runs: int, can_call: Mapping[str, str], sized: bool) -> list[str]:
    """``num_runs`` with why, and what it can call in each suite (``plan``'s sentences)."""
    lines = [f"num_runs: {num_runs}   # runs of each eval case; a suite's own num_runs wins"]
    if sized:
        lines.append(f"# {num_runs} runs: the fewest with which the gate below calls one eval case "
                     "collapsing from all-pass")
        lines.append("# to all-fail in every suite (more runs cost more model calls: "
                     "`adk-eval-action plan`). Per suite:")
    elif can_call:
        lines.append("# What these runs can call, per suite (`adk-eval-action plan` says "
                     "the same):")
    for name, line in can_call.items():
        # A name's control characters escaped: a newline would end the comment.
        lines += textwrap.wrap(f"{visible(name, keep='')}: {line}", width=88, initial_indent="#   ",
                               subsequent_indent="#     ", break_on_hyphens=False)
    return lines


def project_config_text(
    suites: list[SuiteEntry], num_runs: int, excluded: Iterable[str] = (),
    *, can_call: Mapping[str, str] | None = None, sized: bool = False,
) -> str:
    """The ``adk-eval.yaml`` naming ``suites``, with ``num_runs`` for all of them (chosen by
    ``init`` when ``sized``) and what they can call per suite name (``can_call``: ``plan``'s
    sentences), the regression gate (:data:`GATE_LINES`), and the eval set files
    ``excluded`` (paths relative to it) in ``exclude``, with why; checked to read back as
    meant (:func:`check_project_config`).

    Raises:
        AdkEvalActionError: it would not read back as meant (nothing is written).
    """
    excluded = list(excluded)
    lines = [
        SCHEMA_LINE,
        "# Written by `adk-eval-action init` from the suites it found (docs/cli.md#discovery).",
        "# Edit freely: paths are relative to this file; `adk-eval-action plan` shows the cost.",
        *_runs_lines(num_runs, can_call or {}, sized),
        *GATE_LINES,
    ]
    if excluded:
        lines += [
            "# Eval sets without an eval case to run (`adk web` saves a new eval set or case",
            "# empty); every run would refuse them. Remove a line once its file has eval cases.",
            "exclude:",
            *(f"  - {yaml_node(exclude_pattern(path))}" for path in excluded),
        ]
    lines.append("suites:")
    for suite in suites:
        lines += [
            f"  - name: {yaml_node(suite.name)}",
            *_agent_lines(suite),
            "    eval_sets:",
            *(f"      - {yaml_node(p)}" for p in suite.eval_sets),
        ]
        lines += _dependency_lines(suite)
        if suite.eval_config is not None:
            lines.append(f"    eval_config: {yaml_node(suite.eval_config)}")
        elif suite.nearby_configs:
            lines += [
                "    # No eval config: ADK's default criteria (tool_trajectory_avg_score 1.0,",
                "    # response_match_score 0.8). Found near the eval sets:",
                *(f"    # eval_config: {yaml_node(c)}" for c in suite.nearby_configs),
            ]
        else:
            lines.append("    # No eval config: ADK's default criteria "
                         "(tool_trajectory_avg_score 1.0, response_match_score 0.8).")
    text = "\n".join(lines) + "\n"
    check_project_config(text, suites, excluded)
    return text


def _comment(text: str) -> str:
    """``text`` fit for a YAML comment: one line (a path may hold a line break)."""
    return json.dumps(text)[1:-1] if any(c in text for c in "\r\n") else text


def _agent_lines(suite: SuiteEntry) -> list[str]:
    """The suite's ``agent:`` line, after where the suite came from; an agent to fill in
    with what google-adk loads and the agent folders seen."""
    said = [f"    # {_comment(suite.source)}"] if suite.source and suite.agent else []
    if suite.agent:
        return [*said, f"    agent: {yaml_node(suite.agent)}"]
    seen = ", ".join(_comment(c) for c in suite.agent_candidates) or "none found"
    return [
        "    # No agent found for these eval sets: fill in the folder google-adk loads as",
        "    # their agent (its __init__.py exposes root_agent, or it has agent.py or",
        f"    # root_agent.yaml). Agent folders in this repository: {seen}",
        '    agent: ""   # FILL IN (or run `adk-eval-action init --agent PATH` instead)',
    ]


def check_project_config(text: str, suites: list[SuiteEntry], excluded: Iterable[str]) -> None:
    """Refuses the written ``text`` unless it reads back (YAML) as what was meant: every
    suite's name, agent, eval sets, eval config, dependency files and shard, and the
    ``exclude`` patterns (the other keys are the file's own settings).

    Raises:
        AdkEvalActionError: naming what reads otherwise; nothing is written.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise AdkEvalActionError(f"{CONFIG_FILE}: not written: the text is not YAML ({e})"
                                 ) from e
    meant = [{k: v for k, v in {
        "name": s.name, "agent": s.agent, "eval_sets": s.eval_sets,
        "eval_config": s.eval_config, "requirements": s.requirements, "shard": s.shard,
    }.items() if v is not None} for s in suites]
    patterns = [exclude_pattern(p) for p in excluded]
    if (not isinstance(data, dict) or data.get("suites") != meant
            or data.get("exclude", []) != patterns):
        raise AdkEvalActionError(f"{CONFIG_FILE}: not written: it would not read as meant "
                                 "(its suites or `exclude`); please report this as a bug")


def _dependency_lines(suite: SuiteEntry) -> list[str]:
    """The suite's own dependencies and its matrix job, as adk-eval.yaml lines."""
    lines = []
    if suite.requirements_note:
        lines.append(f"    # {visible(suite.requirements_note, keep='')}")
    if suite.requirements is not None:
        lines += ["    requirements:   # installed by the action before the suite runs"] + [
            f"      - {yaml_node(r)}" for r in suite.requirements] if suite.requirements else [
            "    requirements: []"]
    if suite.shard is not None:
        lines.append(f"    shard: {suite.shard}   # the matrix job (agent group) that "
                     "evaluates it")
    return lines

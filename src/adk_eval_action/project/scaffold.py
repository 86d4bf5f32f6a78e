"""What ``adk-eval-action init`` writes: an ``adk-eval.yaml`` naming the suites discovery
found, and a GitHub workflow that evaluates every pull request against the results recorded
on the default branch (the workflow of README.md, "Getting started").

Both are text made from typed inputs, with no file read or written here
(:mod:`adk_eval_action.run.init` does that). Paths in them are POSIX and relative to the
folder ``adk-eval.yaml`` is written in.
"""

from __future__ import annotations

import glob
import json
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from adk_eval_action.project.config import PROJECT_CONFIG_NAMES
from adk_eval_action.text import visible

SCHEMA_LINE = ("# yaml-language-server: $schema=https://raw.githubusercontent.com/"
               "adk-eval-action/adk-eval-action/v1/schemas/adk-eval.schema.json")
CONFIG_FILE = PROJECT_CONFIG_NAMES[0]
WORKFLOW_FILE = Path(".github/workflows/adk-eval.yml")
ACTION = "adk-eval-action/adk-eval-action@v1"
RESULT_FILES = ("adk-eval-results.json", "adk-eval-comment.md", "adk-eval-pr.json",
                "adk-eval-history.json")


class SuiteEntry(BaseModel):
    """One suite of the written ``adk-eval.yaml``: its name, agent folder (``""``: none
    was found, to fill in; ``agent_candidates`` are the repository's agent folders, a
    comment), eval set patterns (globs or files), its eval config (None: ADK's default
    criteria), the eval config-like files found near its eval sets when it has none (a
    comment), and ``source``, how the suite was found (``as Makefile:12 runs it``, a
    comment)."""

    name: str
    agent: str
    eval_sets: list[str]
    eval_config: str | None = None
    nearby_configs: list[str] = Field(default_factory=list)
    source: str | None = None
    agent_candidates: list[str] = Field(default_factory=list)


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar: plain when YAML reads it back as the same string, else
    double-quoted (JSON's quoting, which YAML reads)."""
    try:
        plain = yaml.safe_load(text) == text and "\n" not in text and text.strip() == text
    except yaml.YAMLError:
        plain = False
    return text if plain and text else json.dumps(text)


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
    ``excluded`` (paths relative to it) in ``exclude``, with why."""
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
            *(f"  - {_scalar(exclude_pattern(path))}" for path in excluded),
        ]
    lines.append("suites:")
    for suite in suites:
        lines += [
            f"  - name: {_scalar(suite.name)}",
            *_agent_lines(suite),
            "    eval_sets:",
            *(f"      - {_scalar(p)}" for p in suite.eval_sets),
        ]
        if suite.eval_config is not None:
            lines.append(f"    eval_config: {_scalar(suite.eval_config)}")
        elif suite.nearby_configs:
            lines += [
                "    # No eval config: ADK's default criteria (tool_trajectory_avg_score 1.0,",
                "    # response_match_score 0.8). Found near the eval sets:",
                *(f"    # eval_config: {_scalar(c)}" for c in suite.nearby_configs),
            ]
        else:
            lines.append("    # No eval config: ADK's default criteria "
                         "(tool_trajectory_avg_score 1.0, response_match_score 0.8).")
    return "\n".join(lines) + "\n"


def _comment(text: str) -> str:
    """``text`` fit for a YAML comment: one line (a path may hold a line break)."""
    return json.dumps(text)[1:-1] if any(c in text for c in "\r\n") else text


def _agent_lines(suite: SuiteEntry) -> list[str]:
    """The suite's ``agent:`` line, after where the suite came from; an agent to fill in
    with what google-adk loads and the agent folders seen."""
    said = [f"    # {_comment(suite.source)}"] if suite.source and suite.agent else []
    if suite.agent:
        return [*said, f"    agent: {_scalar(suite.agent)}"]
    seen = ", ".join(_comment(c) for c in suite.agent_candidates) or "none found"
    return [
        "    # No agent found for these eval sets: fill in the folder google-adk loads as",
        "    # their agent (its __init__.py exposes root_agent, or it has agent.py or",
        f"    # root_agent.yaml). Agent folders in this repository: {seen}",
        '    agent: ""   # FILL IN (or run `adk-eval-action init --agent PATH` instead)',
    ]


WORKFLOW = """\
# Written by `adk-eval-action init` (docs/action.md has every input). On a pull request:
# evaluate the suites of adk-eval.yaml, compare with the results recorded for the PR's
# merge-base, post one comment and fail the check when scores fall below their thresholds.
# On a push to {branch}: record the results that later pull requests compare with.
name: ADK eval
on:
  pull_request:
  push:
    branches: [{branch}]

# Setting any permission sets every other one to none: list all that are needed.
permissions:
  contents: read        # check out the code
  pull-requests: write  # the sticky PR comment
  actions: read         # find and download {branch}'s results artifact (the baseline)

# A new push to a PR cancels the run for the older head; runs on {branch} are never cancelled.
concurrency:
  group: adk-eval-${{{{ github.event.pull_request.number || github.sha }}}}
  cancel-in-progress: ${{{{ github.event_name == 'pull_request' }}}}

jobs:
  eval:
    name: ADK eval
    runs-on: ubuntu-latest
    # A tool or model that never answers would hold the runner for GitHub's default 6 hours;
    # size the limit from `adk-eval-action plan`'s wall time (docs/scaling.md).
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4

      - name: Evaluate
        id: eval
        uses: {action}
{with_block}        env:
          GOOGLE_API_KEY: ${{{{ secrets.GOOGLE_API_KEY }}}}   # whatever your agent's model needs

      # Keep the results even when the gate failed: on {branch} they are the next baseline.
      - name: Upload results
        if: always() && steps.eval.outputs.results_path != ''
        uses: actions/upload-artifact@v4
        with:
          name: adk-eval-results
          path: |
{paths}
          retention-days: 90

      # The HTML report that the comment and the job summary link to (its own artifact,
      # so a baseline download never fetches it); a run stopped before evaluating writes none.
      - name: Upload the HTML report
        if: always() && steps.eval.outputs.results_path != ''
        uses: actions/upload-artifact@v4
        with:
          name: adk-eval-report
          path: {report}
          if-no-files-found: ignore
"""


def workflow_text(branch: str, working_directory: str, requirements: list[str]) -> str:
    """The workflow: ``branch`` is the default branch (its pushes record the baseline);
    ``working_directory`` the folder of ``adk-eval.yaml`` relative to the repository root
    (``.`` at the root); ``requirements`` the agent's dependency files relative to it (none:
    a commented example). Suites and ``num_runs`` come from ``adk-eval.yaml``."""
    inputs = []
    if working_directory != ".":
        inputs.append(f"working_directory: {_scalar(working_directory)}")
    if len(requirements) == 1:
        inputs.append(f"requirements: {_scalar(requirements[0])}   # your agent's dependencies")
    elif requirements:
        inputs.append("requirements: |   # your agent's dependencies")
        inputs += [f"  {r}" for r in requirements]
    if inputs:
        with_block = "        with:   # suites and num_runs: adk-eval.yaml\n" + "".join(
            f"          {x}\n" for x in inputs)
    else:
        with_block = ("        # with:   # suites and num_runs: adk-eval.yaml\n"
                      "        #   requirements: requirements.txt   # your agent's dependencies\n")
    prefix = "" if working_directory == "." else working_directory.rstrip("/") + "/"
    paths = "\n".join(f"            {prefix}{name}" for name in RESULT_FILES)
    return WORKFLOW.format(branch=branch, action=ACTION, with_block=with_block, paths=paths,
                           report=f"{prefix}adk-eval-report.html")

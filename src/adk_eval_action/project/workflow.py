"""The GitHub workflow ``adk-eval-action init`` writes: on every pull request, evaluate the
suites of ``adk-eval.yaml``, compare with the results recorded for the merge-base, post
one comment and gate; on a push to the default branch, record them (README.md, "Getting
started"). For a repository whose suites are split into agent groups (``shard`` in
adk-eval.yaml: project.jobs), one job per group over GitHub Actions' matrix, each
installing only its agents' own dependencies, and a merge job that joins the parts into
one comment, one gate and one recorded artifact (``run --shard K/N``, ``merge``:
docs/scaling.md).

Every value taken from the repository (the default branch, the working directory, the
dependency files) is written by the YAML library, quoted where YAML needs it (a branch
``main,evil`` in a flow sequence, a folder ``my #dir`` that a plain scalar would cut at
the ``#``), never pasted into the text; :func:`check_workflow` reads the text back and
refuses it unless it says what was meant. Text only: :mod:`adk_eval_action.run.init`
writes the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.files import yaml_node
from adk_eval_action.text import visible

__all__ = ["ACTION", "RESULT_FILES", "WORKFLOW_FILE", "WorkflowSpec", "check_workflow",
           "workflow_text"]

WORKFLOW_FILE = Path(".github/workflows/adk-eval.yml")
ACTION = "adk-eval-action/adk-eval-action@v1"
RESULT_FILES = ("adk-eval-results.json", "adk-eval-comment.md", "adk-eval-pr.json",
                "adk-eval-history.json")
REPORT_FILE = "adk-eval-report.html"
#: Where the matrix jobs write their parts, relative to the working directory.
PARTS_DIR = "adk-eval-parts"


class WorkflowSpec(BaseModel):
    """What the workflow says: the default ``branch`` (its pushes record the baseline),
    the folder of adk-eval.yaml relative to the repository root (``working_directory``,
    ``.`` at the root), the dependency files of the ``requirements`` input (relative to
    it; none: a commented example), and how many matrix jobs (``shards``; 1: one job)."""

    branch: str
    working_directory: str = "."
    requirements: list[str] = Field(default_factory=list)
    shards: int = 1

    @property
    def prefix(self) -> str:
        """The working directory as a path prefix (``""`` at the root); one that begins
        with ``!`` gets ``./`` (upload-artifact reads ``!`` as an exclusion)."""
        if self.working_directory == ".":
            return ""
        folder = self.working_directory.rstrip("/") + "/"
        return "./" + folder if folder.startswith("!") else folder

    @property
    def uploads(self) -> list[str]:
        """The files the results artifact keeps, as the upload step names them."""
        return [self.prefix + name for name in RESULT_FILES]


def _comment(value: str) -> str:
    """``value`` for a comment line: one line, control characters escaped."""
    return visible(value, keep="")


def _path_block(key: str, paths: Sequence[str], indent: str) -> str:
    """``key: |`` with one path a line (the upload step's list), or one quoted scalar
    when a path would not survive a literal block (leading or trailing blanks, control
    characters)."""
    literal = all(p == p.strip() and p.isprintable() for p in paths)
    if literal:
        return f"{indent}{key}: |\n" + "".join(f"{indent}  {p}\n" for p in paths)
    return f"{indent}{key}: {yaml_node(chr(10).join(paths) + chr(10))}\n"


HEADER = """\
# Written by `adk-eval-action init` (docs/action.md has every input). On a pull request:
# evaluate the suites of adk-eval.yaml, compare with the results recorded for the PR's
# merge-base, post one comment and fail the check when scores fall below their thresholds.
# On a push to {shown}: record the results that later pull requests compare with.
name: ADK eval
on:
  pull_request:
  push:
    branches: {branches}

# Setting any permission sets every other one to none: list all that are needed.
permissions:
  contents: read        # check out the code
  pull-requests: write  # the sticky PR comment
  actions: read         # find and download {shown}'s results artifact (the baseline)

# A new push to a PR cancels the run for the older head; runs on {shown} are never cancelled.
concurrency:
  group: adk-eval-${{{{ github.event.pull_request.number || github.sha }}}}
  cancel-in-progress: ${{{{ github.event_name == 'pull_request' }}}}

jobs:
"""

ENV = """\
        env:
          GOOGLE_API_KEY: ${{ secrets.GOOGLE_API_KEY }}   # whatever your agent's model needs
"""

TIMEOUT = """\
    # A tool or model that never answers would hold the runner for GitHub's default 6 hours;
    # size the limit from `adk-eval-action plan`'s wall time (docs/scaling.md).
    timeout-minutes: 30
"""


def _uploads(spec: WorkflowSpec) -> str:
    """The two upload steps of the job that comments and records."""
    return (
        f"\n      # Keep the results even when the gate failed: on {_comment(spec.branch)} "
        "they are the next baseline.\n"
        "      - name: Upload results\n"
        "        if: always() && steps.eval.outputs.results_path != ''\n"
        "        uses: actions/upload-artifact@v4\n"
        "        with:\n"
        "          name: adk-eval-results\n"
        + _path_block("path", spec.uploads, "          ")
        + "          retention-days: 90\n\n"
        "      # The HTML report that the comment and the job summary link to (its own "
        "artifact,\n      # so a baseline download never fetches it); a run stopped before "
        "evaluating writes none.\n"
        "      - name: Upload the HTML report\n"
        "        if: always() && steps.eval.outputs.results_path != ''\n"
        "        uses: actions/upload-artifact@v4\n"
        "        with:\n"
        "          name: adk-eval-report\n"
        f"          path: {yaml_node(spec.prefix + REPORT_FILE)}\n"
        "          if-no-files-found: ignore\n"
    )


def _with_block(inputs: list[str], commented_example: bool) -> str:
    """The action step's ``with:`` block (``inputs`` are ``key: value`` lines)."""
    if inputs:
        return "        with:   # suites and num_runs: adk-eval.yaml\n" + "".join(
            f"          {x}\n" for x in inputs)
    if commented_example:
        return ("        # with:   # suites and num_runs: adk-eval.yaml\n"
                "        #   requirements: requirements.txt   # your agent's dependencies\n")
    return ""


def _inputs(spec: WorkflowSpec) -> list[str]:
    """``working_directory`` and ``requirements`` as ``with:`` lines."""
    inputs = []
    if spec.working_directory != ".":
        inputs.append(f"working_directory: {yaml_node(spec.working_directory)}")
    if spec.requirements:
        # One file a line: the input's format (action.yml); a flow scalar keeps escapes.
        inputs.append(f"requirements: {yaml_node(chr(10).join(spec.requirements))}   "
                      "# dependencies every suite needs")
    return inputs


def _single_job(spec: WorkflowSpec) -> str:
    return (
        "  eval:\n    name: ADK eval\n    runs-on: ubuntu-latest\n" + TIMEOUT
        + "    steps:\n      - uses: actions/checkout@v4\n\n"
        f"      - name: Evaluate\n        id: eval\n        uses: {ACTION}\n"
        + _with_block(_inputs(spec), commented_example=True) + ENV + _uploads(spec)
    )


def _matrix_jobs(spec: WorkflowSpec) -> str:
    n = spec.shards
    part = f"{PARTS_DIR}/part-${{{{ matrix.shard }}}}.json"
    shard_inputs = [f"shard: ${{{{ matrix.shard }}}}/{n}   # the suites with this `shard` in "
                    "adk-eval.yaml", f"results_path: {part}", *_inputs(spec)]
    merge_inputs = [f"merge: {PARTS_DIR}/*.json"] + [
        i for i in _inputs(spec) if i.startswith("working_directory")]
    return (
        "  # One job per agent group (the suites of adk-eval.yaml with that `shard`), each\n"
        "  # installing only its agents' own dependencies; one group's failure cancels no "
        "other.\n"
        f"  eval:\n    name: ADK eval (group ${{{{ matrix.shard }}}} of {n})\n"
        "    runs-on: ubuntu-latest\n" + TIMEOUT
        + "    strategy:\n      fail-fast: false\n      matrix:\n"
        f"        shard: {yaml_node(list(range(1, n + 1)))}\n"
        "    steps:\n      - uses: actions/checkout@v4\n\n"
        f"      - name: Evaluate this group\n        id: eval\n        uses: {ACTION}\n"
        + _with_block(shard_inputs, False) + ENV
        + "\n      - name: Upload this group's part\n"
        "        if: always() && steps.eval.outputs.results_path != ''\n"
        "        uses: actions/upload-artifact@v4\n        with:\n"
        "          name: adk-eval-part-${{ matrix.shard }}\n"
        f"          path: {yaml_node(spec.prefix + part)}\n          retention-days: 1\n\n"
        "  # The parts merged: one comment, one gate and one recorded artifact, as one job's.\n"
        "  merge:\n    name: ADK eval\n    needs: eval\n    if: always()\n"
        "    runs-on: ubuntu-latest\n    timeout-minutes: 30\n"
        "    steps:\n      - uses: actions/checkout@v4   # the eval configs, to re-score the "
        "baseline\n\n      - uses: actions/download-artifact@v4\n        with:\n"
        "          pattern: adk-eval-part-*\n"
        f"          path: {yaml_node(spec.prefix + PARTS_DIR)}\n          merge-multiple: true\n\n"
        f"      - name: Merge, compare, comment and gate\n        id: eval\n"
        f"        uses: {ACTION}\n" + _with_block(merge_inputs, False) + ENV + _uploads(spec)
    )


def workflow_text(spec: WorkflowSpec) -> str:
    """The workflow of ``spec`` (module docstring), checked (:func:`check_workflow`).

    Raises:
        AdkEvalActionError: a value holds a line break (no workflow can name it), or the
            text would not read back as ``spec`` says.
    """
    for what, value in [("the default branch", spec.branch),
                        ("the working directory", spec.working_directory),
                        *(("a requirements file", r) for r in spec.requirements)]:
        if any(c in value for c in "\n\r"):
            raise AdkEvalActionError(
                f"{WORKFLOW_FILE}: not written: {what} ({_comment(value)}) holds a line break, "
                "which a workflow's paths and branch filters cannot name; rename it")
    shown = _comment(spec.branch)
    text = HEADER.format(shown=shown, branches=yaml_node([spec.branch]))
    text += _single_job(spec) if spec.shards <= 1 else _matrix_jobs(spec)
    check_workflow(text, spec)
    return text


def _action_steps(data: Any) -> list[dict[str, Any]]:
    jobs = data.get("jobs") if isinstance(data, dict) else None
    return [step for job in (jobs or {}).values() for step in job.get("steps") or []
            if isinstance(step, dict) and step.get("uses") == ACTION]


def _upload(steps: list[dict[str, Any]], name: str) -> Any:
    return next((s.get("with", {}).get("path") for s in steps
                 if (s.get("with") or {}).get("name") == name), None)


def check_workflow(text: str, spec: WorkflowSpec) -> None:
    """Refuses ``text`` unless it reads back (YAML 1.1, as PyYAML and GitHub read it) as
    ``spec`` says: pushes of exactly the default branch, the working directory and
    dependency files of every action step, the files each upload step keeps.

    Raises:
        AdkEvalActionError: what reads otherwise, and that nothing was written.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise AdkEvalActionError(f"{WORKFLOW_FILE}: not written: the text is not YAML ({e})"
                                 ) from e
    wrong = []
    on = data.get(True, data.get("on")) if isinstance(data, dict) else None
    if ((on or {}).get("push") or {}).get("branches") != [spec.branch]:
        wrong.append("the branches of `push`")
    steps = [s for j in (data.get("jobs") or {}).values() for s in j.get("steps") or []]
    for step in _action_steps(data):
        given = step.get("with") or {}
        if given.get("working_directory", ".") != spec.working_directory:
            wrong.append("`working_directory`")
        if "merge" not in given and given.get("requirements", "") != "\n".join(
                spec.requirements):
            wrong.append("`requirements`")
    if str(_upload(steps, "adk-eval-results") or "").splitlines() != spec.uploads:
        wrong.append("the results upload's `path`")
    if _upload(steps, "adk-eval-report") != spec.prefix + REPORT_FILE:
        wrong.append("the HTML report upload's `path`")
    if wrong:
        raise AdkEvalActionError(
            f"{WORKFLOW_FILE}: not written: it would not read as meant ({', '.join(wrong)}); "
            "please report this as a bug")

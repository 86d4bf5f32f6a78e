"""``adk-eval-action init``: the suites discovery finds, written down as ``adk-eval.yaml``,
and the GitHub workflow that evaluates every pull request (project.scaffold and
project.workflow make them).

Each suite's own dependency file (project.dependencies) is named in adk-eval.yaml and
said; dependencies that cannot live together are named, with what to do. A repository
with more suites than one job should evaluate, or with such conflicts, gets its suites in
agent groups (project.jobs: each suite's ``shard``) and a matrix workflow, one job per
group, merged into one comment and one recorded artifact.

An existing file is never overwritten: it is named and left as it is. The workflow goes to
the repository's ``.github/workflows/`` (the git top level of the working directory), with
``working_directory`` set when ``adk-eval.yaml`` is in a subfolder; its pushes are those
of the remote's default branch (``origin/HEAD``; else the branch checked out, else
``main``: :func:`_repository`). Refused before anything is written (exit 2, naming the
file): a second workflow beside one that already runs the action (two would fight over
one sticky comment and record twice), and a ``.github`` that leads outside the
repository."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from adk_eval_action.errors import ConfigError
from adk_eval_action.files import (
    MAX_CONFIG_BYTES,
    FileLimitError,
    inside_root,
    load_yaml,
    read_text,
)
from adk_eval_action.git import Git
from adk_eval_action.project.agent_shapes import ACCEPTED_SHAPES, agent_folders, is_agent_dir
from adk_eval_action.project.dependencies import RequirementsError, declared_requirements
from adk_eval_action.project.discovery import (
    Suite,
    discover,
    relative_path,
)
from adk_eval_action.project.jobs import job_groups
from adk_eval_action.project.layout import DEFAULT_CRITERIA
from adk_eval_action.project.names import NO_AGENT
from adk_eval_action.project.scaffold import (
    CONFIG_FILE,
    SuiteEntry,
    eval_set_patterns,
    project_config_text,
)
from adk_eval_action.project.workflow import WORKFLOW_FILE, WorkflowSpec, workflow_text
from adk_eval_action.run.requirements import suite_conflicts
from adk_eval_action.run.sizing import RunsChoice, choose_runs, eval_cases_in
from adk_eval_action.text import visible

log = logging.getLogger(__name__)

#: Files named as the agent's dependencies in the workflow when the working directory has
#: them, first found (the action's `requirements` input takes either).
REQUIREMENTS = ("requirements.txt", "pyproject.toml")


class InitResult(BaseModel):
    """What ``init`` did: the files it wrote and those it left because they exist
    (absolute paths), the suites written, and the eval sets it excluded (``excluded``,
    relative to the working directory) because they hold no eval case."""

    written: list[Path]
    kept: list[Path]
    suites: list[SuiteEntry]
    excluded: list[str] = []


def _posix(path: Path, root: Path) -> str:
    return Path(relative_path(path, root)).as_posix()


def holds_no_eval_case(path: Path) -> bool:
    """Whether the eval set file ``path`` holds no eval case to run: an empty list, or
    ``eval_cases`` (``evalCases``) empty or only of cases with an empty ``conversation``.
    These are the files ``adk.files.evalsets.load_eval_set`` refuses for having no eval case
    (``NO_CASES``) or leaves with none (``NO_TURNS``), as ``adk web`` saves a new eval set
    or case; read as JSON here, without importing google-adk (seconds ``init`` need not
    spend: :func:`adk_eval_action.run.sizing.eval_cases_in`). A file that cannot be read or
    parsed says no: ``run`` reports what is wrong."""
    return eval_cases_in(path) == 0


def suite_entries(
    suites: list[Suite], root: Path, empty: frozenset[Path] = frozenset(),
    candidates: list[Path] | None = None,
) -> list[SuiteEntry]:
    """The suites as ``adk-eval.yaml`` names them (paths relative to ``root``). A suite
    whose eval sets are all in ``empty`` (hold no eval case) is left out with a warning
    saying why; so is a suite without an agent, unless ``candidates`` (the agent folders of
    the repository) is given: then its entry has an empty ``agent`` to fill in, with the
    candidates beside it."""
    entries = []
    for suite in suites:
        if suite.agent_dir is None and candidates is None:
            log.warning("suite %s left out: %s", suite.name, suite.agent_error)
            continue
        if all(p in empty for p in suite.eval_set_paths):
            log.warning("suite %s left out: none of its eval sets holds an eval case yet "
                        "(`adk web` saves a new one empty)", suite.name)
            continue
        entries.append(SuiteEntry(
            name=suite.name,
            agent=_posix(suite.agent_dir, root) if suite.agent_dir else "",
            eval_sets=eval_set_patterns(suite.eval_set_paths, root),
            eval_config=_posix(suite.eval_config_path, root) if suite.eval_config_path else None,
            nearby_configs=[_posix(p, root) for p in suite.nearby_configs],
            source=suite.source,
            agent_candidates=[_posix(p, root) for p in candidates or []]
            if suite.agent_dir is None else [],
            **_own_dependencies(suite, root),
        ))
    return entries


def _own_dependencies(suite: Suite, root: Path) -> dict[str, Any]:
    """The suite's own dependency file as adk-eval.yaml names it (``requirements``), said
    in the log; one that cannot be installed (a pyproject without ``[project].
    dependencies``, such as Poetry's) is named with why in a comment, and ``requirements:
    []`` keeps the action from trying; one that lists nothing is left out."""
    if not suite.requirements:
        return {}
    (path,) = suite.requirements
    shown = _posix(path, root)
    try:
        count = len(declared_requirements(path, shown))
        if count == 0:  # a project file that lists nothing: nothing of its own to install
            return {}
    except RequirementsError as e:
        why = str(e).removeprefix("requirements: ")
        log.warning("suite %s: its dependencies cannot be installed: %s (in adk-eval.yaml, "
                    "as the suite's `requirements:`)", suite.name, visible(why, keep=""))
        return {"requirements": [], "requirements_note": f"not installable: {why}"}
    log.info("suite %s: own dependencies %s (%d requirement%s), installed by the action "
             "before the suite runs", suite.name, visible(shown, keep=""), count,
             "" if count == 1 else "s")
    return {"requirements": [shown]}


def _repository(workdir: Path) -> tuple[Path, str]:
    """The repository root (git's top level, else ``workdir``) and its default branch: the
    remote's (``origin/HEAD``), else the branch checked out (a repository not yet pushed,
    or cloned without ``origin/HEAD``; said in the log), else ``main``."""
    git = Git(workdir, timeout=10)
    top = git.value("rev-parse", "--show-toplevel")
    remote_head = git.value("symbolic-ref", "--short", "refs/remotes/origin/HEAD")
    if remote_head and "/" in remote_head:
        return (Path(top) if top else workdir), remote_head.split("/", 1)[1]
    # `symbolic-ref --short HEAD` names the branch even before its first commit.
    current = git.value("symbolic-ref", "--short", "HEAD")
    branch = current or "main"
    log.info("default branch: %s (%s); edit `branches:` in the workflow if the default "
             "branch is another", branch,
             "no origin/HEAD: the branch checked out" if current else "no git branch found")
    return (Path(top) if top else workdir), branch


def _write_new(path: Path, text: str, shown: str) -> bool:
    """Writes ``text`` to ``path`` unless a file is there (never overwritten, even one
    made meanwhile: exclusive creation); True when written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("x", encoding="utf-8") as out:
            out.write(text)
    except FileExistsError:
        log.warning("%s exists: left as it is (init never overwrites a file; move it away "
                    "to have it written)", shown)
        return False
    log.info("wrote %s", shown)
    return True


def _say(entries: list[SuiteEntry], excluded: list[str], suites: list[Suite]) -> None:
    """Logs the suites written (with where each came from), the eval sets excluded, and
    discovery's warnings; a suite whose agent is to be filled in as a warning."""
    for entry in entries:
        config = entry.eval_config or DEFAULT_CRITERIA
        shown = [visible(x, keep="") for x in (entry.name, entry.agent or "(to fill in)",
                                                 ", ".join(entry.eval_sets), config)]
        source = f" ({visible(entry.source, keep='')})" if entry.source else ""
        log.info("suite %s%s: agent %s, eval sets %s, eval config %s", shown[0], source,
                 *shown[1:])
        if not entry.agent:
            seen = ", ".join(visible(c, keep="") for c in entry.agent_candidates) or "none"
            log.warning("suite %s: no agent found for its eval sets: fill in its `agent:` in "
                        "%s (agent folders in the repository: %s), or run `adk-eval-action "
                        "init --agent PATH` instead", shown[0], CONFIG_FILE, seen)
    for name in excluded:
        log.warning("%s left out (`exclude` in adk-eval.yaml): it holds no eval case yet",
                    visible(name, keep=""))
    for warning in (w for s in suites for w in s.warnings):
        log.warning("%s", warning)


def _say_runs(runs: RunsChoice) -> None:
    """Logs the runs written and what they can call."""
    how = ("the fewest with which the regression gate calls one eval case collapsing from "
           "all-pass to all-fail" if runs.sized else "--num-runs")
    log.info("num_runs: %d (%s)", runs.runs, how)
    for name, line in runs.lines.items():
        log.info("suite %s can call: %s", visible(name, keep=""), line)


def _suites(workdir: Path, paths: list[Path], agent: Path | None) -> tuple[list[Suite],
                                                                         list[Path] | None]:
    """The suites under ``paths``: discovery's (:func:`discover`, eval sets of any name),
    those without an agent given ``agent``, else the repository's only agent folder (said);
    and the repository's agent folders when some suite is left without an agent.

    Raises:
        ConfigError: ``agent`` is not an agent folder; a path does not exist.
    """
    dirs = [workdir / p for p in paths]
    if agent is not None:
        folder = (workdir / agent).resolve()
        if not folder.is_dir() or not is_agent_dir(folder):
            raise ConfigError(agent, f"--agent: not an agent folder ({ACCEPTED_SHAPES})")
        return discover(dirs, workdir, agent=folder, agent_source="agent named with --agent",
                        unplaced_suites=True).suites, None
    suites = discover(dirs, workdir, unplaced_suites=True).suites
    if all(s.agent_dir is not None for s in suites):
        return suites, None
    candidates = agent_folders(workdir)
    if len(candidates) != 1:
        for suite in suites:  # named after their eval sets' folder, for the agent to come
            named = suite.name.removeprefix(f"{NO_AGENT}:")
            suite.warnings = [w.replace(f"`{suite.name}`", f"`{named}`") for w in suite.warnings]
            suite.name = named
        return suites, candidates
    log.info("eval sets without an agent of their own: given the repository's only agent "
             "folder, %s (check it in %s)", visible(_posix(candidates[0], workdir), keep=""),
             CONFIG_FILE)
    return discover(dirs, workdir, agent=candidates[0],
                    agent_source="agent: the repository's only agent folder, check it",
                    unplaced_suites=True).suites, None


def _grouped(entries: list[SuiteEntry], suites: list[Suite], workdir: Path) -> int:
    """The agent groups of the suites (project.jobs), each entry's ``shard`` set when
    there is more than one; the dependencies that cannot live together said first. The
    number of groups (matrix jobs)."""
    named = {e.name for e in entries}
    conflicts = suite_conflicts([s for s in suites if s.name in named], workdir)
    for conflict in conflicts:
        log.warning("%s", visible(conflict.line(), keep=""))
    groups = job_groups([e.name for e in entries], conflicts)
    if len(groups) > 1:
        shard = {name: i for i, group in enumerate(groups, 1) for name in group}
        for entry in entries:
            entry.shard = shard[entry.name]
        log.info("%d agent groups, one matrix job each (adk-eval.yaml's `shard`): %s",
                 len(groups), "; ".join(f"{i}: {', '.join(g)}" for i, g in
                                        enumerate(groups, 1)))
    return len(groups)


def _runs_the_action(path: Path) -> bool:
    """Whether the workflow file ``path`` has a step that uses adk-eval-action (any owner,
    any version); a file that cannot be read or parsed does not."""
    try:
        data = load_yaml(read_text(path, MAX_CONFIG_BYTES))
    except (OSError, FileLimitError, UnicodeDecodeError, yaml.YAMLError):
        return False
    jobs = data.get("jobs") if isinstance(data, dict) else None
    uses = [str(step.get("uses", "")) for job in (jobs.values() if isinstance(jobs, dict)
                                                  else []) if isinstance(job, dict)
            for step in (job.get("steps") or []) if isinstance(step, dict)]
    return any(re.search(r"(^|/)adk-eval-action$", u.split("@")[0]) for u in uses)


def _refuse_unsafe_target(top: Path, workdir: Path) -> None:
    """Refuses a workflow target that leads outside the repository (``.github`` or
    ``.github/workflows`` a link out of it), and a second workflow beside one that already
    runs the action (:func:`_runs_the_action`; the one ``init`` writes, if it is there, is
    kept as it is).

    Raises:
        OutsideRoot: the workflow folder is outside the repository (names it).
        ConfigError: another workflow already runs the action (names it).
    """
    folder = (top / WORKFLOW_FILE).parent
    inside_root(folder, top, "the workflow folder")
    for path in sorted(folder.glob("*.y*ml")) if folder.is_dir() else []:
        if path.name != WORKFLOW_FILE.name and path.is_file() and _runs_the_action(path):
            raise ConfigError(
                Path(os.path.relpath(path, workdir)).as_posix(),
                "this workflow already runs adk-eval-action: a second one beside it would "
                f"fight it over the sticky comment and record twice; {WORKFLOW_FILE} is not "
                "written (edit this one, or remove it and run init again)")


def init_project(
    workdir: Path, paths: list[Path], num_runs: int | None = None, agent: Path | None = None,
) -> InitResult:
    """Discovers the suites under ``paths`` (relative to ``workdir``; :func:`_suites`:
    ``agent`` is that of the eval sets that have none), then writes
    ``workdir/adk-eval.yaml`` and the repository's ``.github/workflows/adk-eval.yml``,
    each only when it does not exist. Eval sets that hold no eval case
    (:func:`holds_no_eval_case`) are written in ``exclude`` (every run would refuse them);
    a suite whose agent was not found is written with ``agent`` to fill in and the
    repository's agent folders beside it. ``adk-eval.yaml`` holds the regression gate and
    ``num_runs`` (None: the fewest with which that gate calls one eval case's collapse,
    :func:`adk_eval_action.run.sizing.choose_runs`), with what they can call per suite.

    Raises:
        ConfigError: a path does not exist, ``agent`` is not an agent folder, or no suite
            with an eval case was found.
    """
    suites, candidates = _suites(workdir, paths, agent)
    empty = frozenset(p for s in suites for p in s.eval_set_paths if holds_no_eval_case(p))
    entries = suite_entries(suites, workdir, empty, candidates)
    excluded = sorted(_posix(p, workdir) for s in suites for p in s.eval_set_paths
                      if p in empty and any(e.name == s.name for e in entries))
    if not entries:
        raise ConfigError(", ".join(str(p) for p in paths), (
            "no eval sets with an eval case found (*.evalset.json, *.test.json, JSON files "
            "holding an eval set, or those the repository's `adk eval` commands and "
            "AgentEvaluator tests name): nothing to write"))
    _say(entries, excluded, suites)
    kept = {e.name for e in entries}
    runs = choose_runs([s for s in suites if s.name in kept], num_runs)
    _say_runs(runs)
    top, branch = _repository(workdir)
    _refuse_unsafe_target(top, workdir)
    working_directory = _posix(workdir, top) if workdir.resolve() != top.resolve() else "."
    requirements = next(([r] for r in REQUIREMENTS if (workdir / r).is_file()), [])
    spec = WorkflowSpec(branch=branch, working_directory=working_directory,
                        requirements=requirements, shards=_grouped(entries, suites, workdir))
    files = [
        (workdir / CONFIG_FILE, project_config_text(entries, runs.runs, excluded,
                                                       can_call=runs.lines, sized=runs.sized)),
        (top / WORKFLOW_FILE, workflow_text(spec)),
    ]
    result = InitResult(written=[], kept=[], suites=entries, excluded=excluded)
    for path, text in files:
        relative = Path(os.path.relpath(path, workdir)).as_posix()
        (result.written if _write_new(path, text, relative) else result.kept).append(path)
    return result

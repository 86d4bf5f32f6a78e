"""Changed suites only (``--changed-only``, input ``only_changed``): evaluate the suites that
something they depend on changed for, and take the others' results from the baseline.

"Since" is the commit the baseline was recorded at (its ``metadata.git_sha``: the
merge-base, or the nearest ancestor of it that has results), so a reused result is exactly
what the suite gave on the same files. The changed files are ``git diff --name-only SHA``
(commits, staged and unstaged changes) plus untracked files. A suite is evaluated when one
of these changed:

* a file in its agent folder, one of its eval sets, or its eval config;
* its entry in ``adk-eval.yaml`` (``suites:`` by name), or the file's ``num_runs``;
* or when the baseline has no complete record of it (new suite, errors, other num_runs).

Everything is evaluated (a full run, and the log says why) when there is no baseline, the
baseline names no commit or its commit is not in the checkout, a requirements or lock
file changed (``requirements*.txt``, ``constraints*.txt``, ``pyproject.toml``, ``setup.py``,
``setup.cfg``, ``*.lock``, ``Pipfile``, or a file of the ``requirements`` setting) outside
the agent folders, or a module that an agent (or a custom metric) imports from outside the
agent folders changed. Other files (a README, CI config, data no agent imports) do not
count. Imports between agent folders are not followed: a file in agent A's folder changes
suite A only.
"""

from __future__ import annotations

import fnmatch
import logging
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from adk_eval_action.files import MAX_CONFIG_BYTES, load_yaml
from adk_eval_action.git import Git, GitError
from adk_eval_action.project.config import ProjectConfig
from adk_eval_action.project.discovery import Suite, relative_path
from adk_eval_action.results.identity import baseline_renames, rename_suites
from adk_eval_action.results.model import EvalSetRecord, RunResults, SuiteRecord
from adk_eval_action.settings import RunRequest

log = logging.getLogger(__name__)

LOCK_PATTERNS = (
    "requirements*.txt",
    "constraints*.txt",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "*.lock",
    "Pipfile",
)


class ChangedSelection(BaseModel):
    """Which suites to evaluate (``evaluate``) and which records to take from the baseline
    (``reused``, marked with ``reused_from``), with why (``reason``: the full run's reason,
    or a summary). ``since`` is the baseline's commit when the selection applied."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    evaluate: list[Suite]
    reused: list[SuiteRecord] = Field(default_factory=list)
    since: str | None = None
    reason: str = ""


def _full(suites: list[Suite], reason: str) -> ChangedSelection:
    log.info("changed only: evaluating every suite: %s", reason)
    return ChangedSelection(evaluate=suites, reason=reason)


def changed_files(git: Git, sha: str) -> set[Path] | str:
    """Absolute paths changed since ``sha`` (module docstring), or why they are not known.
    A commit missing from a shallow checkout is fetched once (``git fetch --depth=1``)."""
    try:
        top = Path(git("rev-parse", "--show-toplevel")).resolve()
    except GitError as e:
        return f"not a git checkout ({e})"
    if not git.ok("cat-file", "-e", f"{sha}^{{commit}}"):
        git("fetch", "--depth=1", "--no-tags", "origin", sha, check=False)
    if not git.ok("cat-file", "-e", f"{sha}^{{commit}}"):
        return (
            f"the baseline's commit {sha[:12]} is not in this checkout (check out with "
            "fetch-depth: 0)"
        )
    try:
        names = git("diff", "--name-only", "--no-renames", sha).splitlines()
        names += git("ls-files", "--others", "--exclude-standard", "--full-name").splitlines()
    except GitError as e:
        return str(e)
    return {(top / n).resolve() for n in names if n}


def _inside(path: Path, folder: Path | None) -> bool:
    return folder is not None and path.is_relative_to(folder.resolve())


def _entry_changes(request: RunRequest, git: Git, sha: str) -> set[str] | str:
    """Names of the suites whose ``adk-eval.yaml`` entry changed since ``sha`` (all of
    them: ``"*"``), or why a full run is needed."""
    path = request.config_path
    if path is None:
        return set()
    try:
        relative = path.resolve().relative_to(Path(git("rev-parse", "--show-toplevel")).resolve())
    except (ValueError, GitError):
        return set()
    old_text = git("show", f"{sha}:{relative.as_posix()}", check=False)
    try:
        # JSON is YAML too; the old file's paths are not used, only its entries compared.
        # Bounded as the head's file is (files.load_yaml): no alias bomb, no huge file.
        if len(old_text) > MAX_CONFIG_BYTES:
            return {"*"}
        old = ProjectConfig.model_validate(load_yaml(old_text) or {})
    except Exception:  # noqa: BLE001 - no or an unreadable old file: every entry changed
        return {"*"}
    return _diff_entries(old, request.project)


def _diff_entries(old: ProjectConfig, new: ProjectConfig) -> set[str] | str:
    if old.num_runs != new.num_runs:
        return "adk-eval.yaml's num_runs changed"
    before = {s.name: s.model_dump() for s in old.suites}
    return {s.name for s in new.suites if before.get(s.name) != s.model_dump()}


def _suite_reason(suite: Suite, changed: set[Path], entries: set[str]) -> str | None:
    """Why ``suite`` must be evaluated, or None."""
    if "*" in entries or suite.name in entries:
        return "its adk-eval.yaml entry changed"
    for path in sorted(changed):
        if _inside(path, suite.agent_dir):
            return f"{path.name} in its agent folder changed"
        if path in {p.resolve() for p in suite.eval_set_paths}:
            return f"eval set {path.name} changed"
        if suite.eval_config_path is not None and path == suite.eval_config_path.resolve():
            return f"eval config {path.name} changed"
    return None


def _shared_change(
    suites: list[Suite], changed: set[Path], imported: set[Path], requirements: list[Path]
) -> str | None:
    """A changed file outside every agent folder that all suites depend on, or None."""
    outside = [p for p in changed if not any(_inside(p, s.agent_dir) for s in suites)]
    for path in sorted(outside):
        if path in requirements or any(fnmatch.fnmatch(path.name, p) for p in LOCK_PATTERNS):
            return f"{path.name} (requirements) changed"
        if path in imported:
            return f"{path.name}, which an agent or custom metric imports, changed"
    return None


def _baseline_reason(suite: Suite, record: SuiteRecord | None, num_runs: int) -> str | None:
    if record is None:
        return "it is not in the baseline"
    if any(e.kind in ("config", "eval_set", "agent", "internal") for e in record.errors):
        return "the baseline's record of it has errors"
    if record.num_runs != (suite.num_runs or num_runs):
        return "the baseline ran it another number of times"
    return None


async def select_changed(
    request: RunRequest, suites: list[Suite], baseline: RunResults | None
) -> ChangedSelection:
    """The suites to evaluate and the records to reuse (module docstring); logs why."""
    if baseline is None:
        return _full(suites, "no baseline to take the unchanged suites' results from")
    sha = baseline.metadata.git_sha
    if not sha:
        return _full(suites, "the baseline names no commit")
    git = Git(request.workdir)
    changed = changed_files(git, sha)
    if isinstance(changed, str):
        return _full(suites, changed)
    entries = _entry_changes(request, git, sha)
    if isinstance(entries, str):
        return _full(suites, entries)
    imported = await _imported(request, suites, changed)
    requirements = [request.path(Path(r)).resolve() for r in request.settings.requirements]
    shared = _shared_change(suites, changed, imported, requirements)
    if shared:
        return _full(suites, shared)
    return _select(request, suites, baseline, changed, entries, sha)


async def _imported(request: RunRequest, suites: list[Suite], changed: set[Path]) -> set[Path]:
    """The repository files the agents import (only looked up when a Python file outside
    the agent folders changed)."""
    outside = [p for p in changed if p.suffix == ".py"
               and not any(_inside(p, s.agent_dir) for s in suites)]
    if not outside:
        return set()
    from adk_eval_action.adk.files.evalconfig import load_eval_config
    from adk_eval_action.adk.runtime.agent import imported_files

    modules = []
    for suite in suites:
        try:
            config = load_eval_config(suite.eval_config_path)
        except Exception:  # noqa: BLE001 - the run reports a broken eval config
            continue
        for metric in (config.eval_config.custom_metrics or {}).values():
            modules.append(metric.code_config.name.rpartition(".")[0])
    dirs = [s.agent_dir for s in suites if s.agent_dir is not None]
    files, _ = await imported_files(dirs, request.workdir, modules)
    return files


def _named_as_now(baseline: RunResults, suites: list[Suite], workdir: Path) -> None:
    """The baseline's suites renamed, in place, to the names of the same suites now (same
    agent and eval set folder, results.identity): a suite the baseline recorded under an
    older name is reused all the same."""
    def rel(path: Path) -> str:
        return relative_path(path, workdir)

    now = [SuiteRecord(name=s.name, agent=rel(s.agent_dir) if s.agent_dir else None,
                       eval_sets=[EvalSetRecord(eval_set_id=p.name, file=rel(p))
                                  for p in s.eval_set_paths])
           for s in suites]
    rename_suites(baseline, baseline_renames(baseline.suites, now))


def _select(
    request: RunRequest, suites: list[Suite], baseline: RunResults, changed: set[Path],
    entries: set[str], sha: str,
) -> ChangedSelection:
    _named_as_now(baseline, suites, request.workdir)
    records = {s.name: s for s in baseline.suites}
    selection = ChangedSelection(evaluate=[], since=sha)
    for suite in suites:
        reason = _suite_reason(suite, changed, entries) or _baseline_reason(
            suite, records.get(suite.name), request.settings.num_runs
        )
        if reason:
            log.info("changed only: evaluating suite %s: %s", suite.name, reason)
            selection.evaluate.append(suite)
            continue
        reused = records[suite.name].model_copy(deep=True)
        reused.reused_from = sha
        reused.usage = None  # the baseline's run spent it, not this one
        selection.reused.append(reused)
        log.info("changed only: suite %s reused from the baseline (unchanged since %s)",
                 suite.name, sha[:12])
    selection.reason = (f"{len(selection.evaluate)} suite(s) changed since {sha[:12]}, "
                        f"{len(selection.reused)} reused")
    return selection

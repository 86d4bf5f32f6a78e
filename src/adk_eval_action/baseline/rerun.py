"""The ``rerun`` baseline: evaluate the merge-base of the base branch and the head in a
temporary ``git worktree``, with the head run's suites and settings, in a child process so
the base commit's agent code never shares ``sys.modules`` with the head's; then remove the
worktree (git's manual: https://git-scm.com/docs/git-worktree). Costs the LLM calls of a
second evaluation.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from adk_eval_action.adk.files.eval_history import load_any_results
from adk_eval_action.baseline.models import (
    BaselineRequest,
    RerunBudget,
    RerunError,
    ResolvedBaseline,
)
from adk_eval_action.children import run_child
from adk_eval_action.errors import ResultsFileError
from adk_eval_action.git import Git, GitError, trusting_environment
from adk_eval_action.results.model import RESULTS_FILE_NAME

log = logging.getLogger(__name__)


def default_base_ref(git: Git) -> str:
    """The remote's default branch (``origin/HEAD``), else ``main`` or ``master`` when one
    exists.

    Raises:
        RerunError: none of them is known.
    """
    head = git("symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD", check=False)
    if head:
        return head.split("/", 1)[1] if head.startswith("origin/") else head
    for name in ("main", "master"):
        if git.ok("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}") or git.ok(
            "rev-parse", "--verify", "--quiet", f"origin/{name}^{{commit}}"
        ):
            return name
    raise RerunError("cannot tell the base branch: pass --base-ref REF")


def _resolve(git: Git, ref: str) -> str | None:
    for candidate in (f"refs/remotes/origin/{ref}", ref):
        sha = git("rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}", check=False)
        if sha:
            return sha
    return None


def find_merge_base(git: Git, base_ref: str, head: str) -> str:
    """The merge-base commit of ``base_ref`` and ``head``, fetching what a shallow or
    partial checkout lacks (``git fetch origin <base_ref>``, with ``--unshallow`` when the
    checkout is shallow: actions/checkout fetches one commit by default,
    https://github.com/actions/checkout#usage). The fetch uses the credentials the checkout
    persisted (its ``persist-credentials``).

    Raises:
        RerunError: the ref cannot be found or the histories share no commit.
    """
    shallow = git("rev-parse", "--is-shallow-repository", check=False) == "true"
    base = _resolve(git, base_ref)
    if base is None or shallow:
        log.info("baseline: fetching %s%s", base_ref, " (unshallow)" if shallow else "")
        refspec = f"+refs/heads/{base_ref}:refs/remotes/origin/{base_ref}"
        extra = ["--unshallow"] if shallow else []
        wanted = [head] if re.fullmatch(r"[0-9a-f]{40}", head) else []
        if not git.ok("fetch", "--no-tags", *extra, "origin", refspec, *wanted):
            git("fetch", "--no-tags", *extra, "origin", refspec)
        base = _resolve(git, base_ref)
    if base is None:
        raise RerunError(f"base ref {base_ref} not found, locally or on origin")
    if not git.ok("cat-file", "-e", f"{head}^{{commit}}"):
        head = "HEAD"
    merge_base = git("merge-base", base, head, check=False)
    if not merge_base:
        raise RerunError(f"{base_ref} and {head[:12]} share no commit (unrelated histories?)")
    return merge_base


def _map_into(path: Path, repo_root: Path, cwd: Path, worktree: Path) -> str:
    """A path of the head run, as the same path inside the worktree."""
    absolute = path if path.is_absolute() else cwd / path
    try:
        return str(worktree / absolute.resolve().relative_to(repo_root))
    except ValueError:
        return str(path)


def rerun_command(
    request: BaselineRequest, repo_root: Path, cwd: Path, worktree: Path, results: Path,
    budget: RerunBudget | None = None,
) -> list[str]:
    """The ``adk-eval-action run`` command line that evaluates the worktree with the
    head run's suites and settings (paths, config, num_runs, parallelism) and what is left
    of the run's ``budget``."""
    command = [sys.executable, "-m", "adk_eval_action.cli", "run"]
    command += [_map_into(p, repo_root, cwd, worktree) for p in request.paths]
    if request.config is not None:
        command += ["--config", _map_into(request.config, repo_root, cwd, worktree)]
    command += ["--baseline", "none", "--results-out", str(results)]
    if request.num_runs:
        command += ["--num-runs", str(request.num_runs)]
    if request.parallelism:
        command += ["--parallelism", str(request.parallelism)]
    budget = budget or RerunBudget()
    for flag, left in (("--max-model-calls", budget.max_model_calls),
                       ("--max-tokens", budget.max_tokens), ("--max-usd", budget.max_usd)):
        if left is not None:
            command += [flag, f"{left:g}" if isinstance(left, float) else str(left)]
    return command


def rerun_baseline(request: BaselineRequest, budget: RerunBudget | None = None
                   ) -> ResolvedBaseline:
    """The ``rerun`` strategy: evaluate the merge-base in a git worktree, then remove it,
    spending at most what is left of the run's ``budget``.

    Raises:
        RerunError: not a git checkout, no base, a git call failed, or the base evaluation
            wrote no results.
    """
    try:
        return _rerun(request, budget or RerunBudget())
    except GitError as e:
        raise RerunError(str(e)) from e


def _rerun(request: BaselineRequest, budget: RerunBudget) -> ResolvedBaseline:
    spent = budget.spent()
    if spent is not None:
        raise RerunError(f"rerun: the run's budget ({spent}) was spent on the head, so the "
                         "merge-base was not evaluated")
    context = request.github
    cwd = request.workdir.resolve()
    git = Git(cwd)
    top = git("rev-parse", "--show-toplevel", check=False)
    if not top:
        raise RerunError("rerun: not inside a git checkout")
    repo_root = Path(top).resolve()
    git = Git(repo_root)
    base_ref = request.base_ref or (context.base_ref if context else None) or default_base_ref(git)
    head = (context.head_sha if context else None) or "HEAD"
    merge_base = find_merge_base(git, base_ref, head)
    folder = Path(tempfile.mkdtemp(prefix="adk-eval-base-"))
    worktree = folder / "tree"
    results_path = folder / RESULTS_FILE_NAME
    try:
        git("worktree", "add", "--detach", str(worktree), merge_base)
        log.info("baseline: evaluating %s (%s) in %s", merge_base[:12], base_ref, worktree)
        run_cwd = worktree / cwd.relative_to(repo_root)
        command = rerun_command(request, repo_root, cwd, worktree, results_path, budget)
        _run_child(command, run_cwd)
        if not results_path.is_file():
            raise RerunError(
                f"the evaluation of {merge_base[:12]} wrote no results (its eval sets or "
                "config may not exist there; see the log)"
            )
        try:
            results = load_any_results(results_path)
        except ResultsFileError as e:
            raise RerunError(f"the base evaluation's results are unreadable: {e}") from e
        if not results.suites and results.incomplete_errors():
            # A run stopped before evaluating (a config error there) records only why.
            raise RerunError(f"the evaluation of {merge_base[:12]} stopped before evaluating: "
                             f"{results.incomplete_errors()[0].message}")
    finally:
        git("worktree", "remove", "--force", str(worktree), check=False)
        git("worktree", "prune", check=False)
        shutil.rmtree(folder, ignore_errors=True)
    results.metadata.git_sha = merge_base
    return ResolvedBaseline(
        results=results, source="rerun", label="re-run in a git worktree", commit=merge_base,
        relation=f"merge-base with {base_ref}", recorded_at=results.metadata.finished_at,
        extra=("this check made the LLM calls of two evaluations",),
    )


def _run_child(command: list[str], cwd: Path) -> int:
    """Runs the base evaluation, echoing its log with a prefix; returns its exit code.

    A child process, because the base commit's agent package usually has the head's
    module name and must not share ``sys.modules`` with it. Its gate result (exit 1) does
    not matter; only its results file does.
    """
    # The child is the same tool; it inherits the environment (model keys, PATH) and, like
    # our own git calls, must accept the worktree's owner inside a container.
    env = trusting_environment(os.environ)
    # run_child: its own process group, ended with its children if this run is stopped
    # (a signal, an error), so no evaluation of the base commit outlives the run.
    try:
        return run_child(command, cwd, env, on_line=lambda line: log.info("  base| %s", line))
    except OSError as e:
        raise RerunError(f"cannot start the base evaluation: {e}") from e

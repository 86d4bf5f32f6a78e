"""One way to run git: :class:`Git`, used for the run's metadata (sha, ref), the baseline
re-run's worktree and the action's checkout checks.

``safe.directory`` is set on the command line of our own calls only: in a container action
the workspace belongs to another uid and git refuses it ("dubious ownership": git's
``safe.directory``, https://git-scm.com/docs/git-config#Documentation/git-config.txt-safedirectory;
the container runs as root, GitHub's "Dockerfile support for GitHub Actions",
https://docs.github.com/en/actions/reference/workflows-and-actions/dockerfile-support);
nothing is written to the user's git config (only the action's own container adds a
workspace its image does not already trust to its system config: :func:`trust_in_container`).
A child process of ours gets the same through
its environment (:func:`trusting_environment`).
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from adk_eval_action.errors import AdkEvalActionError

log = logging.getLogger(__name__)

#: Seconds a git call may take (a fetch of a large history is the slow one).
GIT_TIMEOUT = 600.0


class GitError(AdkEvalActionError):
    """git is missing, timed out, or exited non-zero; ``str()`` gives git's own reason."""


class Git:
    """Runs git in ``cwd`` with a timeout in seconds."""

    def __init__(self, cwd: Path, timeout: float = GIT_TIMEOUT) -> None:
        self.cwd = cwd
        self.timeout = timeout

    def __call__(self, *args: str, check: bool = True) -> str:
        """Output of ``git args`` (stripped); with ``check=False`` a failure gives "".

        Raises:
            GitError: git is missing or timed out; or (``check``) it exited non-zero.
        """
        command = ["git", "-c", "safe.directory=*", *args]
        try:
            done = subprocess.run(
                command, cwd=self.cwd, capture_output=True, text=True, timeout=self.timeout,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            )
        except (OSError, subprocess.SubprocessError) as e:
            raise GitError(f"git {args[0]} failed: {type(e).__name__}: {e}") from e
        if check and done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()
            # git's first "fatal:"/"error:" line says what went wrong; later lines are advice.
            detail = next((x for x in lines if x.startswith(("fatal:", "error:"))), None)
            detail = detail or (lines[0] if lines else f"exit {done.returncode}")
            raise GitError(f"git {' '.join(args[:2])} failed: {detail}")
        return done.stdout.strip() if done.returncode == 0 else ""

    def ok(self, *args: str) -> bool:
        """True when ``git args`` exits 0."""
        try:
            self(*args)
        except GitError:
            return False
        return True

    def value(self, *args: str) -> str | None:
        """Output of ``git args``, or None when git is missing, fails or prints nothing."""
        try:
            return self(*args) or None
        except GitError:
            return None


def trusting_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` plus ``safe.directory=*`` as git reads configuration from the environment
    (``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>``, git-config(1)
    "ENVIRONMENT"), after any entries already there: for a child process of ours whose own
    git calls must accept the worktree's owner, as :class:`Git`'s calls do."""
    count = int(environ.get("GIT_CONFIG_COUNT", "0") or 0)
    return {
        **environ,
        "GIT_CONFIG_COUNT": str(count + 1),
        f"GIT_CONFIG_KEY_{count}": "safe.directory",
        f"GIT_CONFIG_VALUE_{count}": "*",
    }


def trust_in_container(workspace: Path | None) -> None:
    """Let git work on the runner's checkout, which another user created (the module's
    docstring).

    The image already trusts /github/workspace; a different GITHUB_WORKSPACE is added to
    the container's system config. Best effort: outside a container this may not be ours
    to change, and git is then usually fine anyway.
    """
    if workspace is None:
        return
    git = Git(workspace)
    listed = (git.value("config", "--system", "--get-all", "safe.directory") or "").split()
    if str(workspace) in listed or "*" in listed:
        return
    try:
        git("config", "--system", "--add", "safe.directory", str(workspace))
    except GitError as exc:
        log.info("git safe.directory not set: %s", exc)

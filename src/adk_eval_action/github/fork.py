"""The fork recipe's second half: post a comment that an earlier run rendered (the artifact
of a fork PR's ``pull_request`` run) from a privileged ``workflow_run`` workflow.

The artifact is untrusted: its PR number and head sha are checked against the API and the
triggering run before anything is posted (docs/action.md, "Pull requests from forks").
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from adk_eval_action.errors import EXIT_PASS, AdkEvalActionError
from adk_eval_action.files import MAX_CONFIG_BYTES, FileLimitError, read_bytes, read_text
from adk_eval_action.github.event import EventContext
from adk_eval_action.github.freshness import comment_body, stale_reason
from adk_eval_action.github.logs import annotation
from adk_eval_action.github.publish import COMMENT_FILE, PR_FILE, PublishTarget
from adk_eval_action.github.rest import get_pull
from adk_eval_action.github.runner_files import write_outputs, write_runner_file
from adk_eval_action.github.sticky import comment_marker, strip_markers, upsert_sticky_comment
from adk_eval_action.github.transport import GitHubClient, NotFound

__all__ = ["ArtifactContext", "ArtifactError", "post_artifact_comment", "read_artifact"]

log = logging.getLogger(__name__)


class ArtifactError(AdkEvalActionError):
    """A comment artifact is missing, malformed or does not match the PR it names."""


class ArtifactContext(BaseModel):
    """`adk-eval-pr.json` as written by `publish`; untrusted when read back."""

    repository: str | None = None
    pr_number: int | None = Field(default=None, ge=1)
    head_sha: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")
    comment_key: str | None = None
    run_id: str | None = None


def post_artifact_comment(
    target: PublishTarget,
    artifact: Path,
    *,
    make_client: Callable[[str, str], GitHubClient],
    pr_number: int | None = None,
    head_sha: str | None = None,
) -> int:
    """Post a comment rendered by an earlier run, after checking it belongs to this PR.

    `artifact` is the downloaded folder (holding adk-eval-comment.md and adk-eval-pr.json)
    or the comment file itself (then pr_number/head_sha must be given). Checks, with the
    API as the authority: the PR exists in this repository; its head sha equals the
    claimed one; on a workflow_run event, the claimed sha is the triggering run's head sha
    and the number is among its pull_requests when GitHub lists any. A PR whose head moved
    on is left alone (exit 0: the newer run comments). Returns the exit code.
    """
    event = target.runner.event
    comment_file, context = read_artifact(artifact)
    number = pr_number or context.pr_number
    claimed_sha = head_sha or context.head_sha
    if not number or not claimed_sha:
        raise ArtifactError("the artifact names no pull request number and head sha")
    if not target.token:
        raise ArtifactError("no github_token to post the comment with")
    if not event.repository:
        raise ArtifactError("GITHUB_REPOSITORY is not set")
    if context.repository and context.repository.lower() != event.repository.lower():
        raise ArtifactError(f"the artifact is for {context.repository}, "
                            f"not {event.repository}")
    if event.event_name == "workflow_run":
        _check_triggering_run(event, number, claimed_sha)
    client = make_client(target.token, event.api_url)
    try:
        pull = get_pull(client, event.repository, number)
    except NotFound as exc:
        raise ArtifactError(f"PR #{number} does not exist in {event.repository}") from exc
    stale = stale_reason({"number": number, **pull}, claimed_sha)
    if stale or not (pull.get("head") or {}).get("sha"):
        log.info("%s", stale or f"PR #{number} names no head sha; the comment is not posted",
                 extra=annotation("notice"))
        return EXIT_PASS
    key = target.comment_key if target.comment_key != "default" else (
        context.comment_key or "default")
    marker = comment_marker(key)
    try:
        untrusted = strip_markers(read_text(comment_file, MAX_CONFIG_BYTES, errors="replace"))
    except (OSError, FileLimitError) as exc:
        raise ArtifactError(f"{comment_file} cannot be read: {exc}") from exc
    body = comment_body(untrusted, marker, claimed_sha)
    result = upsert_sticky_comment(
        client, event.repository, number, body, marker=marker,
        mode="new" if target.comment == "new" else "update",
    )
    log.info("PR comment %s: %s", result.action, result.url)
    write_runner_file("GITHUB_OUTPUT", target.runner.output_file,
                      lambda path: write_outputs(path, {"comment_url": result.url}))
    return EXIT_PASS


def _check_triggering_run(event: EventContext, number: int, claimed_sha: str) -> None:
    """On a workflow_run event, the artifact must be of the run that triggered it: its
    head sha, and one of its pull requests when GitHub lists any.

    Raises:
        ArtifactError: the claim does not match the triggering run.
    """
    listed = event.listed_pulls
    if event.head_sha and claimed_sha != event.head_sha:
        raise ArtifactError("the artifact's head sha is not the head sha of the run "
                            "that triggered this workflow")
    if listed and number not in listed:
        raise ArtifactError(f"PR #{number} is not among the triggering run's pull requests")


def read_artifact(artifact: Path) -> tuple[Path, ArtifactContext]:
    if artifact.is_dir():
        comment_file, context_file = artifact / COMMENT_FILE, artifact / PR_FILE
    else:
        comment_file, context_file = artifact, artifact.with_name(PR_FILE)
    if not comment_file.is_file():
        raise ArtifactError(f"{comment_file} not found")
    context = ArtifactContext()
    if context_file.is_file():
        try:
            context = ArtifactContext.model_validate_json(read_bytes(context_file))
        except (ValidationError, OSError, FileLimitError) as exc:
            raise ArtifactError(f"{context_file} is not a valid PR context: {exc}") from exc
    return comment_file, context

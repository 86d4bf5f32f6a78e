"""Stale runs never replace a newer comment.

Two pushes to a pull request start two runs; the older one can finish last. Right before
posting (``github.publish.post_run_comment``), the run asks GitHub for the pull request's
current head sha (``GET /repos/{o}/{r}/pulls/{n}``, rest/pulls/pulls#get-a-pull-request): a
run that evaluated another head posts nothing and says so (:func:`stale_reason`). The
comment records the head it was written for in a hidden line next to its marker
(:func:`comment_body`), so a reader (and the log) can tell which commit a comment describes.
The ``concurrency:`` recipe in docs/action.md cancels superseded runs before they cost
model calls; this check covers the runs that were not cancelled.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from adk_eval_action.github.sticky import COMMENT_MAX_CHARS, compose_comment_body

_HEAD_MARKER = "<!-- adk-eval-action-head:{sha} -->"
_HEAD_MARKER_RE = re.compile(r"<!-- adk-eval-action-head:([0-9a-fA-F]{7,64}) -->")
_SHA = re.compile(r"[0-9a-fA-F]{7,64}")
HEAD_MARKER_ROOM = 100
"""Characters :func:`with_head_marker` adds at most (the line and its newline)."""


class StaleRun(Exception):
    """This run evaluated a head the pull request has moved on from; ``str()`` says which."""


def head_marker(head_sha: str | None) -> str:
    """The hidden line that records the head sha a comment was written for ("" when the sha
    is unknown or not a hex sha, so nothing from data reaches the comment unchecked)."""
    if not head_sha or not _SHA.fullmatch(head_sha):
        return ""
    return _HEAD_MARKER.format(sha=head_sha.lower())


def with_head_marker(body: str, marker: str, head_sha: str | None) -> str:
    """``body`` (as ``sticky.compose_comment_body`` made it, ending with ``marker``) with the
    head marker on the line before ``marker``. Compose with a limit
    :data:`HEAD_MARKER_ROOM` characters under GitHub's, so the result still fits."""
    line = head_marker(head_sha)
    at = body.rfind(marker)
    if not line or at < 0:
        return body
    return f"{body[:at]}{line}\n{body[at:]}"


def comment_body(
    markdown: str, marker: str, head_sha: str | None, run_url: str | None = None
) -> str:
    """``sticky.compose_comment_body`` (markdown, run link, marker last) with the head marker
    before the marker, within GitHub's comment size limit."""
    body = compose_comment_body(markdown, marker, run_url, COMMENT_MAX_CHARS - HEAD_MARKER_ROOM)
    return with_head_marker(body, marker, head_sha)


def recorded_head(body: str) -> str | None:
    """The head sha the comment ``body`` records (its last head marker), or None."""
    found = _HEAD_MARKER_RE.findall(body or "")
    return found[-1].lower() if found else None


def stale_reason(pull: Mapping[str, Any], head_sha: str | None) -> str | None:
    """Why a run that evaluated ``head_sha`` must not post on ``pull`` (a REST pull request
    object, fetched right before posting), or None when ``head_sha`` is its current head.

    An unknown head on either side is not called stale: there is nothing to compare."""
    current = str((pull.get("head") or {}).get("sha") or "")
    if not current or not head_sha or current.lower() == head_sha.lower():
        return None
    return (
        f"PR #{pull.get('number', '?')} has moved on to {current[:12]}; this run evaluated "
        f"{head_sha[:12]}, so its comment is not posted (the run for the newer head comments)"
    )


"""The sticky PR comment: its marker, its body, and finding and updating it.

A comment is ours when its author is the token's identity and its **last line** is our
marker exactly (``<!-- adk-eval-action:KEY -->``, :func:`comment_marker`). A marker quoted
anywhere else in a body (another workflow's comment, an eval id rendered into our own
comment) never counts, and :func:`compose_comment_body` strips marker-like text from the
markdown before it adds the one marker at the end (docs/action.md, "Security model"). A
hidden marker is how sticky-comment actions find their comment (marocchino's
https://github.com/marocchino/sticky-pull-request-comment/blob/main/src/comment.ts).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from adk_eval_action.github.pages import paginate
from adk_eval_action.github.rest import repo_path, token_login
from adk_eval_action.github.transport import GitHubClient, GitHubError, TransientError
from adk_eval_action.report.format import strip_markers
from adk_eval_action.text import fit

__all__ = [
    "COMMENT_MAX_CHARS",
    "CommentResult",
    "comment_marker",
    "compose_comment_body",
    "find_sticky_comment",
    "is_marked",
    "strip_markers",
    "upsert_sticky_comment",
]

#: GitHub rejects issue comment bodies longer than this with 422 "Body is too long
#: (maximum is 65536 characters)" on create and on update
#: (https://docs.github.com/en/rest/issues/comments).
COMMENT_MAX_CHARS = 65_536
_MARKER_PREFIX = "<!-- adk-eval-action:"
_TRUNCATION_NOTE = (
    "\n\n> **Note:** this comment was cut to fit GitHub's {limit:,}-character limit. "
    "The full report is in the job summary and the results file of the workflow run.\n"
)
_JSON = dict[str, Any]


def comment_marker(key: str = "default") -> str:
    """Hidden HTML comment that identifies our comment for one suite/workflow (``key``).

    Several workflows or suites on one PR each keep their own comment by using distinct
    keys. The key is reduced to ``[A-Za-z0-9._/-]`` so it cannot close the HTML comment; a
    key that had to be changed gets a short hash of the original, so ``a b`` and ``a-b``
    keep two comments.
    """
    key = key.strip() or "default"
    safe = re.sub(r"[^A-Za-z0-9._/-]", "-", key)
    if safe != key:
        safe += "-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
    return f"{_MARKER_PREFIX}{safe} -->"


def is_marked(body: str, marker: str) -> bool:
    """Whether ``body`` is a comment of ``marker``'s key: its last line is the marker."""
    return body.rstrip().rpartition("\n")[2].strip() == marker


def compose_comment_body(
    markdown: str, marker: str, run_url: str | None = None, limit: int = COMMENT_MAX_CHARS,
) -> str:
    """Final comment body: the rendered markdown (marker-like text stripped), a link to the
    run, the marker as the last line.

    Guarantees ``len(result) <= limit`` (GitHub counts characters; 422 above 65,536): a
    markdown that does not fit is cut at a line boundary with a note (``text.fit``).
    """
    markdown = strip_markers(markdown)
    # The renderer may already link the run (it gets run_url too); link it once.
    footer = f"\n\n[Workflow run]({run_url})" if run_url and run_url not in markdown else ""
    footer += f"\n{marker}\n"
    body = fit(markdown.rstrip("\n"), limit - len(footer), _TRUNCATION_NOTE.format(limit=limit))
    return body.rstrip("\n") + footer


class CommentResult(BaseModel):
    """What :func:`upsert_sticky_comment` did: the comment's id and html URL."""

    id: int
    url: str
    action: Literal["created", "updated"]


def _bare_login(login: str) -> str:
    login = login.lower()
    return login[: -len("[bot]")] if login.endswith("[bot]") else login


def find_sticky_comment(
    client: GitHubClient, repository: str, pr_number: int, marker: str, author_login: str,
    matches: Callable[[str], bool] | None = None,
) -> _JSON | None:
    """Our earlier comment on the PR: by ``author_login`` and :func:`is_marked` with
    ``marker`` (or ``matches(body)`` when given); else None.

    Looks through every page (``GET /repos/{o}/{r}/issues/{n}/comments``,
    rest/issues/comments). Logins are compared without a ``[bot]`` suffix and
    case-insensitively, since GraphQL's viewer login drops the suffix that REST's
    ``user.login`` shows (as marocchino/sticky-pull-request-comment's ``src/comment.ts``
    compares them). The oldest match wins so the comment
    keeps its place in the conversation.
    """
    want = _bare_login(author_login)
    test = matches or (lambda body: is_marked(body, marker))
    path = f"{repo_path(repository)}/issues/{int(pr_number)}/comments"
    for comment in paginate(client, path):
        if not isinstance(comment, dict) or not isinstance(comment.get("id"), int):
            continue
        user = comment.get("user")
        if not isinstance(user, dict):
            user = {}
        if _bare_login(str(user.get("login") or "")) != want:
            continue
        if test(str(comment.get("body") or "")):
            return comment
    return None


def _result(data: Any, action: Literal["created", "updated"]) -> CommentResult:
    if not isinstance(data, dict) or not isinstance(data.get("id"), int):
        raise GitHubError(f"GitHub answered the comment's {action[:-1]} without its id")
    return CommentResult(id=data["id"], url=str(data.get("html_url") or ""), action=action)


def upsert_sticky_comment(
    client: GitHubClient,
    repository: str,
    pr_number: int,
    body: str,
    *,
    marker: str,
    author_login: str | None = None,
    mode: Literal["update", "new"] = "update",
    max_attempts: int = 3,
) -> CommentResult:
    """Update our marked comment on the PR, else create it; return its id and URL.

    ``body`` should already end with ``marker`` (:func:`compose_comment_body`); otherwise
    it is composed here, and it is cut to 65,536 characters if it does not fit.
    ``author_login`` defaults to ``rest.token_login(client)``. ``mode="new"`` always
    creates a comment (older ones stay).

    Never a duplicate: a create that fails with a server error or timeout may still have
    landed, so before trying again the comments are searched again and the found one is
    updated instead.

    Raises:
        GitHubError: the client's named errors (PermissionDenied for a fork's token), or
            an answer without the comment's id.
    """
    if not is_marked(body, marker) or len(body) > COMMENT_MAX_CHARS:
        body = compose_comment_body(body, marker)
    login = author_login or token_login(client)
    repo = repo_path(repository)
    last_error: TransientError | None = None
    for attempt in range(1, max_attempts + 1):
        if mode == "update":
            existing = find_sticky_comment(client, repository, pr_number, marker, login)
        elif attempt > 1:
            # "new" mode: only the comment a failed create may have made, i.e. this body.
            existing = find_sticky_comment(client, repository, pr_number, marker, login,
                                           matches=lambda text: text == body)
        else:
            existing = None
        try:
            if existing is not None:
                data = client.patch_json(f"{repo}/issues/comments/{existing['id']}",
                                         {"body": body})
                return _result(data, "updated")
            data = client.post_json(f"{repo}/issues/{int(pr_number)}/comments", {"body": body})
            return _result(data, "created")
        except TransientError as exc:
            last_error = exc
            if attempt < max_attempts:
                client.pause(client.backoff_seconds(attempt))
    assert last_error is not None
    raise last_error

"""The REST calls the action makes about pull requests, one function per call
(rest/pulls, rest/commits, rest/users), on :class:`~.transport.GitHubClient`.

The artifact calls of the baseline search are in ``baseline.artifact`` (they are that
stage's), built on :func:`repo_path` and ``github.pages.paginate`` too.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from adk_eval_action.github.pages import paginate
from adk_eval_action.github.transport import GitHubClient, GitHubError, NotFound, PermissionDenied

__all__ = ["DEFAULT_BOT_LOGIN", "get_pull", "pulls_for_commit", "repo_path", "token_login"]

#: Login of the installation token the runner hands a workflow as ``GITHUB_TOKEN``.
DEFAULT_BOT_LOGIN = "github-actions[bot]"
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")

_JSON = dict[str, Any]


def repo_path(repository: str) -> str:
    """``/repos/{owner}/{name}`` of ``GITHUB_REPOSITORY`` (each part URL-quoted).

    Raises:
        GitHubError: ``repository`` is not ``owner/name``.
    """
    if not _REPOSITORY.fullmatch(repository or ""):
        raise GitHubError(f"GITHUB_REPOSITORY must be 'owner/name', got {repository[:100]!r}")
    owner, _, name = repository.partition("/")
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"


def _object(data: Any, what: str) -> _JSON:
    if not isinstance(data, dict):
        raise GitHubError(f"GitHub answered {what} with something that is not an object")
    return data


def token_login(client: GitHubClient) -> str:
    """Login of the token's own identity, to pick only our comments.

    ``GET /user`` answers for personal tokens. Installation tokens, ``GITHUB_TOKEN`` among
    them, get 403 "Resource not accessible by integration" (or 404) there; the workflow
    token's identity is then ``github-actions[bot]``. A token of another GitHub App also
    falls back to that login, so such an app's earlier comment is not found and a new one
    is made: pass a personal token or GITHUB_TOKEN to keep one sticky comment.
    """
    try:
        user = client.get_json("/user")
    except (PermissionDenied, NotFound):
        return DEFAULT_BOT_LOGIN
    login = user.get("login") if isinstance(user, dict) else None
    return str(login) if isinstance(login, str) and login else DEFAULT_BOT_LOGIN


def get_pull(client: GitHubClient, repository: str, number: int) -> _JSON:
    """``GET /repos/{o}/{r}/pulls/{n}`` (rest/pulls/pulls#get-a-pull-request).

    Raises:
        GitHubError: the call failed, or the answer is not an object.
    """
    return _object(client.get_json(f"{repo_path(repository)}/pulls/{int(number)}"),
                   f"GET pulls/{int(number)}")


def pulls_for_commit(client: GitHubClient, repository: str, sha: str) -> list[_JSON]:
    """Pull requests associated with a commit: ``GET /repos/{o}/{r}/commits/{sha}/pulls``.

    GitHub returns the merged PR for a commit on the default branch, plus open PRs whose
    head contains it otherwise (rest/commits/commits#list-pull-requests-associated-with-a-commit).
    Items that are not objects are skipped.
    """
    path = f"{repo_path(repository)}/commits/{quote(sha, safe='')}/pulls"
    return [p for p in paginate(client, path) if isinstance(p, dict)]

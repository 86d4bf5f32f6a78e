"""The one error tree of GitHub calls (:class:`GitHubError` and its kinds), raised by the
REST transport (``github.transport``) and the reading of its answers (``github.answers``);
``github.transport`` names them too, where callers import them from."""

from __future__ import annotations

from adk_eval_action.errors import AdkEvalActionError

__all__ = [
    "BadCredentials",
    "GitHubError",
    "NotFound",
    "PermissionDenied",
    "RateLimited",
    "TransientError",
    "ValidationFailed",
]


class GitHubError(AdkEvalActionError):
    """A GitHub REST call failed; ``str()`` is a message fit for the job log (exit 2).

    Attributes: ``status`` (HTTP status, 0 when no response arrived), ``method``, ``path``
    (never with credentials or a query), ``github_message`` (GitHub's own ``message``).
    """

    def __init__(
        self, message: str, *, status: int = 0, method: str = "", path: str = "",
        github_message: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.method = method
        self.path = path
        self.github_message = github_message


class BadCredentials(GitHubError):
    """401: the token is missing, expired or revoked."""


class PermissionDenied(GitHubError):
    """403 that is not a rate limit: the token may not do this.

    ``read_only_token`` is True for "Resource not accessible by integration", what the
    read-only ``GITHUB_TOKEN`` of a fork (or Dependabot) pull request gets on writes
    (GitHub's "GITHUB_TOKEN reference": pull requests from public forks get at most read,
    https://docs.github.com/en/actions/reference/github_token-reference).
    """

    @property
    def read_only_token(self) -> bool:
        return "resource not accessible by integration" in self.github_message.lower()


class NotFound(GitHubError):
    """404: missing, or invisible to this token (GitHub hides private resources as 404)."""


class ValidationFailed(GitHubError):
    """422: GitHub refused the request body (for example a comment over 65,536 characters)."""


class RateLimited(GitHubError):
    """Primary or secondary rate limit still in force after the waits allowed."""


class TransientError(GitHubError):
    """5xx, a network failure, an answer that is not the JSON asked for, or the time
    budget spent: retries did not cure it, or it was unsafe to retry."""

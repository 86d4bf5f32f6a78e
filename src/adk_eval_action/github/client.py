"""The GitHub side: event context, REST client, sticky comment, file and workflow commands
(the log's workflow commands, groups and annotations are written by github.logs).

Every rule here follows `shared/reference/github-actions-contract.md` (the runner source and
GitHub's docs); each function's docstring names the part it follows. Each function does one
REST call or writes one workflow/file command, so the publishing step reads as a short list.

Nothing here reads `os.environ`: callers pass the environment mapping they were given once.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import requests
from pydantic import BaseModel, ConfigDict

__all__ = [
    "COMMENT_MAX_CHARS",
    "DEFAULT_BOT_LOGIN",
    "STEP_SUMMARY_MAX_BYTES",
    "BadCredentials",
    "CommentResult",
    "EventContext",
    "EventContextError",
    "GitHubClient",
    "GitHubError",
    "NotFound",
    "PermissionDenied",
    "RateLimited",
    "TransientError",
    "ValidationFailed",
    "append_job_summary",
    "comment_marker",
    "compose_comment_body",
    "escape_data",
    "escape_property",
    "find_sticky_comment",
    "get_pull",
    "pulls_for_commit",
    "strip_markers",
    "token_login",
    "upsert_sticky_comment",
    "workflow_command",
    "write_outputs",
]

#: GitHub rejects issue comment bodies longer than this with 422 "Body is too long
#: (maximum is 65536 characters)" on create and on update (contract §3).
COMMENT_MAX_CHARS = 65_536
#: The runner refuses to upload a step summary above 1 MiB (`AttachmentSizeLimit`, §2).
STEP_SUMMARY_MAX_BYTES = 1024 * 1024
#: Login of the installation token the runner hands a workflow as `GITHUB_TOKEN`.
DEFAULT_BOT_LOGIN = "github-actions[bot]"

_JSON = dict[str, Any]


# --------------------------------------------------------------------------- errors


class GitHubError(Exception):
    """A GitHub REST call failed; `str()` is a message fit for the job log.

    Attributes: `status` (HTTP status, 0 when no response arrived), `method`, `path` (never
    with credentials), `github_message` (GitHub's own `message` field, "" if none).
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

    `read_only_token` is True for "Resource not accessible by integration", which is what
    the read-only `GITHUB_TOKEN` of a fork (or Dependabot) pull request gets on writes
    (contract §3, "Forks").
    """

    @property
    def read_only_token(self) -> bool:
        return "resource not accessible by integration" in self.github_message.lower()


class NotFound(GitHubError):
    """404: missing, or invisible to this token (GitHub hides private resources as 404)."""


class ValidationFailed(GitHubError):
    """422: GitHub refused the request body (for example a comment over 65,536 characters)."""


class RateLimited(GitHubError):
    """Primary or secondary rate limit still in force after the retries allowed."""


class TransientError(GitHubError):
    """5xx or a network failure that retries did not cure, or that was unsafe to retry."""


class EventContextError(Exception):
    """The event payload or GITHUB_* variables do not describe a usable run."""


# --------------------------------------------------------------------------- event context


class EventContext(BaseModel):
    """What the run is about, from `GITHUB_EVENT_PATH` and the `GITHUB_*` variables.

    `pr_number`/`head_sha`/`base_ref` are None where the event does not name a pull request
    (push, workflow_dispatch, fork workflow_run): the caller may resolve them over REST
    (`pulls_for_commit`, `get_pull`) and `with_pull` them in. All URLs come from
    `GITHUB_API_URL`/`GITHUB_SERVER_URL`, so GitHub Enterprise Server works (contract §6).
    """

    model_config = ConfigDict(frozen=True)

    event_name: str = ""
    repository: str = ""  # "owner/name"
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    sha: str = ""  # GITHUB_SHA: the merge commit on pull_request events, not the PR head
    ref: str = ""
    run_id: str = ""
    run_attempt: str = ""
    workspace: Path | None = None
    pr_number: int | None = None
    head_sha: str | None = None
    head_ref: str | None = None
    base_ref: str | None = None
    is_fork: bool = False
    payload: dict[str, Any] = {}

    @property
    def run_url(self) -> str | None:
        """`$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID` (contract §6)."""
        if not (self.repository and self.run_id):
            return None
        return f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}"

    @property
    def is_pull_request_event(self) -> bool:
        return self.event_name in ("pull_request", "pull_request_target")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> EventContext:
        """Build from the runner's variables; reads the file `GITHUB_EVENT_PATH` names.

        Raises EventContextError when that file exists but is not a JSON object.
        A missing variable or file gives an empty context (a plain local run).
        """
        payload: dict[str, Any] = {}
        event_path = env.get("GITHUB_EVENT_PATH", "")
        if event_path and Path(event_path).is_file():
            try:
                loaded = json.loads(Path(event_path).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise EventContextError(f"cannot read event payload {event_path}: {exc}") from exc
            if not isinstance(loaded, dict):
                raise EventContextError(f"event payload {event_path} is not a JSON object")
            payload = loaded
        base = cls(
            event_name=env.get("GITHUB_EVENT_NAME", ""),
            repository=env.get("GITHUB_REPOSITORY", ""),
            api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            server_url=(env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
            sha=env.get("GITHUB_SHA", ""),
            ref=env.get("GITHUB_REF", ""),
            run_id=env.get("GITHUB_RUN_ID", ""),
            run_attempt=env.get("GITHUB_RUN_ATTEMPT", ""),
            workspace=Path(env["GITHUB_WORKSPACE"]) if env.get("GITHUB_WORKSPACE") else None,
            head_ref=env.get("GITHUB_HEAD_REF") or None,
            base_ref=env.get("GITHUB_BASE_REF") or None,
            payload=payload,
        )
        return base.model_copy(update=_pull_request_fields(base.event_name, payload, base.sha))

    def with_pull(self, pull: Mapping[str, Any]) -> EventContext:
        """Return a copy naming `pull` (a REST pull request object) as the PR of this run."""
        head = pull.get("head") or {}
        base = pull.get("base") or {}
        return self.model_copy(update={
            "pr_number": int(pull["number"]),
            "head_sha": head.get("sha") or self.head_sha,
            "head_ref": head.get("ref") or self.head_ref,
            "base_ref": base.get("ref") or self.base_ref,
            "is_fork": _is_fork(head.get("repo"), base.get("repo")),
        })


def _is_fork(head_repo: Any, base_repo: Any) -> bool:
    """A deleted fork shows as `head.repo: null`; treat it as a fork (least privilege)."""
    if not isinstance(head_repo, Mapping):
        return True
    base_name = base_repo.get("full_name") if isinstance(base_repo, Mapping) else None
    return bool(head_repo.get("fork")) or head_repo.get("full_name") != base_name


def _pull_request_fields(event_name: str, payload: Mapping[str, Any], sha: str) -> dict:
    """Per-event PR fields (contract §3, "Finding the PR number")."""
    if event_name in ("pull_request", "pull_request_target"):
        pull = payload.get("pull_request") or {}
        number = payload.get("number") or pull.get("number")
        head, base = pull.get("head") or {}, pull.get("base") or {}
        return {
            "pr_number": int(number) if number else None,
            "head_sha": head.get("sha"),
            "head_ref": head.get("ref"),
            "base_ref": base.get("ref"),
            "is_fork": _is_fork(head.get("repo"), base.get("repo")),
        }
    if event_name == "push":
        # The PR, if any, is found over REST (`pulls_for_commit`).
        return {"head_sha": payload.get("after") or sha or None}
    if event_name == "workflow_run":
        run = payload.get("workflow_run") or {}
        pulls = run.get("pull_requests") or []  # empty for fork PRs
        fields: dict[str, Any] = {
            "head_sha": run.get("head_sha") or None,
            "head_ref": run.get("head_branch") or None,
            "is_fork": _is_fork(run.get("head_repository"), run.get("repository")),
        }
        if pulls:
            fields["pr_number"] = int(pulls[0]["number"])
            fields["base_ref"] = (pulls[0].get("base") or {}).get("ref")
        return fields
    if event_name == "issue_comment":
        issue = payload.get("issue") or {}
        if issue.get("pull_request") and issue.get("number"):
            # The head sha is not in this payload; `get_pull` + `with_pull` fill it in.
            return {"pr_number": int(issue["number"])}
        return {}
    if event_name == "workflow_dispatch":
        inputs = payload.get("inputs") or {}
        number = str(inputs.get("pr_number") or inputs.get("pr") or "").strip()
        fields = {"head_sha": sha or None}
        if number.isdigit():
            fields["pr_number"] = int(number)
        return fields
    return {"head_sha": sha or None}


# --------------------------------------------------------------------------- REST client

_WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "PATCH", "DELETE"})
_LINK_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="next"')


class GitHubClient:
    """A small GitHub REST client on `requests.Session`.

    Retry rule (contract §3, "Rate limits", from GitHub's best-practices page):
    - 429, or a 403 that is a rate limit: wait `retry-after` seconds if given; else, if
      `x-ratelimit-remaining` is 0, until `x-ratelimit-reset` (epoch seconds); else
      `secondary_wait` (60 s), doubling on each further try.
    - 5xx and network errors on idempotent methods: back off from `backoff` seconds, doubling.
    - POST is not retried after a 5xx or a network error, because GitHub may have acted on
      it; the caller decides (see `upsert_sticky_comment`).
    - At most `max_attempts` tries; a wait longer than `max_wait` is not waited for
      (RateLimited is raised at once, so a job does not sleep for an hour).
    - Writes are spaced at least `write_interval` seconds apart, as GitHub asks.

    Errors: BadCredentials (401), PermissionDenied (403), NotFound (404), ValidationFailed
    (422), RateLimited, TransientError, GitHubError (anything else).
    The token is sent only in the Authorization header and never appears in a message.
    """

    def __init__(
        self,
        token: str,
        api_url: str = "https://api.github.com",
        *,
        session: requests.Session | None = None,
        timeout: tuple[float, float] = (10.0, 30.0),
        max_attempts: int = 5,
        backoff: float = 1.0,
        secondary_wait: float = 60.0,
        max_wait: float = 300.0,
        write_interval: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        user_agent: str = "adk-eval-action",
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self.backoff = backoff
        self.secondary_wait = secondary_wait
        self.max_wait = max_wait
        self.write_interval = write_interval
        self._sleep = sleep
        self._clock = clock
        self._last_write: float | None = None
        self.session = session or requests.Session()
        self.session.headers.update({
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": user_agent,
        })
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def url(self, path: str) -> str:
        """Absolute URL for an API path ("/repos/o/r") or an absolute URL from a Link header."""
        if path.startswith(("http://", "https://")):
            return path
        return f"{self.api_url}/{path.lstrip('/')}"

    def request(
        self, method: str, path: str, *, json_body: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> requests.Response:
        """One REST call with the retry rule above; returns the 2xx/3xx response."""
        method = method.upper()
        url = self.url(path)
        shown = _shown_path(url, self.api_url)
        for attempt in range(1, self.max_attempts + 1):
            self._space_writes(method)
            try:
                response = self.session.request(
                    method, url, json=json_body, params=params, timeout=self.timeout,
                )
            except (requests.ConnectionError, requests.Timeout) as exc:
                # A POST may have reached GitHub before the connection broke; only the
                # caller knows whether trying again could duplicate its effect.
                if attempt < self.max_attempts and method in _IDEMPOTENT:
                    self.pause(self.backoff_seconds(attempt))
                    continue
                raise TransientError(
                    f"GitHub API unreachable: {method} {shown}: {type(exc).__name__}",
                    method=method, path=shown,
                ) from exc
            if method in _WRITE_METHODS:
                self._last_write = self._clock()
            if response.status_code < 400:
                return response
            wait = self._retry_wait(response, attempt, method)
            if wait is None or attempt == self.max_attempts or wait > self.max_wait:
                raise _error_for(response, method, shown, wait)
            self.pause(wait)
        raise AssertionError("unreachable")  # the loop returns or raises

    def get_json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params).json()

    def post_json(self, path: str, body: Mapping[str, Any]) -> Any:
        return self.request("POST", path, json_body=body).json()

    def patch_json(self, path: str, body: Mapping[str, Any]) -> Any:
        return self.request("PATCH", path, json_body=body).json()

    def paginate(self, path: str, params: Mapping[str, Any] | None = None) -> Iterator[Any]:
        """Yield the items of a list endpoint across all pages, following `link: rel="next"`.

        Doc: rest/using-the-rest-api/using-pagination-in-the-rest-api (contract §3). The next
        URL already carries the query, so params are sent with the first page only.
        """
        url: str | None = path
        query: Mapping[str, Any] | None = {"per_page": 100, **(params or {})}
        while url:
            response = self.request("GET", url, params=query)
            items = response.json()
            if not isinstance(items, list):
                raise GitHubError(f"expected a list from GET {_shown_path(response.url, '')}")
            yield from items
            match = _LINK_NEXT.search(response.headers.get("link", ""))
            url, query = (match.group(1), None) if match else (None, None)

    # -- helpers

    def _space_writes(self, method: str) -> None:
        if method in _WRITE_METHODS and self._last_write is not None:
            remaining = self.write_interval - (self._clock() - self._last_write)
            if remaining > 0:
                self._sleep(remaining)

    def pause(self, seconds: float) -> None:
        """Sleep through the injected `sleep` (tests pass a recorder)."""
        self._sleep(seconds)

    def backoff_seconds(self, attempt: int) -> float:
        """Exponential backoff for the `attempt`-th failure: backoff * 2**(attempt-1)."""
        return min(self.backoff * 2 ** (attempt - 1), self.max_wait)

    def _retry_wait(self, response: requests.Response, attempt: int, method: str) -> float | None:
        """Seconds to wait before retrying `response`, or None when it must not be retried."""
        status = response.status_code
        if status == 429 or (status == 403 and _is_rate_limit(response)):
            retry_after = response.headers.get("retry-after", "").strip()
            if retry_after.isdigit():
                return float(retry_after)
            if response.headers.get("x-ratelimit-remaining") == "0":
                reset = response.headers.get("x-ratelimit-reset", "").strip()
                if reset.isdigit():
                    return max(0.0, float(reset) - self._clock()) + 1.0
            return self.secondary_wait * 2 ** (attempt - 1)
        if status >= 500 and method in _IDEMPOTENT:
            return self.backoff_seconds(attempt)
        return None


def _shown_path(url: str, api_url: str) -> str:
    """The URL path for messages, without host or query (queries may hold anything)."""
    path = url.split("?", 1)[0]
    if api_url and path.startswith(api_url):
        return path[len(api_url):] or "/"
    return path


def _is_rate_limit(response: requests.Response) -> bool:
    """A 403 is a rate limit when GitHub says so in headers or message (rate-limits doc)."""
    if response.headers.get("retry-after") or response.headers.get("x-ratelimit-remaining") == "0":
        return True
    return "rate limit" in _github_message(response).lower()


def _github_message(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(body, dict):
        message = str(body.get("message") or "")
        details = [
            str(e.get("message") or e.get("code") or "")
            for e in body.get("errors") or [] if isinstance(e, dict)
        ]
        return "; ".join(filter(None, [message, *details]))
    return ""


def _error_for(
    response: requests.Response, method: str, path: str, wait: float | None,
) -> GitHubError:
    """The named exception, with a message that says what to do (401/403/404/422)."""
    status = response.status_code
    said = _github_message(response)
    where = f"{method} {path}"
    kwargs = {"status": status, "method": method, "path": path, "github_message": said}
    if status == 429 or (status == 403 and _is_rate_limit(response)):
        when = f"; GitHub asks to wait {wait:.0f} s" if wait is not None else ""
        return RateLimited(f"GitHub rate limit hit on {where} ({status}: {said}){when}", **kwargs)
    if status == 401:
        return BadCredentials(
            f"GitHub rejected the token on {where} (401 {said or 'Bad credentials'}). "
            "Check the github_token input: it must be a valid token for this repository.",
            **kwargs,
        )
    if status == 403:
        error = PermissionDenied(f"GitHub refused {where} (403 {said}).", **kwargs)
        if error.read_only_token:
            error.args = (
                f"GitHub refused {where} (403 {said}): the token is read-only. Pull requests "
                "from forks and Dependabot get a read-only GITHUB_TOKEN; post the comment from "
                "a workflow_run workflow (docs/action.md, 'Pull requests from forks'). "
                "Otherwise give the job `permissions: pull-requests: write`.",
            )
        return error
    if status == 404:
        return NotFound(
            f"GitHub answered 404 for {where}: it does not exist, or this token cannot see "
            "it (GitHub answers 404 rather than 403 for private resources).",
            **kwargs,
        )
    if status == 422:
        return ValidationFailed(f"GitHub refused the request {where} (422 {said}).", **kwargs)
    if status >= 500:
        return TransientError(f"GitHub server error on {where} ({status} {said}).", **kwargs)
    return GitHubError(f"GitHub API error on {where} ({status} {said}).", **kwargs)


# --------------------------------------------------------------------------- REST calls


def _repo_path(repository: str) -> str:
    owner, _, name = repository.partition("/")
    if not owner or not name:
        raise EventContextError(f"repository must be 'owner/name', got {repository!r}")
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"


def token_login(client: GitHubClient) -> str:
    """Login of the token's own identity, to pick only our comments.

    `GET /user` answers for personal tokens. Installation tokens, `GITHUB_TOKEN` among them,
    get 403 "Resource not accessible by integration" (or 404) there; the workflow token's
    identity is then `github-actions[bot]`. A token of another GitHub App also falls back to
    that login, so such an app's earlier comment is not found and a new one is made: pass a
    personal token or GITHUB_TOKEN to keep one sticky comment.
    """
    try:
        user = client.get_json("/user")
    except (PermissionDenied, NotFound):
        return DEFAULT_BOT_LOGIN
    return str(user.get("login") or DEFAULT_BOT_LOGIN)


def get_pull(client: GitHubClient, repository: str, number: int) -> _JSON:
    """`GET /repos/{o}/{r}/pulls/{n}` (rest/pulls/pulls#get-a-pull-request)."""
    return client.get_json(f"{_repo_path(repository)}/pulls/{int(number)}")


def pulls_for_commit(client: GitHubClient, repository: str, sha: str) -> list[_JSON]:
    """Pull requests associated with a commit: `GET /repos/{o}/{r}/commits/{sha}/pulls`.

    GitHub returns the merged PR for a commit on the default branch, plus open PRs whose
    head contains it otherwise (rest/commits/commits#list-pull-requests-associated-with-a-commit).
    """
    return list(client.paginate(f"{_repo_path(repository)}/commits/{quote(sha, safe='')}/pulls"))


# --------------------------------------------------------------------------- sticky comment

_MARKER_PREFIX = "<!-- adk-eval-action:"
_MARKER_RE = re.compile(r"<!-- adk-eval-action[:-][^>]*-->")  # key and head markers
_TRUNCATION_NOTE = (
    "\n\n> **Note:** this comment was cut to fit GitHub's {limit:,}-character limit. "
    "The full report is in the job summary and the results file of the workflow run."
)


def comment_marker(key: str = "default") -> str:
    """Hidden HTML comment that identifies our comment for one suite/workflow (`key`).

    Several workflows or suites on one PR each keep their own comment by using distinct
    keys. The key is reduced to `[A-Za-z0-9._/-]` so it cannot close the HTML comment; a
    key that had to be changed gets a short hash of the original, so `a b` and `a-b` keep
    two comments.
    """
    key = key.strip() or "default"
    safe = re.sub(r"[^A-Za-z0-9._/-]", "-", key)
    if safe != key:
        safe += "-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
    return f"{_MARKER_PREFIX}{safe} -->"


def strip_markers(body: str) -> str:
    """Remove our markers from an (untrusted) body, so it cannot take over another key."""
    return _MARKER_RE.sub("", body)


def compose_comment_body(
    markdown: str, marker: str, run_url: str | None = None, limit: int = COMMENT_MAX_CHARS,
) -> str:
    """Final comment body: the rendered markdown, a link to the run, the marker last.

    Guarantees `len(result) <= limit` (GitHub counts characters; 422 above 65,536). The
    renderer normally already fits; a custom template may not, so the markdown is cut at a
    line boundary and a note says where the full report is.
    """
    # The renderer may already link the run (it gets run_url too); link it once.
    footer = f"\n\n[Workflow run]({run_url})" if run_url and run_url not in markdown else ""
    footer += f"\n{marker}\n"
    room = limit - len(footer)
    body = markdown.rstrip("\n")
    if len(body) > room:
        note = _TRUNCATION_NOTE.format(limit=limit)
        cut = body[: max(0, room - len(note))]
        if "\n" in cut:
            cut = cut[: cut.rfind("\n")]
        body = cut + note
    return body + footer


class CommentResult(BaseModel):
    """What `upsert_sticky_comment` did: the comment's id and html URL."""

    id: int
    url: str
    action: Literal["created", "updated"]


def find_sticky_comment(
    client: GitHubClient, repository: str, pr_number: int, marker: str, author_login: str,
) -> _JSON | None:
    """Our earlier comment on the PR: by `author_login`, containing `marker`; else None.

    Looks through every page (`GET /repos/{o}/{r}/issues/{n}/comments`, rest/issues/comments).
    Logins are compared without a `[bot]` suffix and case-insensitively, since GraphQL's
    viewer login drops the suffix that REST's `user.login` shows (contract §3, "Sticky").
    The oldest match wins so the comment keeps its place in the conversation.
    """
    want = _bare_login(author_login)
    path = f"{_repo_path(repository)}/issues/{int(pr_number)}/comments"
    for comment in client.paginate(path):
        user = comment.get("user") or {}
        if _bare_login(str(user.get("login") or "")) != want:
            continue
        if marker in str(comment.get("body") or ""):
            return comment
    return None


def _bare_login(login: str) -> str:
    login = login.lower()
    return login[: -len("[bot]")] if login.endswith("[bot]") else login


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

    `body` must already end with `marker` (see `compose_comment_body`); it is cut to
    65,536 characters if it does not fit. `author_login` defaults to `token_login(client)`.
    `mode="new"` always creates a comment (older ones stay).

    Never a duplicate: a create that fails with a server error or timeout may still have
    landed, so before trying again the comments are searched again and the found one is
    updated instead. Raises the client's named errors (PermissionDenied for a fork's token).
    """
    if marker not in body:
        body = compose_comment_body(body, marker)
    if len(body) > COMMENT_MAX_CHARS:
        body = compose_comment_body(body.replace(marker, "").rstrip(), marker)
    login = author_login or token_login(client)
    repo_path = _repo_path(repository)
    last_error: TransientError | None = None
    for attempt in range(1, max_attempts + 1):
        if mode == "update":
            existing = find_sticky_comment(client, repository, pr_number, marker, login)
        elif attempt > 1:
            # "new" mode: only the comment a failed create may have made, i.e. this body.
            existing = find_sticky_comment(client, repository, pr_number, body, login)
        else:
            existing = None
        try:
            if existing is not None:
                data = client.patch_json(
                    f"{repo_path}/issues/comments/{int(existing['id'])}", {"body": body},
                )
                return CommentResult(id=data["id"], url=data["html_url"], action="updated")
            data = client.post_json(
                f"{repo_path}/issues/{int(pr_number)}/comments", {"body": body},
            )
            return CommentResult(id=data["id"], url=data["html_url"], action="created")
        except TransientError as exc:
            last_error = exc
            client.pause(client.backoff_seconds(attempt))
    assert last_error is not None
    raise last_error


# --------------------------------------------------------------------------- file commands


def write_outputs(path: Path, outputs: Mapping[str, str]) -> None:
    """Append step outputs to the `GITHUB_OUTPUT` file, each as a multiline-safe block.

    Format `name<<DELIM\\nvalue\\nDELIM\\n` with a random `ghadelimiter_<uuid>` that is
    checked not to occur in the value, as actions/toolkit's file-command.ts does (contract
    §2, docs: workflow-commands "Multiline strings"). Raises ValueError for a bad name.
    """
    chunks = []
    for name, value in outputs.items():
        if not name or "\n" in name or "<<" in name or "=" in name:
            raise ValueError(f"invalid output name {name!r}")
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        while delimiter in value or delimiter in name:  # practically never
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
        chunks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    with path.open("a", encoding="utf-8", newline="\n") as handle:
        handle.write("".join(chunks))


def append_job_summary(
    path: Path, markdown: str, limit_bytes: int = STEP_SUMMARY_MAX_BYTES,
) -> bool:
    """Append markdown to the `GITHUB_STEP_SUMMARY` file without passing its 1 MiB limit.

    Above 1 MiB the runner drops the whole summary (contract §2), so what would not fit is
    cut at a line boundary with a note. Returns True when everything fitted.
    """
    used = path.stat().st_size if path.exists() else 0
    text = markdown if markdown.endswith("\n") else markdown + "\n"
    data = text.encode("utf-8")
    fitted = used + len(data) <= limit_bytes
    if not fitted:
        note = (
            b"\n\n> **Note:** the summary was cut to fit GitHub's 1 MiB step summary limit; "
            b"the results file has everything.\n"
        )
        room = max(0, limit_bytes - used - len(note))
        cut = data[:room].decode("utf-8", errors="ignore")
        if "\n" in cut:
            cut = cut[: cut.rfind("\n") + 1]
        data = cut.encode("utf-8") + note if room else b""
    with path.open("ab") as handle:
        handle.write(data)
    return fitted


# --------------------------------------------------------------------------- workflow commands


def escape_data(value: str) -> str:
    """Escape a command's message: `%`, CR, LF (runner ActionCommand.cs, contract §2)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a command property: as data, plus `:` and `,` (runner ActionCommand.cs)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def workflow_command(name: str, message: str = "", **properties: object) -> str:
    """`::name k=v,...::message` with escaping; properties that are None are left out."""
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items() if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"

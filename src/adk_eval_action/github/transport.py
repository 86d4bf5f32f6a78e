"""The GitHub REST transport: :class:`GitHubClient` (a ``requests.Session`` with GitHub's
retry rules, a per-wait cap and a time budget) and the one error tree of GitHub calls.

Rules from GitHub's "Best practices for using the REST API"
(https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api)
and "Rate limits for the REST API"
(https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api). The token
goes only to ``GITHUB_API_URL``'s own origin and path (``urls.on_api_origin``); listings are
read by ``github.pages``. Nothing here reads ``os.environ``.
"""

from __future__ import annotations

import http.client
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, TypedDict
from urllib.parse import urlsplit

import requests

from adk_eval_action.github.answers import Answer, decode_json, read_body
from adk_eval_action.github.api_errors import (
    BadCredentials,
    GitHubError,
    NotFound,
    PermissionDenied,
    RateLimited,
    TransientError,
    ValidationFailed,
)
from adk_eval_action.github.urls import on_api_origin, origin, shown_path

__all__ = [
    "API_BUDGET_S",
    "MAX_ANSWER_BYTES",
    "MAX_WAIT_S",
    "ApiBudget",
    "BadCredentials",
    "GitHubClient",
    "GitHubError",
    "NotFound",
    "PermissionDenied",
    "RateLimited",
    "TransientError",
    "ValidationFailed",
    "check_api_url",
]

#: Seconds one client (the baseline lookup, publishing) may spend on GitHub in all: calls,
#: retries and waits. Past it the call gives up; the comment stays in its file.
API_BUDGET_S = 120.0
#: Longest single wait for a rate limit or a retry; a longer one is not waited for.
MAX_WAIT_S = 60.0
#: (connect, read) seconds of one HTTP request, less when the budget has less left.
REQUEST_TIMEOUT_S = (10.0, 30.0)
#: Bytes of one answer read at most (decoded): a page of 100 comments of 65,536 characters
#: is under 30 MB; an answer past this is not one GitHub gives.
MAX_ANSWER_BYTES = 64 * 1024 * 1024


class ApiBudget:
    """Seconds a client may still spend on GitHub (calls and waits), measured on
    ``clock`` (monotonic seconds)."""

    def __init__(self, seconds: float = API_BUDGET_S) -> None:
        self.seconds = seconds
        self.used = 0.0

    @property
    def remaining(self) -> float:
        return max(0.0, self.seconds - self.used)

    def spend(self, seconds: float) -> None:
        self.used += max(0.0, seconds)


#: Whole seconds in a header (``str.isdigit`` also takes ``"²"``, which ``float`` refuses).
_SECONDS = re.compile(r"[0-9]+")
_WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "PATCH", "DELETE"})


class GitHubClient:
    """A small GitHub REST client on ``requests.Session``.

    Retry rule (GitHub's "Best practices for using the REST API", "Handle rate limit errors
    appropriately"):

    - 429, or a 403 that is a rate limit: wait ``retry-after`` seconds if given; else, if
      ``x-ratelimit-remaining`` is 0, until ``x-ratelimit-reset`` (epoch seconds); else
      ``secondary_wait`` (60 s), doubling on each further try.
    - 5xx and network errors on idempotent methods: back off from ``backoff`` seconds,
      doubling. POST is not retried after a 5xx or a network error, because GitHub may
      have acted on it; the caller decides (``sticky.upsert_sticky_comment``).
    - At most ``max_attempts`` tries; a wait longer than ``max_wait`` (60 s) or than the
      budget has left is not waited for: the error is raised at once.
    - All calls and waits of this client together stop after ``budget`` seconds
      (:data:`API_BUDGET_S`); each request's read timeout is cut to what is left.
    - Writes are spaced at least ``write_interval`` seconds apart, as GitHub asks.

    Errors: BadCredentials (401), PermissionDenied (403), NotFound (404), ValidationFailed
    (422), RateLimited, TransientError (5xx, network, not JSON, budget), GitHubError.
    The token is sent only in the Authorization header and never appears in a message.
    """

    def __init__(
        self,
        token: str,
        api_url: str = "https://api.github.com",
        *,
        session: requests.Session | None = None,
        timeout: tuple[float, float] = REQUEST_TIMEOUT_S,
        max_attempts: int = 5,
        backoff: float = 1.0,
        secondary_wait: float = 60.0,
        max_wait: float | None = None,
        budget: ApiBudget | float | None = None,
        write_interval: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        user_agent: str = "adk-eval-action",
    ) -> None:
        self.api_url = check_api_url(api_url)
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self.backoff = backoff
        self.secondary_wait = secondary_wait
        # The limits are read when a client is made (None: this module's constants).
        self.max_wait = MAX_WAIT_S if max_wait is None else max_wait
        self.budget = budget if isinstance(budget, ApiBudget) else ApiBudget(
            API_BUDGET_S if budget is None else budget)
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
        """Absolute URL for an API path ("/repos/o/r") or an absolute URL from a Link header.

        Raises:
            GitHubError: an absolute URL that is not on ``GITHUB_API_URL``'s origin and
                path (:func:`on_api_origin`): the token is sent nowhere else.
        """
        if path.startswith(("http://", "https://")):
            if not on_api_origin(path, self.api_url):
                raise GitHubError(f"not sending the token to {origin(path)}: it is not "
                                  f"GITHUB_API_URL ({self.api_url})")
            return path
        return f"{self.api_url}/{path.lstrip('/')}"

    def request(
        self, method: str, path: str, *, json_body: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> Answer:
        """One REST call with the retry rule above; returns the 2xx/3xx answer.

        Raises:
            GitHubError: (a subclass of) as the class docstring lists.
        """
        method = method.upper()
        url = self.url(path)
        shown = shown_path(url, self.api_url)
        for attempt in range(1, self.max_attempts + 1):
            self._space_writes(method)
            response = self._send(method, url, shown, json_body, params, attempt)
            if response is None:
                continue  # a network error worth another try (after its pause)
            if response.status_code < 400:
                return response
            wait = self._retry_wait(response, attempt, method)
            if (wait is None or attempt == self.max_attempts or wait > self.max_wait
                    or wait > self.budget.remaining):
                raise _error_for(response, method, shown, wait)
            self.pause(wait)
        raise AssertionError("unreachable")  # the loop returns or raises

    def _send(
        self, method: str, url: str, shown: str, json_body: Any,
        params: Mapping[str, Any] | None, attempt: int,
    ) -> Answer | None:
        """One HTTP exchange within the budget; None when a network error may be retried."""
        left = self.budget.remaining
        if left <= 0:
            raise TransientError(
                f"GitHub API time budget ({self.budget.seconds:.0f} s) spent before "
                f"{method} {shown}", method=method, path=shown)
        timeout = (min(self.timeout[0], left), min(self.timeout[1], left))
        started = time.monotonic()
        try:
            # Streamed, so that an answer that trickles in or never ends is cut off at
            # the budget and at MAX_ANSWER_BYTES (the read timeout is per read).
            response = self.session.request(
                method, url, json=json_body, params=params, timeout=timeout, stream=True,
            )
            body = read_body(response, started + left, MAX_ANSWER_BYTES, f"{method} {shown}")
        except (requests.ConnectionError, requests.Timeout) as exc:
            self.budget.spend(time.monotonic() - started)
            malformed = _malformed_head(exc)
            if malformed:  # the API answered; asking again gets the same answer
                raise GitHubError(f"GitHub API answered {method} {shown} with {malformed}",
                                  method=method, path=shown) from exc
            # A POST may have reached GitHub before the connection broke; only the
            # caller knows whether trying again could duplicate its effect.
            pause = self.backoff_seconds(attempt)
            if (attempt < self.max_attempts and method in _IDEMPOTENT
                    and pause <= self.budget.remaining):
                self.pause(pause)
                return None
            raise TransientError(
                f"GitHub API unreachable: {method} {shown}: {type(exc).__name__}",
                method=method, path=shown,
            ) from exc
        except requests.RequestException as exc:  # invalid URL, too many redirects, ...
            raise GitHubError(f"GitHub API request {method} {shown} failed: "
                              f"{type(exc).__name__}", method=method, path=shown) from exc
        except TransientError:
            self.budget.spend(time.monotonic() - started)
            raise
        self.budget.spend(time.monotonic() - started)
        if method in _WRITE_METHODS:
            self._last_write = self._clock()
        return Answer.of(response, body)

    def get_json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """``GET path`` decoded (raises TransientError when the answer is not JSON)."""
        return decode_json(self.request("GET", path, params=params), "GET")

    def post_json(self, path: str, body: Mapping[str, Any]) -> Any:
        return decode_json(self.request("POST", path, json_body=body), "POST")

    def patch_json(self, path: str, body: Mapping[str, Any]) -> Any:
        return decode_json(self.request("PATCH", path, json_body=body), "PATCH")

    # -- helpers

    def _space_writes(self, method: str) -> None:
        if method in _WRITE_METHODS and self._last_write is not None:
            remaining = self.write_interval - (self._clock() - self._last_write)
            if remaining > 0:
                self._sleep(remaining)

    def pause(self, seconds: float) -> None:
        """Sleep through the injected ``sleep`` (tests pass a recorder); counts against
        the budget."""
        self.budget.spend(seconds)
        self._sleep(seconds)

    def backoff_seconds(self, attempt: int) -> float:
        """Exponential backoff for the ``attempt``-th failure: backoff * 2**(attempt-1)."""
        return min(self.backoff * 2.0 ** (attempt - 1), self.max_wait)

    def _retry_wait(self, response: Answer, attempt: int, method: str) -> float | None:
        """Seconds to wait before retrying ``response``, or None when it must not be retried."""
        status = response.status_code
        if status == 429 or (status == 403 and _is_rate_limit(response)):
            retry_after = response.headers.get("retry-after", "").strip()
            if _SECONDS.fullmatch(retry_after):
                return float(retry_after)
            if response.headers.get("x-ratelimit-remaining") == "0":
                reset = response.headers.get("x-ratelimit-reset", "").strip()
                if _SECONDS.fullmatch(reset):
                    return max(0.0, float(reset) - self._clock()) + 1.0
            return self.secondary_wait * 2.0 ** (attempt - 1)
        if status >= 500 and method in _IDEMPOTENT:
            return self.backoff_seconds(attempt)
        return None


def check_api_url(url: str) -> str:
    """``url`` (``GITHUB_API_URL``) without a trailing slash, when it is an absolute
    http(s) URL with a host.

    Raises:
        GitHubError: anything else (``127.0.0.1:8080``, ``ftp://...``), named.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GitHubError(f"GITHUB_API_URL must be an http(s) URL with a host, got {url!r}")
    return url.rstrip("/")


def _malformed_head(exc: BaseException) -> str:
    """What was wrong with the head of an answer that ``http.client`` refused (a header
    line over its 65,536-byte limit, more than 100 headers), found in ``exc``'s chain of
    causes and arguments; "" for any other network error."""
    todo: list[object] = [exc]
    seen: set[int] = set()
    while todo:
        item = todo.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, http.client.LineTooLong):
            limit = getattr(http.client, "_MAXLINE", 65_536)
            return (f"a header line over http.client's limit of {limit:,} "
                    "bytes (not an answer GitHub gives)")
        if type(item) is http.client.HTTPException and "headers" in str(item):
            return f"more headers than http.client reads ({item})"
        todo += [item.__cause__, item.__context__, *item.args]
    return ""


def _is_rate_limit(response: Answer) -> bool:
    """A 403 is a rate limit when GitHub says so in headers or message (rate-limits doc)."""
    if response.headers.get("retry-after") or response.headers.get("x-ratelimit-remaining") == "0":
        return True
    return "rate limit" in _github_message(response).lower()


def _github_message(response: Answer) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(body, dict):
        message = str(body.get("message") or "")
        errors = body.get("errors")
        details = [
            str(e.get("message") or e.get("code") or "")
            for e in (errors if isinstance(errors, list) else []) if isinstance(e, dict)
        ]
        return "; ".join(filter(None, [message, *details]))
    return ""


class _ErrorFields(TypedDict):
    """What every :class:`GitHubError` of a response carries beside its message."""

    status: int
    method: str
    path: str
    github_message: str


def _error_for(
    response: Answer, method: str, path: str, wait: float | None,
) -> GitHubError:
    """The named exception, with a message that says what to do (401/403/404/422)."""
    status = response.status_code
    said = _github_message(response)
    where = f"{method} {path}"
    kwargs: _ErrorFields = {"status": status, "method": method, "path": path,
                            "github_message": said}
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

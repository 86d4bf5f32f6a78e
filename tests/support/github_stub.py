"""A local stand-in for the part of GitHub's REST API that the action uses.

A threaded HTTP server on 127.0.0.1 (any free port) that keeps issue comments in memory in
GitHub's shapes (rest/issues/comments), paginates with `link` headers (30 per page unless
`per_page` says otherwise, at most 100), refuses bodies over 65,536 characters with 422,
answers 401 for unknown tokens and 403 "Resource not accessible by integration" for writes
with a read-only token, and answers queued failures (403 rate limit, 429, 5xx) with
GitHub's headers on demand. It may serve under a prefix, as GHES does (`/api/v3`).

Usage:
    with GitHubStub(tokens={"t0k": "github-actions[bot]"}) as gh:
        gh.api_url  # "http://127.0.0.1:PORT" (+ prefix)
        gh.fail_next(429, headers={"retry-after": "1"})
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

BODY_LIMIT = 65_536


@dataclass
class Failure:
    """A canned error response, used once for the next matching request."""

    status: int
    headers: dict[str, str]
    body: dict[str, Any]
    method: str | None = None
    path_pattern: str | None = None
    after: bool = False  # process the request first, then answer with the failure
    raw: bytes | None = None  # the body as sent (not JSON-encoded): broken answers
    delay: float = 0.0  # seconds to wait before answering: a slow API


@dataclass
class Token:
    """What a token may do: its login, whether it may write, whether `GET /user` works."""

    login: str
    writable: bool = True
    installation: bool = False  # installation tokens get 403 on GET /user


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class State:
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)  # id -> comment
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)  # number -> pull
    commit_pulls: dict[str, list[int]] = field(default_factory=dict)  # sha -> pull numbers
    failures: list[Failure] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    next_id: int = 1000


class GitHubStub:
    """The stand-in server; a context manager that starts and stops it."""

    def __init__(
        self,
        tokens: Mapping[str, str | Token] | None = None,
        repository: str = "octo/agents",
        prefix: str = "",
        host: str = "127.0.0.1",
    ) -> None:
        raw = tokens if tokens is not None else {"test-token": Token("github-actions[bot]",
                                                                     installation=True)}
        self.tokens = {k: v if isinstance(v, Token) else Token(v) for k, v in raw.items()}
        self.repository = repository
        self.prefix = prefix.rstrip("/")
        self.state = State()
        self.lock = threading.Lock()
        stub = self

        class Handler(_Handler):
            server_stub = stub

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # -- lifecycle

    def __enter__(self) -> GitHubStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def api_url(self) -> str:
        return self.base_url + self.prefix

    # -- test controls

    def fail_next(
        self, status: int, *, headers: dict[str, str] | None = None,
        message: str | None = None, times: int = 1, method: str | None = None,
        path: str | None = None, after: bool = False, raw: bytes | None = None,
        delay: float = 0.0,
    ) -> None:
        """Queue `times` canned answers for the next requests matching method/path regex.

        `after=True` carries the request out before failing, like a 502 from a proxy whose
        upstream did create the comment. `raw` is sent as the body instead of GitHub's
        error JSON (`status` 200 with `raw=b"{not json"` is a broken success); `delay`
        seconds pass before the answer.
        """
        default = {
            403: "API rate limit exceeded for installation.",
            429: "You have exceeded a secondary rate limit.",
            500: "Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
        }.get(status, "Error")
        body = {
            "message": message or default,
            "documentation_url": "https://docs.github.com/rest",
            "status": str(status),
        }
        with self.lock:
            for _ in range(times):
                self.state.failures.append(
                    Failure(status, dict(headers or {}), body, method, path, after, raw, delay))

    def add_pull(
        self, number: int, head_sha: str, *, base_ref: str = "main", head_ref: str = "feature",
        fork: bool = False, state: str = "open", commits: list[str] | None = None,
    ) -> dict[str, Any]:
        """Create a pull request (rest/pulls/pulls shape, the fields we read)."""
        base_repo = {"full_name": self.repository, "fork": False}
        head_repo = {"full_name": "forker/agents" if fork else self.repository, "fork": fork}
        pull = {
            "number": number, "state": state,
            "html_url": f"{self.base_url}/{self.repository}/pull/{number}",
            "head": {"sha": head_sha, "ref": head_ref, "repo": head_repo},
            "base": {"sha": "b" * 40, "ref": base_ref, "repo": base_repo},
        }
        with self.lock:
            self.state.pulls[number] = pull
            for sha in commits or [head_sha]:
                self.state.commit_pulls.setdefault(sha, []).append(number)
        return pull

    def add_comment(self, number: int, body: str, login: str) -> dict[str, Any]:
        with self.lock:
            return self._new_comment(number, body, login)

    def comments(self, number: int | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [
                dict(c) for c in sorted(self.state.comments.values(), key=lambda c: c["id"])
                if number is None or c["_issue"] == number
            ]

    def requests(self, method: str | None = None) -> list[Recorded]:
        with self.lock:
            return [r for r in self.state.requests if method is None or r.method == method]

    # -- internals (called with the lock held)

    def _comments_sorted(self) -> list[dict[str, Any]]:
        return sorted(self.state.comments.values(), key=lambda c: c["id"])

    def _new_comment(self, number: int, body: str, login: str) -> dict[str, Any]:
        self.state.next_id += 1
        cid = self.state.next_id
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        api = f"{self.api_url}/repos/{self.repository}"
        comment = {
            "id": cid,
            "node_id": f"IC_{cid}",
            "url": f"{api}/issues/comments/{cid}",
            "html_url": f"{self.base_url}/{self.repository}/pull/{number}#issuecomment-{cid}",
            "issue_url": f"{api}/issues/{number}",
            "body": body,
            "user": {"login": login, "id": 41898282,
                     "type": "Bot" if login.endswith("[bot]") else "User"},
            "created_at": now,
            "updated_at": now,
            "author_association": "NONE",
            "_issue": number,
        }
        self.state.comments[cid] = comment
        return comment


def _public(comment: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in comment.items() if not k.startswith("_")}


class _Handler(BaseHTTPRequestHandler):
    server_stub: GitHubStub
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm the second waits for
    # the client's delayed ACK (40 ms on Linux) on every keep-alive response.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Quiet: pytest shows the recorded requests when it matters."""

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    # -- plumbing

    def _send(
        self, status: int, body: Any, headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> None:
        if getattr(self, "_suppressed", False):
            return  # the canned failure answers instead (fail_next(after=True))
        data = raw if raw is not None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-ratelimit-limit", "1000")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if not headers or "x-ratelimit-remaining" not in headers:
            self.send_header("x-ratelimit-remaining", "999")
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, **extra: Any) -> None:
        self._send(status, {"message": message,
                            "documentation_url": "https://docs.github.com/rest", **extra})

    def _dispatch(self, method: str) -> None:
        stub = self.server_stub
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            self._error(400, "Problems parsing JSON")
            return
        path = parts.path
        with stub.lock:
            stub.state.requests.append(Recorded(method, path, query, dict(self.headers), body))
            failure = self._take_failure(method, path)
        if failure is not None and failure.delay:
            time.sleep(failure.delay)
        if failure is not None and not failure.after:
            self._send(failure.status, failure.body, failure.headers, failure.raw)
            return
        self._suppressed = failure is not None
        if stub.prefix:
            if not path.startswith(stub.prefix + "/"):
                self._error(404, "Not Found")
                return
            path = path[len(stub.prefix):]
        auth = self.headers.get("Authorization", "")
        token = stub.tokens.get(re.sub(r"^(Bearer|token)\s+", "", auth))
        if token is None:
            self._error(401, "Bad credentials")
            return
        with stub.lock:
            self._route(method, path, query, body, token)
        if failure is not None:
            self._suppressed = False
            self._send(failure.status, failure.body, failure.headers, failure.raw)

    def _take_failure(self, method: str, path: str) -> Failure | None:
        for index, failure in enumerate(self.server_stub.state.failures):
            if failure.method and failure.method != method:
                continue
            if failure.path_pattern and not re.search(failure.path_pattern, path):
                continue
            return self.server_stub.state.failures.pop(index)
        return None

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any, token: Token,
    ) -> None:
        stub = self.server_stub
        repo = re.escape(stub.repository)
        if method == "GET" and path == "/user":
            if token.installation:
                self._error(403, "Resource not accessible by integration")
            else:
                self._send(200, {"login": token.login, "id": 1, "type": "User"})
            return
        if m := re.fullmatch(rf"/repos/{repo}/issues/(\d+)/comments", path):
            number = int(m.group(1))
            if method == "GET":
                items = [_public(c) for c in stub._comments_sorted() if c["_issue"] == number]
                self._send_page(path, query, items)
                return
            if method == "POST":
                self._write_comment(token, body, lambda text: stub._new_comment(
                    number, text, token.login), 201)
                return
        if (m := re.fullmatch(rf"/repos/{repo}/issues/comments/(\d+)", path)) and \
                method == "PATCH":
            comment = stub.state.comments.get(int(m.group(1)))
            if comment is None:
                self._error(404, "Not Found")
                return

            def update(text: str) -> dict[str, Any]:
                comment["body"] = text
                comment["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                return comment

            self._write_comment(token, body, update, 200)
            return
        if (m := re.fullmatch(rf"/repos/{repo}/pulls/(\d+)", path)) and method == "GET":
            pull = stub.state.pulls.get(int(m.group(1)))
            self._send(200, pull) if pull else self._error(404, "Not Found")
            return
        if (m := re.fullmatch(rf"/repos/{repo}/commits/([0-9a-f]+)/pulls", path)) and \
                method == "GET":
            numbers = stub.state.commit_pulls.get(m.group(1), [])
            self._send_page(path, query, [stub.state.pulls[n] for n in numbers])
            return
        self._error(404, "Not Found")

    def _write_comment(self, token: Token, body: Any, apply: Any, status: int) -> None:
        if not token.writable:
            self._error(403, "Resource not accessible by integration")
            return
        text = body.get("body") if isinstance(body, dict) else None
        if not isinstance(text, str):
            self._error(422, "Invalid request.\n\n\"body\" wasn't supplied.")
            return
        if len(text) > BODY_LIMIT:
            self._error(422, "Validation Failed", errors=[{
                "resource": "IssueComment", "code": "custom", "field": "body",
                "message": f"body is too long (maximum is {BODY_LIMIT} characters)",
            }])
            return
        self._send(status, _public(apply(text)))

    def _send_page(self, path: str, query: dict[str, list[str]], items: list[Any]) -> None:
        per_page = min(100, int((query.get("per_page") or ["30"])[0]))
        page = max(1, int((query.get("page") or ["1"])[0]))
        chunk = items[(page - 1) * per_page: page * per_page]
        last = max(1, -(-len(items) // per_page))
        links = []
        base = self.server_stub.base_url + self.server_stub.prefix + path

        def url(n: int) -> str:
            return f"{base}?{urlencode({'per_page': per_page, 'page': n})}"

        if page < last:
            links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
        if page > 1:
            links += [f'<{url(1)}>; rel="first"', f'<{url(page - 1)}>; rel="prev"']
        self._send(200, chunk, {"link": ", ".join(links)} if links else None)


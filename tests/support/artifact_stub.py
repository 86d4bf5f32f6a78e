"""A stand-in for GitHub's Actions artifact endpoints, on top of tests/github_stub.py.

Extends :class:`github_stub.GitHubStub` (it is not edited) with the REST calls the baseline
search makes, in GitHub's shapes (rest/actions/artifacts, rest/actions/workflow-runs,
rest/commits/commits, rest/repos/repos):

* ``GET /repos/{o}/{r}`` (``default_branch``)
* ``GET /repos/{o}/{r}/compare/{base}...{head}`` (``merge_base_commit``)
* ``GET /repos/{o}/{r}/commits?sha=`` (history from a sha, newest first, with parents)
* ``GET /repos/{o}/{r}/actions/artifacts?name=`` (wrapped list, paginated by ``link``)
* ``GET /repos/{o}/{r}/actions/runs/{id}``
* ``GET /repos/{o}/{r}/actions/artifacts/{id}/zip``: 302 to a *second* server on
  127.0.0.1 (another origin) whose URL is a signed blob link; 410 for an expired artifact.

The blob server answers 400 to any request that carries an Authorization header, as the
real blob storage does (contract §5), and records the headers it saw.

Usage:
    with ArtifactStub(tokens={"t": Token("github-actions[bot]", installation=True)}) as gh:
        gh.add_commits(["c3", "c2", "c1"])          # first-parent line, newest first
        gh.add_artifact(head_sha="c2", zip_bytes=zipped, conclusion="success")
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlencode

from support.github_stub import GitHubStub, Token

__all__ = ["ArtifactStub", "BlobServer", "Token"]

REPO_ID = 4242


@dataclass
class BlobServer:
    """The blob host the zip redirect points at: another origin on 127.0.0.1."""

    blobs: dict[str, bytes] = field(default_factory=dict)
    seen_headers: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        blob = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # see github_stub._Handler

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                """Quiet."""

            def do_GET(self) -> None:
                blob.seen_headers.append(dict(self.headers))
                key = self.path.split("?", 1)[0].rsplit("/", 1)[-1]
                if self.headers.get("Authorization"):
                    # Azure blob storage refuses a second credential next to the SAS.
                    self._answer(400, b"<Error><Code>InvalidAuthenticationInfo</Code></Error>")
                elif key in blob.blobs:
                    self._answer(200, blob.blobs[key], "application/zip")
                else:
                    self._answer(404, b"<Error><Code>BlobNotFound</Code></Error>")

            def _answer(self, status: int, data: bytes, kind: str = "application/xml") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"


class ArtifactStub(GitHubStub):
    """GitHubStub plus workflow runs, artifacts, commits and zip downloads."""

    def __init__(self, *args: Any, default_branch: str = "main", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default_branch = default_branch
        self.commits: list[dict[str, Any]] = []  # newest first
        self.merge_bases: dict[tuple[str, str], str] = {}
        self.artifacts: list[dict[str, Any]] = []
        self.runs: dict[int, dict[str, Any]] = {}
        self.blob = BlobServer()
        self._next_artifact = 9000
        stub = self
        base_handler = self.server.RequestHandlerClass

        class Handler(base_handler):  # type: ignore[misc, valid-type]
            def _route(self, method: str, path: str, query: dict[str, list[str]], body: Any,
                       token: Token) -> None:
                if method == "GET" and stub._route_actions(self, path, query):
                    return
                super()._route(method, path, query, body, token)

        self.server.RequestHandlerClass = Handler

    def __enter__(self) -> ArtifactStub:
        self.blob.thread.start()
        super().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self.blob.server.shutdown()
        self.blob.server.server_close()

    # -- test controls

    def add_commits(self, shas: list[str]) -> None:
        """A first-parent line of commits, newest first; each one's parent is the next."""
        with self.lock:
            for index, sha in enumerate(shas):
                parents = [{"sha": shas[index + 1]}] if index + 1 < len(shas) else []
                self.commits.append({"sha": sha, "parents": parents,
                                     "commit": {"message": f"commit {sha[:7]}"}})

    def set_merge_base(self, base: str, head: str, sha: str) -> None:
        with self.lock:
            self.merge_bases[(base, head)] = sha

    def add_artifact(
        self, head_sha: str, zip_bytes: bytes, *, name: str = "adk-eval-results",
        conclusion: str = "success", event: str = "push", expired: bool = False,
        created_at: str = "2026-01-01T00:00:00Z", fork: bool = False,
    ) -> dict[str, Any]:
        """An artifact uploaded by a new workflow run on ``head_sha``."""
        with self.lock:
            self._next_artifact += 1
            artifact_id = self._next_artifact
            run_id = artifact_id + 100_000
            self.runs[run_id] = {
                "id": run_id, "event": event, "status": "completed", "conclusion": conclusion,
                "head_sha": head_sha, "head_branch": self.default_branch,
                "html_url": f"{self.base_url}/{self.repository}/actions/runs/{run_id}",
                "created_at": created_at, "updated_at": created_at,
            }
            artifact = {
                "id": artifact_id, "node_id": f"MDg6QXJ0aWZhY3Q{artifact_id}", "name": name,
                "size_in_bytes": len(zip_bytes), "expired": expired,
                "created_at": created_at, "updated_at": created_at,
                "expires_at": "2026-04-01T00:00:00Z",
                "archive_download_url":
                    f"{self.api_url}/repos/{self.repository}/actions/artifacts/{artifact_id}/zip",
                "workflow_run": {
                    "id": run_id, "repository_id": REPO_ID,
                    "head_repository_id": REPO_ID + 1 if fork else REPO_ID,
                    "head_branch": self.default_branch, "head_sha": head_sha,
                },
            }
            self.artifacts.append(artifact)
            self.blob.blobs[f"blob-{artifact_id}"] = zip_bytes
            return artifact

    # -- routes (called by the handler with the stub's lock held)

    def _route_actions(self, handler: Any, path: str, query: dict[str, list[str]]) -> bool:
        repo = f"/repos/{self.repository}"
        if path == repo:
            handler._send(200, {"id": REPO_ID, "full_name": self.repository,
                                "default_branch": self.default_branch})
            return True
        if path.startswith(f"{repo}/compare/"):
            base, _, head = path[len(f"{repo}/compare/"):].partition("...")
            sha = self.merge_bases.get((base, head))
            if sha is None:
                handler._error(404, "Not Found")
            else:
                handler._send(200, {"status": "ahead", "merge_base_commit": {"sha": sha}})
            return True
        if path == f"{repo}/commits":
            start = (query.get("sha") or [""])[0]
            shas = [c["sha"] for c in self.commits]
            if start not in shas:
                handler._error(404, "No commit found for SHA: " + start)
                return True
            per_page = int((query.get("per_page") or ["30"])[0])
            handler._send(200, self.commits[shas.index(start):][:per_page])
            return True
        if path == f"{repo}/actions/artifacts":
            self._artifact_page(handler, path, query)
            return True
        if path.startswith(f"{repo}/actions/runs/"):
            run = self.runs.get(int(path.rsplit("/", 1)[-1]))
            handler._send(200, run) if run else handler._error(404, "Not Found")
            return True
        if path.startswith(f"{repo}/actions/artifacts/") and path.endswith("/zip"):
            artifact_id = int(path.split("/")[-2])
            artifact = next((a for a in self.artifacts if a["id"] == artifact_id), None)
            if artifact is None:
                handler._error(404, "Not Found")
            elif artifact["expired"]:
                handler._error(410, "Artifact has expired")
            else:
                location = f"{self.blob.base_url}/blobs/blob-{artifact_id}?sv=2023&sig=abc"
                handler.send_response(302)
                handler.send_header("Location", location)
                handler.send_header("Content-Length", "0")
                handler.end_headers()
            return True
        return False

    def _artifact_page(self, handler: Any, path: str, query: dict[str, list[str]]) -> None:
        name = (query.get("name") or [None])[0]
        items = [a for a in reversed(self.artifacts) if name is None or a["name"] == name]
        per_page = min(100, int((query.get("per_page") or ["30"])[0]))
        page = max(1, int((query.get("page") or ["1"])[0]))
        chunk = items[(page - 1) * per_page: page * per_page]
        headers = {}
        if page * per_page < len(items):
            params = {"per_page": per_page, "page": page + 1, **({"name": name} if name else {})}
            headers["link"] = f'<{self.api_url}{path}?{urlencode(params)}>; rel="next"'
        handler._send(200, {"total_count": len(items), "artifacts": chunk}, headers or None)

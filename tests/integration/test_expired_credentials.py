"""Google credentials that expired or were revoked (google.auth's ``RefreshError``) are a
credentials error (exit 2) naming what to refresh, never an inference error or a failed
eval case: raised by google-genai on Vertex AI with Application Default Credentials (a
service account key) that the token endpoint refuses, and raised through a model class in
the user's repository.

The token endpoint is a local stand-in (a service account key file names its ``token_uri``)
answering as Google's OAuth 2.0 endpoint answers a deleted key (RFC 6749 section 5.2: 400
``invalid_grant``); google.auth itself turns that answer into the ``RefreshError``
(checked below, independently of this tool).
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.auth import exceptions as auth_errors

from adk_eval_action.adk.runtime.model_faults import REFRESH_HINT, classify_fault
from adk_eval_action.testing.gemini_fake import GeminiFake
from conftest import CliRun, load_json

EVAL_SET = "travel_agent/eval/travel.evalset.json"  # 4 eval cases
REVOKED = {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}


class _TokenEndpoint(http.server.BaseHTTPRequestHandler):
    """Answers every token request 400 invalid_grant and counts them."""

    requests: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length") or 0)
        self.requests.append(self.rfile.read(length).decode())
        body = json.dumps(REVOKED).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def token_endpoint() -> Iterator[str]:
    """A local OAuth token endpoint refusing every refresh; yields its URL."""
    _TokenEndpoint.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _TokenEndpoint)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/token"
    finally:
        server.shutdown()
        server.server_close()


def _revoked_key(path: Path, token_uri: str) -> Path:
    """A service account key file (what GOOGLE_APPLICATION_CREDENTIALS names) whose key the
    endpoint at ``token_uri`` no longer accepts; a fresh RSA key, never a real one."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "revoked-project",
        "private_key_id": "deleted", "private_key": pem,
        "client_email": "evals@revoked-project.iam.gserviceaccount.com",
        "client_id": "1", "token_uri": token_uri,
    }), encoding="utf-8")
    return path


def test_google_auth_itself_raises_refresh_error_and_it_is_a_credentials_fault(
    tmp_path: Path, token_endpoint: str
) -> None:
    import google.auth
    from google.auth.transport.requests import Request

    path = _revoked_key(tmp_path / "key.json", token_endpoint)
    credentials, _ = google.auth.load_credentials_from_file(
        str(path), scopes=["https://www.googleapis.com/auth/cloud-platform"])
    with pytest.raises(auth_errors.RefreshError) as raised:
        credentials.refresh(Request())

    fault = classify_fault(raised.value)
    assert fault is not None and (fault.kind, fault.retryable) == ("credentials", False)
    assert fault.summary == (
        "Google credentials expired or revoked (invalid_grant: Invalid JWT Signature.)")
    # One google.auth marks retryable (the token endpoint's own outage) is a model fault.
    transient = auth_errors.RefreshError("500 from the token endpoint", retryable=True)
    assert (classify_fault(transient) or fault).kind == "model"


def _expect_credentials_error(result: object, results: dict, runs: int) -> None:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    [suite] = results["suites"]
    statuses = {r["status"] for s in suite["eval_sets"] for c in s["eval_cases"]
                for r in c["runs"]}
    assert statuses == {"error"}  # no failed eval case: the agent did nothing wrong
    [error] = [e for e in suite["errors"] if e["kind"] == "credentials"]
    assert error["message"].startswith(
        f"{runs} of {runs} case runs had no usable credentials (Google credentials expired or "
        "revoked (invalid_grant")
    assert error["message"].endswith(f"; {REFRESH_HINT})")
    assert "`gcloud auth application-default login`" in REFRESH_HINT
    assert error["message"] in result.output  # type: ignore[attr-defined]
    assert not [e for e in suite["errors"] if e["kind"] == "inference"]
    assert "gate INCOMPLETE" in result.output  # type: ignore[attr-defined]


def test_revoked_adc_on_vertex_ai_is_a_credentials_error(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake, token_endpoint: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    adc = _revoked_key(example_repo.parent / "key.json", token_endpoint)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    # Vertex AI's own endpoint: the token is refused before any request could leave.
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "revoked-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    gemini_api.clear_calls()

    result = cli("run", EVAL_SET, "--results-out", "r.json", "--baseline", "none")

    assert _TokenEndpoint.requests, result.output
    assert "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer" in (
        _TokenEndpoint.requests[0])
    assert gemini_api.calls == []  # no model was reached
    _expect_credentials_error(result, load_json(example_repo / "r.json"), 4)


OWN_MODEL_AGENT = '''
from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.auth import exceptions


class CorporateGateway(BaseLlm):
    """The repository's own model class: its token for the model gateway has expired."""

    async def generate_content_async(self, llm_request, stream=False):
        raise exceptions.RefreshError(
            "invalid_grant: Token has been expired or revoked.", {"error": "invalid_grant"})
        yield  # an async generator, as BaseLlm's is


root_agent = LlmAgent(name="travel_agent", model=CorporateGateway(model="gateway-1"),
                      instruction="Help with travel.")
'''


def test_refresh_error_raised_through_a_model_class_in_the_repository_is_credentials(
    example_repo: Path, cli: CliRun
) -> None:
    (example_repo / "travel_agent/agent.py").write_text(OWN_MODEL_AGENT, encoding="utf-8")

    result = cli("run", EVAL_SET, "--results-out", "r.json", "--baseline", "none")

    _expect_credentials_error(result, load_json(example_repo / "r.json"), 4)
    assert "the agent raised" not in result.output

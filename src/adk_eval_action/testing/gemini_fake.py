"""A local fake of the Gemini REST API, for running agents on ``gemini-*`` models offline.

Agents declared with ``model="gemini-2.5-flash"`` and ADK's default judge reach it through
ADK's ``Gemini`` class and google-genai's HTTP client unchanged: google-genai sends every call
to ``$GOOGLE_GEMINI_BASE_URL`` (``google.genai._base_url``) with the key of
``$GOOGLE_API_KEY`` in the ``x-goog-api-key`` header. :meth:`GeminiFake.env` gives both.

Served (Gemini API reference, ``models.generateContent`` / ``models.streamGenerateContent``)::

    POST /{version}/models/{model}:generateContent
    POST /{version}/models/{model}:streamGenerateContent?alt=sse   (server-sent events)
    POST /{version}/projects/{p}/locations/{l}/publishers/google/models/{model}:...  (Vertex)
    GET  /_fake/calls      the call log (JSON list of CallRecord)
    PUT  /_fake/faults     replace the faults (JSON list of Fault)
    PUT  /_fake/script     replace the scripted agents (JSON list of AgentScript)

What is answered is :mod:`adk_eval_action.testing.gemini_script`; what can go wrong is a
list of :class:`Fault` (the error bodies are the API's own shapes: ``{"error": {"code",
"message", "status", "details"}}`` with ``google.rpc.RetryInfo`` on 429). Every call is
logged as a :class:`CallRecord`.

Run it on its own (``scripts/example.sh`` does)::

    python -m adk_eval_action.testing.gemini_fake --script examples/gemini_fake.yaml \\
        --port-file out/gemini-fake.port
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import click
import yaml
from pydantic import BaseModel, Field, TypeAdapter

from .gemini_faults import BODY_FAULTS, error_body, send_body_fault
from .gemini_faults import Fault as Fault  # part of this module's API: the faults it injects
from .gemini_script import AgentScript, Role, answer

_CALL_PATH = re.compile(r"^/[^/]+/(?:.*/)?models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")

class CallRecord(BaseModel):
    """One call the fake received.

    Attributes:
        seq: 1-based order of arrival.
        method: ``generateContent`` or ``streamGenerateContent``.
        model: The model named in the URL.
        role: Who called (``agent``, ``judge``, ``user_simulator``, ``unscripted``).
        outcome: ``ok``, the HTTP status of an error, or the fault's kind (``slow``,
            ``malformed``, ``drop``, ``empty``, ``no_candidate``, ``huge``, ``trickle``).
        api_key: Whether an ``x-goog-api-key`` header (or a bearer token) came with it.
        started: ``time.monotonic()`` seconds at arrival.
        duration_s: Seconds until the answer was written (or the connection dropped).
        client_gone: The client closed the connection before the answer (gave up on it).
        request: The request JSON (camelCase, as google-genai sent it).
        usage: The answer's ``usageMetadata`` (tokens reported); None when none was sent.
    """

    seq: int
    method: str
    model: str
    role: str
    outcome: str
    api_key: bool
    started: float
    duration_s: float = 0.0
    client_gone: bool = False
    request: dict[str, Any] = Field(default_factory=dict)
    usage: dict[str, Any] | None = None


class _State:
    """The fake's script, faults and log, shared by its handler threads under one lock."""

    def __init__(self, agents: list[AgentScript], faults: list[Fault], api_key: str | None):
        self.lock = threading.Lock()
        self.api_key = api_key
        self.agents = list(agents)
        self.faults = list(faults)
        self.seen = [0] * len(self.faults)
        self.calls: list[CallRecord] = []
        self.arrivals = 0

    def set_faults(self, faults: list[Fault]) -> None:
        with self.lock:
            self.faults = list(faults)
            self.seen = [0] * len(self.faults)

    def fault_for(self, role: Role) -> Fault | None:
        """The first fault whose window covers this call; counts the call for each fault."""
        chosen = None
        with self.lock:
            for index, fault in enumerate(self.faults):
                if fault.role not in ("any", role):
                    continue
                self.seen[index] += 1
                position = self.seen[index] - fault.after
                within = position > 0 and (fault.times is None or position <= fault.times)
                if within and chosen is None:
                    chosen = fault
        return chosen

    def log(self, record: CallRecord) -> None:
        with self.lock:
            self.calls.append(record)

    def next_seq(self) -> int:
        with self.lock:
            self.arrivals += 1
            return self.arrivals


def _sse(response: dict[str, Any]) -> bytes:
    """The response as server-sent events: a text reply in two chunks, as the API streams."""
    candidate = response["candidates"][0]
    parts = candidate["content"].get("parts") or []
    chunks = [response]
    if len(parts) == 1 and isinstance(parts[0].get("text"), str) and " " in parts[0]["text"]:
        text = parts[0]["text"]
        cut = text.index(" ") + 1
        first = {
            "candidates": [{"content": {"role": "model", "parts": [{"text": text[:cut]}]}}],
            "modelVersion": response.get("modelVersion"),
        }
        last = json.loads(json.dumps(response))
        last["candidates"][0]["content"]["parts"] = [{"text": text[cut:]}]
        chunks = [first, last]
    return b"".join(f"data: {json.dumps(c)}\r\n\r\n".encode() for c in chunks)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm the second waits for
    # the client's delayed ACK (40 ms on Linux) on every keep-alive response.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        """Silenced: the call log is the record."""

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw or b"{}")

    def do_GET(self) -> None:  # noqa: N802 - stdlib's name
        if self.path.rstrip("/") != "/_fake/calls":
            self._send(404, json.dumps(error_body(404)).encode())
            return
        with self.server.state.lock:
            calls = [c.model_dump(mode="json") for c in self.server.state.calls]
        self._send(200, json.dumps(calls).encode())

    def do_PUT(self) -> None:  # noqa: N802 - stdlib's name
        state = self.server.state
        if self.path.rstrip("/") == "/_fake/faults":
            state.set_faults(TypeAdapter(list[Fault]).validate_python(self._body()))
        elif self.path.rstrip("/") == "/_fake/script":
            agents = TypeAdapter(list[AgentScript]).validate_python(self._body())
            with state.lock:
                state.agents = agents
        else:
            self._send(404, json.dumps(error_body(404)).encode())
            return
        self._send(204, b"")

    def do_POST(self) -> None:  # noqa: N802 - stdlib's name
        started = time.monotonic()
        path, _, query = self.path.partition("?")
        found = _CALL_PATH.match(path)
        body = self._body()
        if not found or found["method"] not in ("generateContent", "streamGenerateContent"):
            self._send(404, json.dumps(error_body(404)).encode())
            return
        state = self.server.state
        with state.lock:
            agents = list(state.agents)
        role, response = answer(body, found["model"], agents)
        fault = state.fault_for(role)
        record = CallRecord(
            seq=state.next_seq(),
            method=found["method"],
            model=found["model"],
            role=role,
            outcome="ok",
            api_key=bool(self.headers.get("x-goog-api-key") or self.headers.get("Authorization")),
            started=started,
            request=body,
        )
        key = self.headers.get("x-goog-api-key")
        refused = 403 if not record.api_key else 400 if state.api_key not in (None, key) else 0
        if refused:
            fault = Fault(status=refused)
        # Logged on arrival, so a caller that gives up on a slow answer still sees the call.
        state.log(record)
        try:
            self._answer(found["method"], response, fault, record)
        except (BrokenPipeError, ConnectionResetError):
            record.client_gone = True
            self.close_connection = True
        finally:
            record.duration_s = time.monotonic() - started

    def _answer(
        self, method: str, response: dict[str, Any], fault: Fault | None, record: CallRecord
    ) -> None:
        stream = method == "streamGenerateContent"
        if fault is not None and fault.kind == "drop":
            record.outcome = "drop"
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if fault is not None and fault.kind == "status":
            record.outcome = str(fault.status)
            headers = {}
            if fault.retry_after_s is not None:
                headers["Retry-After"] = f"{fault.retry_after_s:g}"
            body = json.dumps(error_body(fault.status, fault.retry_delay_s)).encode()
            self._send(fault.status, body, headers=headers)
            return
        if fault is not None and fault.kind == "slow":
            record.outcome = "slow"
            time.sleep(fault.delay_s)
        if fault is not None and fault.kind in BODY_FAULTS:
            record.outcome = fault.kind
            send_body_fault(self, fault, stream, response)
            return
        if fault is not None and fault.kind == "malformed":
            record.outcome = "malformed"
            whole = json.dumps(response)
            cut = whole[: len(whole) // 2].encode()
            self._send(200, b"data: " + cut + b"\r\n\r\n" if stream else cut)
            return
        if fault is not None and fault.kind == "no_usage":
            record.outcome = "no_usage"
            response = {k: v for k, v in response.items() if k != "usageMetadata"}
        record.usage = response.get("usageMetadata")
        if stream:
            self._send(200, _sse(response), "text/event-stream")
        else:
            self._send(200, json.dumps(response).encode())


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    state: _State


class GeminiFake:
    """A fake Gemini API (on ``127.0.0.1`` unless told), served from a background thread.

    Use as a context manager (``with GeminiFake(agents) as fake:``), then point google-genai
    at it with :meth:`env`. ``agents``, ``faults`` and ``calls`` may be read and replaced
    while it runs.

    Args:
        agents: Scripted agents (see :class:`gemini_script.AgentScript`).
        faults: Faults, tried in order for each call (see :class:`Fault`).
        port: TCP port; 0 picks a free one.
        host: Address to listen on (``0.0.0.0``: every interface, for a container that
            reaches this host through a Docker bridge; :attr:`base_url` then names it).
        api_key: The one key accepted (any other gets the API's 400 ``API_KEY_INVALID``);
            None accepts any key. A call with no key at all gets the API's 403.
    """

    def __init__(
        self,
        agents: list[AgentScript] | None = None,
        faults: list[Fault] | None = None,
        port: int = 0,
        host: str = "127.0.0.1",
        api_key: str | None = None,
    ):
        self._server = _Server((host, port), _Handler)
        self._server.state = _State(agents or [], faults or [], api_key)
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``, the value for ``GOOGLE_GEMINI_BASE_URL``."""
        host, port = self._server.server_address[:2]
        if isinstance(host, bytes):  # an AF_UNIX-style address; never ours (127.0.0.1)
            host = host.decode()
        return f"http://{host}:{port}"

    def env(self, api_key: str = "fake-gemini-key") -> dict[str, str]:
        """Environment that sends google-genai's Gemini API calls here with a dummy key."""
        return {
            "GOOGLE_GEMINI_BASE_URL": self.base_url,
            "GOOGLE_API_KEY": api_key,
            "GOOGLE_GENAI_USE_VERTEXAI": "false",
        }

    @property
    def calls(self) -> list[CallRecord]:
        """A copy of the call log, in arrival order."""
        with self._server.state.lock:
            return [c.model_copy() for c in self._server.state.calls]

    @property
    def agents(self) -> list[AgentScript]:
        """The scripted agents."""
        return list(self._server.state.agents)

    @agents.setter
    def agents(self, agents: list[AgentScript]) -> None:
        with self._server.state.lock:
            self._server.state.agents = list(agents)

    @property
    def faults(self) -> list[Fault]:
        """The faults in force."""
        return list(self._server.state.faults)

    @faults.setter
    def faults(self, faults: list[Fault]) -> None:
        self._server.state.set_faults(faults)

    def clear_calls(self) -> None:
        """Empties the call log."""
        with self._server.state.lock:
            self._server.state.calls.clear()

    def start(self) -> GeminiFake:
        """Starts serving in a daemon thread; returns self."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="gemini-fake", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops serving and closes the socket (calls in flight are abandoned)."""
        self._server.shutdown()
        self._server.server_close()

    def serve_forever(self) -> None:
        """Serves in the calling thread until interrupted, then closes the socket."""
        try:
            self._server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            self._server.server_close()

    def __enter__(self) -> GeminiFake:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FakeScriptFile(BaseModel):
    """A script file for the command line: ``agents`` and ``faults`` (YAML or JSON)."""

    agents: list[AgentScript] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)


def load_script(path: Path) -> FakeScriptFile:
    """Reads a script file (YAML or JSON, see :class:`FakeScriptFile`).

    Raises:
        pydantic.ValidationError: the file does not have that shape.
    """
    return FakeScriptFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})


@click.command()
@click.option("--script", "script_path", type=click.Path(exists=True, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; 0.0.0.0 for containers on a Docker bridge.")
@click.option("--port", type=int, default=0, show_default=True, help="0 picks a free port.")
@click.option("--port-file", type=click.Path(path_type=Path), help="Write the port here.")
@click.option("--fault", "faults", multiple=True, help="A Fault as JSON, e.g. '{\"status\": 503}'.")
def main(
    script_path: Path | None, host: str, port: int, port_file: Path | None,
    faults: tuple[str, ...],
) -> None:
    """Serves the fake Gemini API on ``host`` (127.0.0.1 unless told) until interrupted
    (SIGINT/SIGTERM). Another address lets a container reach it, as the self-test workflow's
    action container does through Docker's bridge."""
    import signal

    script = load_script(script_path) if script_path else FakeScriptFile()
    extra = [Fault.model_validate_json(f) for f in faults]
    fake = GeminiFake(script.agents, [*script.faults, *extra], port=port, host=host)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        click.echo(f"GOOGLE_GEMINI_BASE_URL={fake.base_url}", err=True)
        if port_file:
            # Written whole, then renamed: a reader polling for the file never sees it empty.
            partial = port_file.with_name(f".{port_file.name}.partial")
            partial.write_text(fake.base_url.rsplit(":", 1)[1], encoding="utf-8")
            partial.replace(port_file)
        fake.serve_forever()
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(*_: object) -> None:
    """SIGTERM ends serving as Ctrl-C does."""
    raise KeyboardInterrupt


if __name__ == "__main__":
    main()

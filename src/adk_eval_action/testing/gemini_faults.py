"""What the fake Gemini API (:mod:`adk_eval_action.testing.gemini_fake`) can do wrong: the
:class:`Fault` model, the API's error bodies (:func:`error_body`) and the answers whose
body is the fault (:func:`send_body_fault`: empty, without a candidate, huge, never
ending)."""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["BODY_FAULTS", "Fault", "error_body", "send_body_fault"]

# google.rpc.Code names of the HTTP statuses the API answers with (google/rpc/code.proto).
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_MESSAGES = {
    400: "API key not valid. Please pass a valid API key.",
    403: "Method doesn't allow unregistered callers (callers without established identity). "
    "Please use API Key or other form of API consumer identity to call this API.",
    429: "Resource has been exhausted (e.g. check quota).",
    500: "An internal error has occurred. Please retry or report in "
    "https://developers.generativeai.google/guide/troubleshooting",
    503: "The model is overloaded. Please try again later.",
}


class Fault(BaseModel):
    """One way the fake misbehaves, for the calls it applies to.

    Attributes:
        kind: ``status`` answers an API error with HTTP ``status``; ``slow`` answers
            normally after ``delay_s`` seconds; ``malformed`` answers 200 with a truncated
            JSON body; ``drop`` reads the request and closes the connection unanswered;
            ``empty`` answers 200 with no body, ``no_candidate`` 200 with ``{"foo": 1}``
            (JSON without a candidate); ``huge`` answers a reply of ``size_bytes`` bytes of
            text; ``trickle`` sends one byte of a reply every ``delay_s`` seconds, never
            ending (:data:`BODY_FAULTS`); ``no_usage`` answers normally without
            ``usageMetadata`` (a model that reports no token usage).
        status: HTTP status of a ``status`` fault (429, 500, 503, ...).
        retry_delay_s: Seconds put in the error's ``google.rpc.RetryInfo.retryDelay``
            (as the API does on 429), or None for no RetryInfo.
        retry_after_s: Seconds sent in a ``Retry-After`` header, or None for none.
        delay_s: Seconds a ``slow`` fault waits before answering, and a ``trickle``
            between bytes.
        size_bytes: Bytes of a ``huge`` answer's text.
        role: Which calls it applies to: ``any``, ``agent``, ``judge`` or ``user_simulator``.
        after: Matching calls to let through before the fault starts.
        times: Matching calls it applies to once started; None for every later call.
    """

    kind: Literal["status", "slow", "malformed", "drop", "empty", "no_candidate", "huge",
                  "trickle", "no_usage"] = "status"
    status: int = 503
    retry_delay_s: float | None = None
    retry_after_s: float | None = None
    delay_s: float = 0.0
    size_bytes: int = Field(default=300 * 1024 * 1024, ge=0)
    role: Literal["any", "agent", "judge", "user_simulator"] = "any"
    after: int = Field(default=0, ge=0)
    times: int | None = Field(default=None, ge=0)


def error_body(status: int, retry_delay_s: float | None = None) -> dict[str, Any]:
    """The Gemini API's error JSON for an HTTP status (``google.rpc.Status`` as JSON).

    A 429 with ``retry_delay_s`` carries ``details: [{"@type":
    "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "<s>s"}]`` as the API sends it;
    400 is the API's answer to a wrong key (``google.rpc.ErrorInfo`` reason
    ``API_KEY_INVALID``), 403 its answer to a call without any key.
    """
    error: dict[str, Any] = {
        "code": status,
        "message": _MESSAGES.get(status, f"fake error {status}"),
        "status": _STATUS_NAMES.get(status, "UNKNOWN"),
    }
    if status == 400:
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
            }
        ]
    if retry_delay_s is not None:
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": f"{retry_delay_s:g}s",
            }
        ]
    return {"error": error}


#: Faults whose answer is a 200 with a body that is the fault.
BODY_FAULTS = frozenset({"empty", "no_candidate", "huge", "trickle"})
_CHUNK = b"x" * (1024 * 1024)


def send_body_fault(handler: Any, fault: Fault, stream: bool, response: dict[str, Any]) -> None:
    """Answers with ``fault``'s body (one of :data:`BODY_FAULTS`) on ``handler`` (the
    fake's request handler): ``empty`` and ``no_candidate`` as JSON or server-sent events;
    ``huge`` a reply whose text is ``size_bytes`` long, written a megabyte at a time (never
    held in memory); ``trickle`` the reply's first bytes, one every ``delay_s`` seconds
    until the client hangs up. Raises BrokenPipeError/ConnectionResetError when it does."""
    if fault.kind in ("empty", "no_candidate"):
        body = b"" if fault.kind == "empty" else b'{"foo": 1}'
        if stream and body:
            body = b"data: " + body + b"\r\n\r\n"
        handler._send(200, body, "text/event-stream" if stream else "application/json")
        return
    head, tail = _reply_around_text(response)
    size = fault.size_bytes if fault.kind == "huge" else 10 * 1024 * 1024 * 1024
    prefix, suffix = (b"data: ", b"\r\n\r\n") if stream else (b"", b"")
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream" if stream else "application/json")
    handler.send_header("Content-Length", str(len(prefix + head + tail + suffix) + size))
    handler.end_headers()
    handler.wfile.write(prefix + head)
    if fault.kind == "trickle":
        while True:
            handler.wfile.write(b"x")
            handler.wfile.flush()
            time.sleep(fault.delay_s)
    for start in range(0, size, len(_CHUNK)):
        handler.wfile.write(_CHUNK[: min(len(_CHUNK), size - start)])
    handler.wfile.write(tail + suffix)


def _reply_around_text(response: dict[str, Any]) -> tuple[bytes, bytes]:
    """The JSON of ``response`` with its text reply cut out: what comes before the text
    and what comes after it."""
    marker = "\u0000TEXT\u0000"
    reply = {"candidates": [{"content": {"role": "model", "parts": [{"text": marker}]},
                             "finishReason": "STOP"}],
             "modelVersion": response.get("modelVersion")}
    head, _, tail = json.dumps(reply).partition(json.dumps(marker)[1:-1])
    return head.encode(), tail.encode()

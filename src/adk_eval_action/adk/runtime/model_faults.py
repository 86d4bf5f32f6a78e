"""What went wrong in a model call: a transient fault of the model service, a refused
credential, or no model fault at all.

The rules follow the services' own: HTTP statuses and ``google.rpc`` error details of the
Gemini API (its error JSON ``{"error": {"code", "status", "details"}}``), google-genai's
exceptions (``google.genai.errors``), google.auth's (``google.auth.exceptions``: no
credentials, or credentials that could not be refreshed), aiohttp/httpx transport errors,
and the statuses LiteLLM-style clients carry on ``status_code``.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import time
from http import HTTPStatus
from typing import Literal

from google.auth import exceptions as auth_errors
from google.genai import errors as genai_errors
from pydantic import BaseModel

from .model_reads import AnswerTooLarge, AnswerTooSlow

Role = Literal["agent", "judge", "user_simulator"]

RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""HTTP statuses retried: the set google-genai and google-adk retry on
(``google.genai._api_client._RETRY_HTTP_STATUS_CODES``)."""

_CREDENTIAL_STATUSES = frozenset({401, 403})
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)s\s*$")
# Raised by google-genai's Client when it has nothing to authenticate with (_api_client.py).
_NO_CREDENTIALS = ("No API key was provided", "Project or API key must be set")


class ModelFault(BaseModel):
    """What went wrong in one model call.

    Attributes:
        kind: ``model`` (the service or the connection failed), ``credentials`` (the key or
            the identity was refused or missing) or ``budget`` (the run's budget was spent,
            so the call was not made: adk.runtime.spend).
        summary: Short cause for people, e.g. ``503 UNAVAILABLE``, ``timeout after 30s``.
        retryable: Whether waiting and trying again can cure it.
        server_delay_s: Seconds the server asked to wait (RetryInfo or Retry-After), if any.
        unknown_model: The API answered 404 NOT_FOUND: it does not know the model's name
            (a misspelling, a retired model, one not offered to this key or project), which
            no retry cures.
        timed_out: The attempt ran out of time (no answer, or one still arriving): its
            seconds count against the run's retry budget.
    """

    kind: Literal["model", "credentials", "budget"]
    summary: str
    retryable: bool
    server_delay_s: float | None = None
    unknown_model: bool = False
    timed_out: bool = False


class EmptyAnswer(Exception):  # noqa: N818 - what the API gave, as JSONDecodeError names
    """The model API answered 200 without an answer: no candidate, no finish reason, no
    usage, no error (an empty body, or JSON such as ``{"foo": 1}``), or a call that
    yielded no response at all. Every Gemini answer carries a candidate or a
    ``promptFeedback``, and ``usageMetadata`` (GenerateContentResponse in the API
    reference); ADK would pass this on as an empty answer to score."""


def is_empty_answer(response: object) -> bool:
    """Whether an ``LlmResponse`` is what ADK makes of an answer without a candidate:
    google-adk 2.x an empty ``content`` ("treating as a successful empty response"),
    1.x ``error_code`` ``UNKNOWN_ERROR`` (``LlmResponse.create``), with nothing else:
    no parts, no finish reason, no usage metadata (a streamed chunk too: the first chunk
    of a real stream has its text)."""
    content = getattr(response, "content", None)
    return (not getattr(content, "parts", None)
            and getattr(response, "finish_reason", None) is None
            and getattr(response, "usage_metadata", None) is None
            and getattr(response, "error_code", None) in (None, "UNKNOWN_ERROR"))


class ModelCallError(Exception):
    """A model call that failed for good: retries ran out, or the fault is not retryable.

    Attributes:
        fault: The last fault (its ``kind`` is the error kind reported).
        model: The model name.
        role: Which caller: ``agent``, ``judge`` or ``user_simulator``.
        attempts: Tries made.
    """

    def __init__(self, fault: ModelFault, model: str, role: Role, attempts: int):
        self.fault = fault
        self.model = model
        self.role = role
        self.attempts = attempts
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        if fault.unknown_model:
            super().__init__(f"{self.cause}: {UNKNOWN_MODEL_HINT}")
        else:
            super().__init__(f"{role} model {model}: {fault.summary}{tries}")

    @property
    def error_kind(self) -> str:
        """The error kind reported (:class:`~adk_eval_action.results.model.ErrorRecord`):
        the fault's (``model``, ``credentials``), but for a model the API does not know the
        kind of what names it: ``agent``, ``judge``, or ``config`` (a user simulator's),
        since the name is wrong, not the service (exit 2 all the same)."""
        if self.fault.unknown_model:
            return {"agent": "agent", "judge": "judge"}.get(self.role, "config")
        return self.fault.kind

    @property
    def cause(self) -> str:
        """The short cause a suite's summary counts: the fault's summary (``503
        UNAVAILABLE``), naming the model when the API does not know it (``404 NOT_FOUND:
        agent model `gemini-2.5-flsh` is unknown to the API``)."""
        if self.fault.unknown_model:
            return f"{self.fault.summary}: {self.role} model `{self.model}` {UNKNOWN_MODEL}"
        return self.fault.summary


class JudgeCallError(Exception):
    """A judge model's call that raised an exception that is no model service fault
    (:func:`classify_fault` gives None: a judge model class that cannot work, say), so
    the engine knows it for the judge's fault whether google-adk logs it (2.x) or lets it
    out of the evaluator (1.x). Its text is the exception's, ``RuntimeError: …``.

    Attributes:
        model: The judge model's name.
    """

    def __init__(self, model: str, error: BaseException):
        self.model = model
        super().__init__(f"{type(error).__name__}: {error}")


def described_call_error(error: BaseException) -> str:
    """A failed judge call's exception as one line: ``RuntimeError: …`` (a
    :class:`JudgeCallError` says the exception it stands for)."""
    return str(error) if isinstance(error, JudgeCallError) else f"{type(error).__name__}: {error}"


UNKNOWN_MODEL = "is unknown to the API"
"""What :attr:`ModelCallError.cause` says of a model the API answered 404 NOT_FOUND for."""

UNKNOWN_MODEL_HINT = (
    "check the model name's spelling and that the model is available to this API key or "
    "project (not retired, offered in its region)"
)
"""What to do about a model the API does not know."""


REFRESH_FAILED = "Google credentials expired or revoked"
"""How :func:`_refresh_fault`'s summary begins (:func:`is_refresh_failure`)."""

REFRESH_HINT = (
    "refresh them: run `gcloud auth application-default login` again for your user's "
    "Application Default Credentials, or give the service account a new key (the file "
    "GOOGLE_APPLICATION_CREDENTIALS names; google-github-actions/auth in a workflow)"
)
"""What to do about Google credentials that could not be refreshed (expired, revoked)."""


def _refresh_fault(error: BaseException) -> ModelFault | None:
    """google.auth's ``RefreshError`` (an OAuth token could not be refreshed: a user's
    refresh token expired or revoked, a service account key deleted) as a credentials fault
    naming what to refresh; one google.auth marks ``retryable`` (the token endpoint's
    transient failure) is a retryable model fault. None for any other error."""
    if not isinstance(error, auth_errors.RefreshError):
        return None
    if getattr(error, "retryable", False):
        return ModelFault(kind="model", summary="Google token refresh failed", retryable=True)
    first = error.args[0] if error.args and isinstance(error.args[0], str) else ""
    said = f" ({first.splitlines()[0][:120]})" if first.strip() else ""
    return ModelFault(kind="credentials", summary=f"{REFRESH_FAILED}{said}", retryable=False)


def is_refresh_failure(cause: str) -> bool:
    """Whether a fault's summary is of Google credentials that could not be refreshed."""
    return cause.startswith(REFRESH_FAILED)


def is_unknown_model(cause: str) -> bool:
    """Whether a :attr:`ModelCallError.cause` is of a model the API does not know."""
    return cause.endswith(f"` {UNKNOWN_MODEL}")


def _parse_seconds(text: str) -> float | None:
    """Seconds of a ``Retry-After`` value (delay-seconds or HTTP-date) or a proto Duration
    JSON string (``"27s"``, ``"1.5s"``)."""
    text = text.strip()
    found = _DURATION.match(text)
    if found:
        return float(found.group(1))
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def server_delay(error: BaseException) -> float | None:
    """The wait a failed call's server asked for, in seconds, or None.

    Read from ``google.rpc.RetryInfo.retryDelay`` in the error's JSON details (what the
    Gemini API sends with 429), else from the response's ``Retry-After`` header.
    """
    details = getattr(error, "details", None)
    entries = (details.get("error") or {}).get("details") if isinstance(details, dict) else None
    for entry in entries or []:
        if isinstance(entry, dict) and str(entry.get("@type", "")).endswith("rpc.RetryInfo"):
            seconds = _parse_seconds(str(entry.get("retryDelay", "")))
            if seconds is not None:
                return seconds
    headers = getattr(getattr(error, "response", None), "headers", None)
    value = headers.get("Retry-After") if headers is not None else None
    return _parse_seconds(str(value)) if value else None


def _status(error: BaseException) -> int | None:
    if isinstance(error, genai_errors.APIError):
        return error.code
    # litellm hard-codes 500 on a connection failure (google.adk.models._fallback_model).
    if type(error).__name__ in ("APIConnectionError", "APIResponseValidationError"):
        return None
    # litellm, openai and anthropic errors carry `status_code`; httpx nests it in `response`.
    for owner in (error, getattr(error, "response", None)):
        code = getattr(owner, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def _status_summary(error: BaseException, code: int) -> str:
    name = getattr(error, "status", None)
    if not isinstance(name, str) or not name:
        try:
            name = HTTPStatus(code).phrase
        except ValueError:
            name = "error"
    return f"{code} {name}"


def _key_refused(error: BaseException) -> bool:
    """A 400 whose ``google.rpc.ErrorInfo`` reason is ``API_KEY_INVALID`` (a wrong key)."""
    details = getattr(error, "details", None)
    entries = (details.get("error") or {}).get("details") if isinstance(details, dict) else None
    return any(
        isinstance(e, dict) and e.get("reason") in ("API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED")
        for e in entries or []
    )


def _transport_fault(error: BaseException) -> str | None:
    """A short cause for timeouts, dropped connections and malformed answers, else None."""
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)):
        return "timeout"
    names = {cls.__name__ for cls in type(error).__mro__}
    transport = {
        "ClientConnectionError",  # aiohttp: ServerDisconnectedError, ClientOSError, ...
        "ClientPayloadError",
        "TransportError",  # httpx: ConnectError, ReadTimeout, RemoteProtocolError, ...
        "APIConnectionError",  # litellm, openai
        "ConnectionError",
    }
    if names & transport:
        return f"connection failed ({type(error).__name__})"
    if isinstance(error, (json.JSONDecodeError, genai_errors.UnknownApiResponseError)):
        return "malformed answer (not JSON)"
    return None


def classify_fault(error: BaseException) -> ModelFault | None:
    """What kind of model fault ``error`` is, or None when it is not one (a bug in a custom
    model's code, say, which is left to propagate as it is).

    Rules: HTTP 401/403 and a 400 ``API_KEY_INVALID`` are credentials; google-genai's "No API
    key was provided", google.auth's ``DefaultCredentialsError`` and ``RefreshError``
    (:func:`_refresh_fault`) too; :data:`RETRYABLE_STATUSES`, timeouts, dropped connections,
    malformed answers and answers without a candidate (:class:`EmptyAnswer`) are retryable
    model faults; other HTTP 4xx/5xx are model faults that
    waiting does not cure, a 404 among them flagged ``unknown_model``.
    """
    if isinstance(error, ModelCallError):
        return error.fault
    if isinstance(error, EmptyAnswer):
        return ModelFault(kind="model", summary="answer without a candidate", retryable=True)
    if isinstance(error, (AnswerTooLarge, AnswerTooSlow)):
        return ModelFault(kind="model", summary=str(error), retryable=True,
                          timed_out=isinstance(error, AnswerTooSlow))
    code = _status(error)
    if code is not None and 400 <= code < 600:
        summary = _status_summary(error, code)
        if code in _CREDENTIAL_STATUSES or (code == 400 and _key_refused(error)):
            return ModelFault(kind="credentials", summary=summary, retryable=False)
        return ModelFault(
            kind="model",
            summary=summary,
            retryable=code in RETRYABLE_STATUSES,
            server_delay_s=server_delay(error),
            # The Gemini API answers an unknown model name (generateContent on
            # models/NAME) with 404 NOT_FOUND, as LiteLLM's providers do.
            unknown_model=code == 404,
        )
    if isinstance(error, ValueError) and str(error).startswith(_NO_CREDENTIALS):
        return ModelFault(kind="credentials", summary=str(error).split(".")[0], retryable=False)
    if isinstance(error, auth_errors.DefaultCredentialsError):
        return ModelFault(
            kind="credentials", summary="no Google Cloud credentials (ADC)", retryable=False
        )
    refresh = _refresh_fault(error)
    if refresh is not None:
        return refresh
    transport = _transport_fault(error)
    if transport is not None:
        return ModelFault(kind="model", summary=transport, retryable=True,
                          timed_out=transport.startswith("timeout"))
    return None

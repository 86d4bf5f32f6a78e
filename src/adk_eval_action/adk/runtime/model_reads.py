"""Bounded reads of model answers: at most :data:`MAX_ANSWER_BYTES` and, for one attempt,
no longer than its deadline, counting the whole body, so a model API that answers 300 MB or
a byte every half second ends the attempt (a model fault, retried, then an incomplete run)
instead of filling memory or waiting forever.

ADK's ``Gemini`` calls the API through google-genai, whose async calls go through an
``httpx.AsyncClient`` (or aiohttp, when installed, unless the client was given an httpx
transport: ``BaseApiClient._use_aiohttp``). :func:`bound_reads` wraps that client's
transports (its own and the proxies it mounted from the environment) in
:class:`BoundedTransport`, and names the wrapper as the client's transport in its
``http_options.async_client_args``, so google-genai keeps to httpx. google-genai exposes no
public hook on the client ADK builds, so the attributes are feature-detected
(:func:`adk_eval_action.adk.compat.genai_httpx_client`, google-genai as google-adk 1.23 to
2.13 install it); where they are missing, nothing is wrapped and the
attempt's timeout (``model_retries.call_timeout_s``) is the only bound.

The limits of an attempt travel with its request: :func:`limit_request` puts them in a
header of the request's ``http_options`` (google-genai sends per-request headers), which
the transport reads and removes before the request leaves.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import httpx

__all__ = [
    "MAX_ANSWER_BYTES",
    "AnswerTooLarge",
    "AnswerTooSlow",
    "BoundedTransport",
    "bound_reads",
    "limit_request",
]

#: Bytes of one model answer read at most: a Gemini answer is at most 65,536 output tokens
#: (a few hundred KB of text), an image a few MB.
MAX_ANSWER_BYTES = 64 * 1024 * 1024

#: The request header that carries an attempt's limits to the transport (never sent).
LIMITS_HEADER = "x-adk-eval-answer-limits"


class AnswerTooLarge(Exception):  # noqa: N818 - what the answer was
    """A model answer passed :data:`MAX_ANSWER_BYTES` while it was read."""


class AnswerTooSlow(TimeoutError):
    """A model answer was still arriving at the attempt's deadline."""


def limit_request(request: Any, seconds: float | None) -> None:
    """Puts the limits of an attempt that starts now into ``request`` (an ADK
    ``LlmRequest``): its answer is read up to :data:`MAX_ANSWER_BYTES` (read now) and for
    ``seconds`` (None or 0: no deadline) by a :class:`BoundedTransport`."""
    from google.genai import types as genai_types

    config = request.config = request.config or genai_types.GenerateContentConfig()
    options = config.http_options = config.http_options or genai_types.HttpOptions()
    deadline = time.monotonic() + seconds if seconds else 0.0
    options.headers = {**(options.headers or {}),
                       LIMITS_HEADER: f"{MAX_ANSWER_BYTES} {deadline!r}"}


def _limits(request: httpx.Request) -> tuple[int, float | None]:
    """The limits :func:`limit_request` put in ``request``, removed from it; the default
    bound (and no deadline) without them."""
    raw = request.headers.get(LIMITS_HEADER)
    if raw is None:
        return MAX_ANSWER_BYTES, None
    del request.headers[LIMITS_HEADER]
    try:
        limit, deadline = (float(x) for x in raw.split())
    except ValueError:
        return MAX_ANSWER_BYTES, None
    return int(limit), deadline or None


class _BoundedStream(httpx.AsyncByteStream):
    def __init__(self, inner: Any, limit: int, deadline: float | None, url: str) -> None:
        self._inner, self._limit, self._deadline, self._url = inner, limit, deadline, url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self._inner:
            size += len(chunk)
            if size > self._limit:
                raise AnswerTooLarge(f"answer over {self._limit:,} bytes")
            if self._deadline is not None and time.monotonic() > self._deadline:
                raise AnswerTooSlow("answer still arriving at the attempt's deadline")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class BoundedTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose answers are read within the limits their request carries
    (:func:`limit_request`); requests go through ``inner``."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        limit, deadline = _limits(request)
        response = await self.inner.handle_async_request(request)
        response.stream = _BoundedStream(response.stream, limit, deadline, str(request.url))
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def bound_reads(model: Any) -> bool:
    """Wraps the transports of the google-genai client of ``model`` (an ADK ``Gemini``:
    its ``api_client``, for the running event loop) in :class:`BoundedTransport`, once;
    returns whether its answers are now bounded (False for other models, and where
    google-genai's client does not have the attributes; module docstring)."""
    from adk_eval_action.adk.compat import (
        genai_httpx_client,
        httpx_transports,
        set_httpx_transport,
    )

    found = genai_httpx_client(model)
    if found is None or not hasattr(found[1], "async_client_args"):
        return False
    client, options = found
    transports = httpx_transports(client)
    if transports is None:
        return False
    transport, mounts = transports
    if not isinstance(transport, BoundedTransport):
        transport = BoundedTransport(transport)
        set_httpx_transport(client, transport)
        for pattern, mounted in list(mounts.items()):
            if isinstance(mounted, httpx.AsyncBaseTransport):
                mounts[pattern] = BoundedTransport(mounted)
    args = dict(options.async_client_args or {})
    if args.get("transport") is not transport:
        options.async_client_args = {**args, "transport": transport}
    return True

"""An answer of the GitHub REST API read whole, through public interfaces only: the body of
a streamed ``requests`` response read from its ``raw`` stream within a deadline and a byte
cap (:func:`read_body`), and kept with the status, headers, URL and links in an
:class:`Answer`, which :func:`decode_json` decodes. Nothing here writes an attribute of
``requests``' own objects."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests
import urllib3

from adk_eval_action.github.api_errors import TransientError
from adk_eval_action.github.urls import shown_path

__all__ = ["Answer", "decode_json", "read_body"]

_CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True)
class Answer:
    """One answer of the REST API, read whole by :func:`read_body` (within the time
    budget and :data:`MAX_ANSWER_BYTES`): its status, headers, final URL, ``Link``
    relations (``requests``' parse of the header) and the body's bytes, kept here."""

    status_code: int
    headers: Mapping[str, str]
    url: str
    links: Mapping[str, Mapping[str, str]]
    content: bytes

    @classmethod
    def of(cls, response: requests.Response, content: bytes) -> Answer:
        """The answer of ``response``, whose body :func:`read_body` read as ``content``."""
        return cls(status_code=response.status_code, headers=response.headers,
                   url=response.url or "", links=response.links, content=content)

    @property
    def text(self) -> str:
        """The body as text, in the charset its ``Content-Type`` names (else UTF-8);
        undecodable bytes become U+FFFD."""
        charset = requests.utils.get_encoding_from_headers(self.headers) or "utf-8"
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:  # a charset Python does not know
            return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body parsed as JSON (UTF-8, -16 or -32, as ``json.loads`` detects).

        Raises:
            ValueError: the body is not JSON.
        """
        return json.loads(self.content)


def read_body(response: requests.Response, deadline: float, limit: int, what: str) -> bytes:
    """The body of a ``stream=True`` ``response``, read through its public ``raw`` stream
    before ``deadline`` (monotonic seconds) and up to ``limit`` bytes (decoded); the
    caller keeps the bytes (:class:`Answer`), and the connection goes back to the pool.

    Each read returns what has arrived (urllib3's ``read1``), so a body that trickles in
    is stopped at the first read after ``deadline`` (a read waits at most the request's
    read timeout), not when it ends.

    Raises:
        TransientError: the deadline passed or the body passed ``limit`` (``what`` names
            the call); the connection is closed.
        requests.ConnectionError: the connection broke or timed out while reading.
    """
    raw = response.raw
    read = getattr(raw, "read1", None) or raw.read  # read1: urllib3 >= 2
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := read(_CHUNK_BYTES, decode_content=True):
            size += len(chunk)
            if size > limit:
                raise TransientError(f"GitHub's answer to {what} passed {limit:,} bytes")
            if time.monotonic() > deadline:
                raise TransientError(
                    f"GitHub's answer to {what} was still arriving when the API time budget "
                    "was spent")
            chunks.append(chunk)
    except TransientError:
        response.close()
        raise
    except (urllib3.exceptions.HTTPError, OSError) as exc:  # as requests maps them
        response.close()
        raise requests.ConnectionError(f"{what}: {type(exc).__name__}") from exc
    response.close()  # read to its end: the connection goes back to the pool
    return b"".join(chunks)


def decode_json(response: Answer, method: str = "GET") -> Any:
    """The JSON body of a 2xx answer.

    Raises:
        TransientError: the body is not JSON (a proxy's HTML page, a cut answer).
    """
    try:
        return response.json()
    except ValueError as exc:
        path = shown_path(response.url or "", "")
        raise TransientError(
            f"GitHub answered {method} {path} ({response.status_code}) with a body that is "
            "not JSON", status=response.status_code, method=method, path=path,
        ) from exc

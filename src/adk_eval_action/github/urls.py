"""URLs of the GitHub REST API as the client checks and shows them: where the token may
go (:func:`on_api_origin`), an origin and a path for messages. Pure functions."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

__all__ = ["on_api_origin", "origin", "shown_path"]


def on_api_origin(url: str, api_url: str) -> bool:
    """Whether ``url`` is on ``api_url``'s origin (scheme, host, port) and under its path
    (``/api/v3`` on GHES): where the token may go (RFC 6454's origin, with the API's path
    prefix). Default ports count as given (``https://h`` is ``https://h:443``)."""
    target, api = urlsplit(url), urlsplit(api_url)
    try:
        same = (target.scheme.lower(), (target.hostname or "").lower(), _port(target)) == \
            (api.scheme.lower(), (api.hostname or "").lower(), _port(api))
    except ValueError:  # a port that is not a number
        return False
    prefix = api.path.rstrip("/") + "/"
    return same and (target.path + "/").startswith(prefix) and "@" not in target.netloc


def _port(parts: Any) -> int | None:
    return parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` for messages (no credentials, path or query)."""
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}"


def shown_path(url: str, api_url: str) -> str:
    """The URL path for messages, without host or query (queries may hold anything)."""
    path = url.split("?", 1)[0]
    if api_url and path.startswith(api_url):
        return path[len(api_url):] or "/"
    return path

"""Reading a GitHub REST listing across its pages (rest/using-the-rest-api/
using-pagination-in-the-rest-api): :func:`paginate` follows ``link: rel="next"`` as
``requests`` parses it (``Response.links``), only on ``GITHUB_API_URL``'s own origin and
path (``urls.on_api_origin``: the token goes nowhere else), never to a page already
read, and at most :data:`MAX_PAGES` pages.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from adk_eval_action.github.answers import decode_json
from adk_eval_action.github.transport import GitHubClient, GitHubError, TransientError
from adk_eval_action.github.urls import on_api_origin, origin, shown_path

__all__ = ["MAX_PAGES", "paginate"]

#: Pages of one listing followed at most when the caller names no cap: 10,000 items at 100
#: a page, far above the comments of one pull request.
MAX_PAGES = 100

log = logging.getLogger(__name__)


def paginate(
    client: GitHubClient, path: str, params: Mapping[str, Any] | None = None, *,
    key: str | None = None, max_pages: int | None = None,
) -> Iterator[Any]:
    """Yield the items of a list endpoint across pages, following ``link: rel="next"``
    (``Response.links``); ``key`` names the list in endpoints that wrap it
    (``{"total_count", "artifacts": [...]}``).

    The next URL already carries the query, so ``params`` go with the first page only.
    A next link is followed only on ``GITHUB_API_URL``'s origin and path
    (``urls.on_api_origin``), and never to a page already read. ``max_pages``: the
    caller reads at most that many pages and the rest is left (said in the log); None:
    more than :data:`MAX_PAGES` pages is an error.

    Raises:
        GitHubError: a call failed; a page is not the list (or object) expected; the
            next link leaves the API's origin, repeats a page, or passes
            :data:`MAX_PAGES` (the message says which, and what was read).
    """
    url: str | None = path
    query: Mapping[str, Any] | None = {"per_page": 100, **(params or {})}
    seen: set[str] = set()
    while url:
        if len(seen) == (max_pages or MAX_PAGES):
            _stop_paging(client.api_url, path, len(seen), max_pages)
            return
        response = client.request("GET", url, params=query)
        seen.add(_page_key(response.url or url))
        data = decode_json(response, "GET")
        items = data.get(key) if key is not None and isinstance(data, dict) else data
        if not isinstance(items, list):
            raise TransientError(
                f"GitHub answered GET {shown_path(response.url, client.api_url)} with "
                "something that is not the list asked for", method="GET")
        yield from items
        url, query = response.links.get("next", {}).get("url"), None
        if url:
            _check_next(client.api_url, path, url, seen)


def _check_next(api_url: str, path: str, url: str, seen: set[str]) -> None:
    """Raises GitHubError when the next link of ``path``'s listing leaves the API or
    names a page already read (a loop), saying how many pages were read."""
    shown = shown_path(path, api_url)
    if not on_api_origin(url, api_url):
        raise GitHubError(
            f"GitHub's next-page link of GET {shown} (after {len(seen)} page(s)) points "
            f"to {origin(url)}, not GITHUB_API_URL ({api_url}): not followed, the "
            "token is sent nowhere else", method="GET", path=shown)
    if _page_key(url) in seen:
        raise GitHubError(
            f"GitHub's next-page link of GET {shown} names a page already read (after "
            f"{len(seen)} page(s)): the pagination loops; stopped", method="GET",
            path=shown)


def _stop_paging(api_url: str, path: str, pages: int, max_pages: int | None) -> None:
    shown = shown_path(path, api_url)
    if max_pages is not None:
        log.info("GET %s: read the first %d page(s); the rest is not read", shown, pages)
        return
    raise GitHubError(f"GitHub's listing GET {shown} goes on past {MAX_PAGES} pages: "
                      "stopped (no listing the action reads is that long)",
                      method="GET", path=shown)


def _page_key(url: str) -> str:
    """A page's URL as the loop check compares it: the query's parameters sorted, so
    ``?page=2&per_page=100`` and ``?per_page=100&page=2`` are one page."""
    parts = urlsplit(url)
    query = "&".join(sorted(parts.query.split("&"))) if parts.query else ""
    return f"{parts.scheme}://{parts.netloc.lower()}{parts.path}?{query}"

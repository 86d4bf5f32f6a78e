"""Reading a listing across pages (github.pages) against the local REST stand-in: where a
next-page link may lead, loops, the page cap, and an answer head http.client refuses."""

from __future__ import annotations

import logging

import pytest

from adk_eval_action.github import pages
from adk_eval_action.github.pages import paginate
from adk_eval_action.github.rest import DEFAULT_BOT_LOGIN
from adk_eval_action.github.sticky import comment_marker, upsert_sticky_comment
from adk_eval_action.github.transport import GitHubClient, GitHubError
from adk_eval_action.github.urls import on_api_origin
from support.github_stub import GitHubStub, Token

REPO = "octo/agents"
TOKEN = "ghs_pagesToken0123456789"
COMMENTS = f"/repos/{REPO}/issues/7/comments"


@pytest.fixture
def stub():
    with GitHubStub(tokens={TOKEN: Token(DEFAULT_BOT_LOGIN, installation=True)}) as server:
        yield server


def client_for(stub: GitHubStub) -> GitHubClient:
    return GitHubClient(TOKEN, stub.api_url, sleep=lambda s: None, timeout=(2, 5))


def _next_link(stub: GitHubStub, url: str, times: int = 1) -> None:
    """The next comments page GitHub answers (an empty list) links to ``url``."""
    stub.fail_next(200, raw=b"[]", headers={"link": f'<{url}>; rel="next"'}, method="GET",
                   path="comments", times=times)


@pytest.mark.parametrize(("url", "api", "ok"), [
    ("https://api.github.com/repos/o/r?page=2", "https://api.github.com", True),
    ("https://API.github.com:443/repos/o/r", "https://api.github.com", True),
    ("http://api.github.com/repos/o/r", "https://api.github.com", False),  # scheme
    ("https://api.github.com:8443/repos/o/r", "https://api.github.com", False),  # port
    ("https://evil.example/repos/o/r", "https://api.github.com", False),  # host
    ("https://api.github.com@evil.example/x", "https://api.github.com", False),
    ("https://api.github.com.evil.example/x", "https://api.github.com", False),
    ("https://ghe.example/api/v3/repos/o/r", "https://ghe.example/api/v3", True),
    ("https://ghe.example/api/v30/repos", "https://ghe.example/api/v3", False),  # prefix
    ("https://ghe.example/login", "https://ghe.example/api/v3", False),
    ("https://ghe.example:x/api/v3/", "https://ghe.example/api/v3", False),  # bad port
])
def test_the_api_origin_is_scheme_host_port_and_path_prefix(url, api, ok):
    assert on_api_origin(url, api) is ok


def test_a_next_link_to_another_origin_is_not_followed(stub):
    """The token never reaches another server: the foreign one (a second stand-in that
    records every request) gets none, and the error names where the link pointed."""
    with GitHubStub(tokens={}) as foreign:
        _next_link(stub, f"{foreign.api_url}{COMMENTS}?page=2")
        with pytest.raises(GitHubError, match=(
                rf"next-page link of GET {COMMENTS} \(after 1 page\(s\)\) points to "
                rf"{foreign.base_url}, not GITHUB_API_URL .*not followed")) as info:
            list(paginate(client_for(stub), COMMENTS))
        assert foreign.requests() == []
    assert TOKEN not in str(info.value)


def test_a_next_link_to_another_port_of_the_same_host_is_not_followed(stub):
    with GitHubStub(tokens={}) as other:
        assert other.base_url.rsplit(":", 1)[0] == stub.base_url.rsplit(":", 1)[0]
        _next_link(stub, f"{other.api_url}{COMMENTS}?page=2")
        with pytest.raises(GitHubError, match="not followed"):
            list(paginate(client_for(stub), COMMENTS))
        assert other.requests() == []


def test_a_next_link_outside_the_ghes_path_prefix_is_not_followed():
    with GitHubStub(tokens={TOKEN: DEFAULT_BOT_LOGIN}, prefix="/api/v3") as ghes:
        _next_link(ghes, f"{ghes.base_url}/uploads{COMMENTS}?page=2")
        with pytest.raises(GitHubError, match="not followed"):
            list(paginate(client_for(ghes), COMMENTS))
        assert [r.path for r in ghes.requests()] == [f"/api/v3{COMMENTS}"]


def test_the_sticky_comment_is_not_posted_after_a_foreign_next_link(stub):
    with GitHubStub(tokens={}) as foreign:
        _next_link(stub, f"{foreign.api_url}{COMMENTS}?page=2")
        marker = comment_marker()
        with pytest.raises(GitHubError, match="not followed"):
            upsert_sticky_comment(client_for(stub), REPO, 7, f"x\n{marker}", marker=marker)
        assert foreign.requests() == [] and stub.comments(7) == []


def test_a_next_link_to_the_same_page_is_read_once(stub):
    _next_link(stub, f"{stub.api_url}{COMMENTS}?page=1&per_page=100", times=50)
    with pytest.raises(GitHubError, match=r"names a page already read \(after 2 page"):
        list(paginate(client_for(stub), COMMENTS))
    # The first page (no `page`) and page 1 are read; page 1 again is not asked for.
    assert len(stub.requests("GET")) == 2


def test_a_cycle_of_two_pages_is_stopped(stub):
    first = f"{stub.api_url}{COMMENTS}?per_page=100&page=2"
    second = f"{stub.api_url}{COMMENTS}?page=3&per_page=100"
    stub.fail_next(200, raw=b"[]", headers={"link": f'<{first}>; rel="next"'})
    stub.fail_next(200, raw=b"[]", headers={"link": f'<{second}>; rel="next"'})
    stub.fail_next(200, raw=b"[]", headers={"link": f'<{first}>; rel="next"'})
    with pytest.raises(GitHubError, match="the pagination loops"):
        list(paginate(client_for(stub), COMMENTS))
    assert len(stub.requests("GET")) == 3


def test_pages_past_the_cap_are_an_error_unless_the_caller_caps(stub, monkeypatch, caplog):
    for index in range(250):
        stub.add_comment(7, f"c{index}", "someone")
    client = client_for(stub)
    assert len(list(paginate(client, COMMENTS))) == 250  # three pages of 100
    monkeypatch.setattr(pages, "MAX_PAGES", 2)
    with pytest.raises(GitHubError, match=f"GET {COMMENTS} goes on past 2 pages"):
        list(paginate(client, COMMENTS))
    with caplog.at_level(logging.INFO):
        assert len(list(paginate(client, COMMENTS, max_pages=1))) == 100
    assert f"GET {COMMENTS}: read the first 1 page(s); the rest is not read" in caplog.text


def test_a_header_line_over_http_clients_limit_is_said_once(stub):
    """A 160 KB ``link`` header is over http.client's 65,536-byte line limit: the API
    answered, so it is said as what it is, at once, not retried as "unreachable"."""
    huge = "<" + stub.api_url + COMMENTS + "?page=2&x=" + "x" * 160_000 + '>; rel="next"'
    stub.fail_next(200, raw=b"[]", headers={"link": huge}, times=10)
    with pytest.raises(GitHubError, match=(
            rf"GitHub API answered GET {COMMENTS} with a header line over http\.client's "
            r"limit of 65,536 bytes")) as info:
        list(paginate(client_for(stub), COMMENTS))
    assert "unreachable" not in str(info.value)
    assert len(stub.requests("GET")) == 1

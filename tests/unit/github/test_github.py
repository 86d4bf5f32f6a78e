"""The GitHub client against the local REST stand-in (tests/github_stub.py)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests

from adk_eval_action.github import transport
from adk_eval_action.github.answers import Answer
from adk_eval_action.github.event import EventContext
from adk_eval_action.github.logs import escape_property, workflow_command
from adk_eval_action.github.pages import paginate
from adk_eval_action.github.rest import DEFAULT_BOT_LOGIN, pulls_for_commit, token_login
from adk_eval_action.github.runner_files import append_job_summary, write_outputs, write_runner_file
from adk_eval_action.github.sticky import (
    COMMENT_MAX_CHARS,
    comment_marker,
    compose_comment_body,
    find_sticky_comment,
    strip_markers,
    upsert_sticky_comment,
)
from adk_eval_action.github.transport import (
    BadCredentials,
    GitHubClient,
    NotFound,
    PermissionDenied,
    RateLimited,
    TransientError,
    ValidationFailed,
)
from support.github_stub import GitHubStub, Token

REPO = "octo/agents"
TOKEN = "ghs_secretvalue123"


class Sleeps(list):
    """Records requested sleeps instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def stub():
    with GitHubStub(tokens={
        TOKEN: Token(DEFAULT_BOT_LOGIN, installation=True),
        "ro-token": Token(DEFAULT_BOT_LOGIN, writable=False, installation=True),
        "pat": Token("octocat"),
    }) as server:
        yield server


def client_for(stub: GitHubStub, token: str = TOKEN, **kw) -> tuple[GitHubClient, Sleeps]:
    sleeps = Sleeps()
    return GitHubClient(token, stub.api_url, sleep=sleeps, timeout=(2, 5), **kw), sleeps


# --------------------------------------------------------------------------- sticky comment


def test_create_then_update_keeps_one_comment(stub):
    client, _ = client_for(stub)
    marker = comment_marker("suite-a")
    first = upsert_sticky_comment(client, REPO, 7, f"one\n{marker}", marker=marker)
    second = upsert_sticky_comment(client, REPO, 7, f"two\n{marker}", marker=marker)
    assert first.action == "created" and second.action == "updated"
    assert first.id == second.id and second.url.endswith(f"#issuecomment-{first.id}")
    comments = stub.comments(7)
    assert len(comments) == 1 and comments[0]["body"].startswith("two")


def test_keys_keep_separate_comments(stub):
    client, _ = client_for(stub)
    for key in ("unit", "e2e", "unit"):
        marker = comment_marker(key)
        upsert_sticky_comment(client, REPO, 7, f"{key}\n{marker}", marker=marker)
    assert sorted(c["body"].split("\n")[0] for c in stub.comments(7)) == ["e2e", "unit"]


def test_update_finds_comment_past_the_first_page(stub):
    client, _ = client_for(stub)
    marker = comment_marker()
    for i in range(250):
        stub.add_comment(7, f"chatter {i}", "someone")
    mine = stub.add_comment(7, f"old\n{marker}", DEFAULT_BOT_LOGIN)
    # Someone quoting our marker must not be mistaken for ours.
    stub.add_comment(7, f"> {marker}", "someone")
    result = upsert_sticky_comment(client, REPO, 7, f"new\n{marker}", marker=marker)
    assert result.action == "updated" and result.id == mine["id"]
    pages = [r for r in stub.requests("GET") if r.path.endswith("/issues/7/comments")]
    assert len(pages) == 3  # 252 comments, 100 per page, followed through link rel=next


def test_stub_default_page_size_is_30_with_link_headers(stub):
    for i in range(31):
        stub.add_comment(3, f"c{i}", "someone")
    import requests

    r = requests.get(f"{stub.api_url}/repos/{REPO}/issues/3/comments",
                     headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)
    assert len(r.json()) == 30 and 'rel="next"' in r.headers["link"]


def test_only_the_token_identitys_comments_are_updated(stub):
    client, _ = client_for(stub, token="pat")  # GET /user answers "octocat"
    marker = comment_marker()
    stub.add_comment(7, f"bot's\n{marker}", DEFAULT_BOT_LOGIN)
    result = upsert_sticky_comment(client, REPO, 7, f"mine\n{marker}", marker=marker)
    assert result.action == "created"
    assert token_login(client) == "octocat"
    assert token_login(client_for(stub)[0]) == DEFAULT_BOT_LOGIN  # installation token: 403


def test_bot_suffix_is_ignored_when_matching_logins(stub):
    client, _ = client_for(stub)
    marker = comment_marker()
    stub.add_comment(7, f"x\n{marker}", DEFAULT_BOT_LOGIN)
    assert find_sticky_comment(client, REPO, 7, marker, "github-actions") is not None


def test_new_mode_always_creates(stub):
    client, _ = client_for(stub)
    marker = comment_marker()
    for _ in range(2):
        upsert_sticky_comment(client, REPO, 7, f"x\n{marker}", marker=marker, mode="new")
    assert len(stub.comments(7)) == 2


def test_oversized_body_is_cut_to_the_limit(stub):
    client, _ = client_for(stub)
    marker = comment_marker()
    huge = "\n".join("| row | " + "x" * 90 + " |" for _ in range(2000))
    body = compose_comment_body(huge, marker, "https://example.test/run/1")
    assert len(body) <= COMMENT_MAX_CHARS and body.rstrip().endswith(marker)
    assert "65,536-character limit" in body and "job summary" in body
    upsert_sticky_comment(client, REPO, 7, body, marker=marker)
    assert stub.comments(7)[0]["body"] == body


def test_stub_rejects_long_body_with_422(stub):
    client, _ = client_for(stub)
    with pytest.raises(ValidationFailed, match="too long"):
        client.post_json(f"/repos/{REPO}/issues/7/comments", {"body": "x" * 65_537})


def test_body_without_marker_gets_one(stub):
    client, _ = client_for(stub)
    marker = comment_marker("k")
    upsert_sticky_comment(client, REPO, 7, "plain", marker=marker)
    assert stub.comments(7)[0]["body"].rstrip().endswith(marker)


def test_marker_key_cannot_close_the_html_comment():
    marker = comment_marker("a --> b")
    assert marker.startswith("<!-- adk-eval-action:a-----b-") and marker.count("-->") == 1
    assert strip_markers(f"x{comment_marker('other')}y") == "xy"


# --------------------------------------------------------------------------- retries


def test_retries_429_honouring_retry_after(stub):
    client, sleeps = client_for(stub)
    stub.fail_next(429, headers={"retry-after": "7"})
    assert token_login(client) == DEFAULT_BOT_LOGIN
    assert sleeps == [7.0]


def test_primary_rate_limit_waits_until_reset(stub):
    now = 1_700_000_000.0
    client, sleeps = client_for(stub, clock=lambda: now)
    stub.fail_next(403, headers={"x-ratelimit-remaining": "0",
                                 "x-ratelimit-reset": str(int(now) + 42)})
    assert client.get_json(f"/repos/{REPO}/issues/7/comments") == []
    assert sleeps == [43.0]


def test_secondary_rate_limit_without_headers_waits_a_minute(stub):
    client, sleeps = client_for(stub)
    stub.fail_next(403, message="You have exceeded a secondary rate limit.")
    assert client.get_json(f"/repos/{REPO}/issues/7/comments") == []
    assert sleeps == [60.0]


def test_a_wait_above_the_cap_is_not_waited_for(stub):
    """GitHub's doubling after a second secondary limit (120 s) is above MAX_WAIT_S (60 s):
    the client gives up instead of sleeping 60 + 120 + 240 s on one request."""
    client, sleeps = client_for(stub)
    stub.fail_next(403, message="You have exceeded a secondary rate limit.", times=3)
    with pytest.raises(RateLimited, match="wait 120 s"):
        client.get_json(f"/repos/{REPO}/issues/7/comments")
    assert sleeps == [60.0]


def test_the_time_budget_bounds_all_calls_and_waits(stub):
    """Every wait counts against the client's budget; a wait the budget cannot pay for is
    not made, and once it is spent no call is sent."""
    client, sleeps = client_for(stub, budget=70.0)
    stub.fail_next(429, headers={"retry-after": "50"}, times=2)
    with pytest.raises(RateLimited):
        client.get_json("/user")  # waits 50, then 50 more would pass the 70 s budget
    assert sleeps == [50.0]
    client.budget.spend(30.0)
    with pytest.raises(TransientError, match="budget"):
        client.get_json("/user")


def test_rate_limit_far_in_the_future_is_not_waited_for(stub):
    now = 1_700_000_000.0
    client, sleeps = client_for(stub, clock=lambda: now)
    stub.fail_next(403, headers={"x-ratelimit-remaining": "0",
                                 "x-ratelimit-reset": str(int(now) + 3000)})
    with pytest.raises(RateLimited, match="rate limit"):
        client.get_json("/user")
    assert sleeps == []


def test_5xx_get_is_retried_with_backoff(stub):
    client, sleeps = client_for(stub)
    stub.fail_next(502, times=2)
    stub.fail_next(503)
    assert client.get_json(f"/repos/{REPO}/issues/7/comments") == []
    assert sleeps == [1.0, 2.0, 4.0]


def test_5xx_gives_up_after_max_attempts(stub):
    client, sleeps = client_for(stub, max_attempts=3)
    stub.fail_next(500, times=5)
    with pytest.raises(TransientError, match="500"):
        client.get_json(f"/repos/{REPO}/issues/7/comments")
    assert len(sleeps) == 2


def test_failed_create_is_not_duplicated(stub):
    """A POST that errors is not blindly retried: the comments are searched again first."""
    client, _ = client_for(stub)
    marker = comment_marker()
    stub.fail_next(502, method="POST")
    result = upsert_sticky_comment(client, REPO, 7, f"x\n{marker}", marker=marker)
    assert result.action == "created" and len(stub.comments(7)) == 1


def test_create_that_landed_despite_a_502_is_not_duplicated(stub):
    client, _ = client_for(stub)
    marker = comment_marker()
    stub.fail_next(502, method="POST", after=True)
    result = upsert_sticky_comment(client, REPO, 7, f"x\n{marker}", marker=marker)
    assert result.action == "updated" and len(stub.comments(7)) == 1


def test_failed_create_in_new_mode_is_not_duplicated(stub):
    client, _ = client_for(stub)
    marker = comment_marker()
    stub.add_comment(7, f"last run\n{marker}", DEFAULT_BOT_LOGIN)
    stub.fail_next(502, method="POST")
    result = upsert_sticky_comment(client, REPO, 7, f"this run\n{marker}", marker=marker,
                                   mode="new")
    assert result.action == "created"
    assert [c["body"].split("\n")[0] for c in stub.comments(7)] == ["last run", "this run"]


def test_writes_are_spaced_a_second_apart(stub):
    ticks = iter(range(100))
    client, sleeps = client_for(stub, clock=lambda: next(ticks) * 0.25)
    marker = comment_marker()
    upsert_sticky_comment(client, REPO, 7, f"a\n{marker}", marker=marker,
                          author_login=DEFAULT_BOT_LOGIN)
    upsert_sticky_comment(client, REPO, 7, f"b\n{marker}", marker=marker,
                          author_login=DEFAULT_BOT_LOGIN)
    assert any(0 < s <= 1.0 for s in sleeps)


def test_network_error_on_get_is_retried_then_reported():
    sleeps = Sleeps()
    client = GitHubClient(TOKEN, "http://127.0.0.1:9", sleep=sleeps, max_attempts=2,
                          timeout=(1, 1))
    with pytest.raises(TransientError, match="unreachable") as info:
        client.get_json("/user")
    assert sleeps == [1.0] and TOKEN not in str(info.value)


# --------------------------------------------------------------------------- errors


def test_fork_token_403_is_a_read_only_permission_error(stub):
    client, _ = client_for(stub, token="ro-token")
    marker = comment_marker()
    with pytest.raises(PermissionDenied) as info:
        upsert_sticky_comment(client, REPO, 7, f"x\n{marker}", marker=marker)
    assert info.value.read_only_token
    assert "fork" in str(info.value) and "pull-requests: write" in str(info.value)
    assert stub.comments(7) == []


def test_401_404_messages_say_what_to_do(stub):
    client, _ = client_for(stub, token="wrong")
    with pytest.raises(BadCredentials, match="github_token input"):
        client.get_json("/user")
    client, _ = client_for(stub)
    with pytest.raises(NotFound, match="cannot see"):
        client.get_json("/repos/octo/other/pulls/1")


def test_token_is_never_in_messages(stub):
    client, _ = client_for(stub)
    stub.fail_next(500, times=10)
    with pytest.raises(TransientError) as info:
        client.get_json("/user")
    assert TOKEN not in str(info.value)


# --------------------------------------------------------------------------- GHES, PRs


def test_ghes_base_url_with_api_v3_prefix():
    with GitHubStub(tokens={TOKEN: DEFAULT_BOT_LOGIN}, prefix="/api/v3") as ghes:
        client = GitHubClient(TOKEN, ghes.api_url, sleep=Sleeps())
        marker = comment_marker()
        for i in range(40):
            ghes.add_comment(5, f"c{i}", "someone")
        upsert_sticky_comment(client, REPO, 5, f"x\n{marker}", marker=marker,
                              author_login=DEFAULT_BOT_LOGIN)
        upsert_sticky_comment(client, REPO, 5, f"y\n{marker}", marker=marker,
                              author_login=DEFAULT_BOT_LOGIN)
        assert all(r.path.startswith("/api/v3/") for r in ghes.requests())
        assert len([c for c in ghes.comments(5) if marker in c["body"]]) == 1


def test_pulls_for_commit(stub):
    stub.add_pull(9, "c" * 40)
    client, _ = client_for(stub)
    assert [p["number"] for p in pulls_for_commit(client, REPO, "c" * 40)] == [9]
    assert pulls_for_commit(client, REPO, "d" * 40) == []


def _env(tmp_path: Path, event_name: str, payload: dict) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    return {
        "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": REPO, "GITHUB_SHA": "m" * 40, "GITHUB_RUN_ID": "77",
        "GITHUB_SERVER_URL": "https://ghes.example.com/",
        "GITHUB_API_URL": "https://ghes.example.com/api/v3",
    }


def _pull_payload(fork: bool = False) -> dict:
    return {"number": 12, "pull_request": {
        "number": 12,
        "head": {"sha": "h" * 40, "ref": "feat",
                 "repo": {"full_name": "forker/agents" if fork else REPO, "fork": fork}},
        "base": {"sha": "b" * 40, "ref": "main", "repo": {"full_name": REPO, "fork": False}},
    }}


@pytest.mark.parametrize("event_name", ["pull_request", "pull_request_target"])
def test_event_pull_request(tmp_path, event_name):
    ctx = EventContext.from_env(_env(tmp_path, event_name, _pull_payload()))
    assert (ctx.pr_number, ctx.head_sha, ctx.base_ref, ctx.is_fork) == (12, "h" * 40, "main",
                                                                        False)
    assert ctx.run_url == f"https://ghes.example.com/{REPO}/actions/runs/77"
    assert ctx.api_url == "https://ghes.example.com/api/v3"
    assert EventContext.from_env(_env(tmp_path, event_name, _pull_payload(True))).is_fork


def test_event_push_and_dispatch(tmp_path):
    ctx = EventContext.from_env(_env(tmp_path, "push", {"after": "a" * 40}))
    assert ctx.pr_number is None and ctx.head_sha == "a" * 40
    ctx = EventContext.from_env(_env(tmp_path, "workflow_dispatch", {"inputs": {"pr_number": "4"}}))
    assert ctx.pr_number == 4 and ctx.head_sha == "m" * 40


def test_event_workflow_run(tmp_path):
    run = {"head_sha": "h" * 40, "head_branch": "feat",
           "repository": {"full_name": REPO}, "head_repository": {"full_name": REPO},
           "pull_requests": [{"number": 3, "base": {"ref": "main"}}]}
    ctx = EventContext.from_env(_env(tmp_path, "workflow_run", {"workflow_run": run}))
    assert (ctx.pr_number, ctx.head_sha, ctx.base_ref, ctx.is_fork) == (3, "h" * 40, "main",
                                                                        False)
    fork_run = {**run, "pull_requests": [], "head_repository": {"full_name": "forker/agents"}}
    ctx = EventContext.from_env(_env(tmp_path, "workflow_run", {"workflow_run": fork_run}))
    assert ctx.pr_number is None and ctx.is_fork


def test_event_issue_comment(tmp_path, stub):
    payload = {"issue": {"number": 9, "pull_request": {"url": "x"}}}
    ctx = EventContext.from_env(_env(tmp_path, "issue_comment", payload))
    assert ctx.pr_number == 9 and ctx.head_sha is None
    pull = stub.add_pull(9, "e" * 40, base_ref="dev")
    ctx = ctx.with_pull(pull)
    assert (ctx.head_sha, ctx.base_ref) == ("e" * 40, "dev")
    plain = EventContext.from_env(_env(tmp_path, "issue_comment", {"issue": {"number": 9}}))
    assert plain.pr_number is None


def test_a_missing_pull_request_payload_is_said_and_the_number_taken_from_github_ref(
        tmp_path):
    """GitHub sets GITHUB_REF to refs/pull/N/merge on pull_request events ("Events that
    trigger workflows"): without a payload the PR is still known, and both are said."""
    env = {**_env(tmp_path, "pull_request", {}), "GITHUB_REF": "refs/pull/12/merge",
           "GITHUB_EVENT_PATH": str(tmp_path / "gone.json")}
    ctx = EventContext.from_env(env)
    assert (ctx.pr_number, ctx.head_sha) == (12, None)  # the head is asked for over REST
    assert ctx.warnings == (
        f"GITHUB_EVENT_PATH names {tmp_path / 'gone.json'}, which does not exist: the "
        "pull_request payload is missing",
        "the pull_request event names no pull request number (the payload's number and "
        "pull_request.number): using 12 from GITHUB_REF (refs/pull/12/merge)")


def test_a_pull_request_payload_without_a_number_is_said(tmp_path):
    payload = _pull_payload()
    del payload["number"], payload["pull_request"]["number"]
    ctx = EventContext.from_env(_env(tmp_path, "pull_request", payload))
    assert ctx.pr_number is None and ctx.head_sha == "h" * 40
    assert ctx.warnings == (
        "the pull_request event names no pull request number (the payload's number and "
        "pull_request.number, or GITHUB_REF refs/pull/N/merge; GITHUB_REF is ''): no PR "
        "comment",)
    assert EventContext.from_env(_env(tmp_path, "pull_request", _pull_payload())).warnings == ()


@pytest.mark.parametrize("value", ["7; rm -rf /", "\u00b2", "-3", "0", "7.0", True])
def test_a_dispatch_pr_number_that_is_not_one_is_said(tmp_path, value):
    ctx = EventContext.from_env(_env(tmp_path, "workflow_dispatch",
                                     {"inputs": {"pr_number": value}}))
    assert ctx.pr_number is None and ctx.head_sha == "m" * 40
    assert ctx.warnings == (
        f"the workflow_dispatch input pr_number is not a pull request number: {str(value)!r}; "
        "the pull request is looked for by the commit instead",)


def test_event_outside_actions_is_empty():
    ctx = EventContext.from_env({})
    assert ctx.pr_number is None and ctx.run_url is None and ctx.api_url.startswith("https://")


# --------------------------------------------------------------------------- file commands


def test_outputs_are_multiline_safe(tmp_path):
    out = tmp_path / "output"
    out.write_text("earlier=1\n")
    write_outputs(out, {"metrics": '{"a": 1}\nsecond line', "passed": "true"})
    text = out.read_text()
    lines = text.splitlines()
    assert lines[0] == "earlier=1"
    name, delim = lines[1].split("<<")
    assert name == "metrics" and delim.startswith("ghadelimiter_")
    assert lines[2:5] == ['{"a": 1}', "second line", delim]
    assert text.endswith("\n")
    with pytest.raises(ValueError):
        write_outputs(out, {"bad=name": "x"})


def test_job_summary_stays_under_1_mib(tmp_path):
    summary = tmp_path / "summary.md"
    assert append_job_summary(summary, "# Head\n")
    big = "\n".join("| ü | " + "y" * 200 + " |" for _ in range(10_000))
    assert not append_job_summary(summary, big)
    data = summary.read_bytes()
    assert len(data) <= 1024 * 1024 and data.startswith(b"# Head\n")
    assert "1 MiB" in data.decode("utf-8")


def test_each_runner_file_is_written_on_its_own(tmp_path, console):
    """A folder as GITHUB_STEP_SUMMARY, /dev/full as GITHUB_OUTPUT: each is a warning
    naming the variable and why; a writable one is written."""
    folder = tmp_path / "summary"
    folder.mkdir()
    assert not write_runner_file("GITHUB_STEP_SUMMARY", folder,
                                 lambda path: append_job_summary(path, "# x\n"))
    assert not write_runner_file("GITHUB_OUTPUT", Path("/dev/full"),
                                 lambda path: write_outputs(path, {"passed": "true"}))
    out = tmp_path / "output"
    assert write_runner_file("GITHUB_OUTPUT", out,
                             lambda path: write_outputs(path, {"passed": "true"}))
    assert "passed<<" in out.read_text()
    assert not write_runner_file("GITHUB_OUTPUT", None, lambda path: 1 / 0)
    warnings = [line for line in console.lines if line.startswith("warning: ")]
    assert warnings == [
        f"warning: cannot write GITHUB_STEP_SUMMARY={folder}: Is a directory; the run's other "
        "files are still written",
        "warning: no space left on device writing GITHUB_OUTPUT=/dev/full; the run's other "
        "files are still written"]


def test_an_append_that_fails_is_undone(tmp_path):
    """A full disk mid-append leaves the outputs file as it was, not a cut block the
    runner cannot parse."""
    from support.small_disk import small_disk

    with small_disk(tmp_path / "disk", free_bytes=4096) as disk:
        out = disk / "output"
        write_outputs(out, {"passed": "true"})
        before = out.read_text()
        with pytest.raises(OSError):
            write_outputs(out, {"metrics": "x" * 100_000})
        assert out.read_text() == before


def test_workflow_command_escaping():
    line = workflow_command("error", "50% worse\nsee log", file="evals/a,b:c.json", line=12,
                            title="case x")
    assert line == ("::error file=evals/a%2Cb%3Ac.json,line=12,title=case x::"
                    "50%25 worse%0Asee log")
    assert escape_property("a\r\n%") == "a%0D%0A%25"
    assert workflow_command("notice", "hi") == "::notice::hi"


def test_comment_keys_that_differ_in_punctuation_keep_their_own_marker():
    assert comment_marker("a b") != comment_marker("a-b")
    assert comment_marker("a-b") == "<!-- adk-eval-action:a-b -->"
    assert "-->" not in comment_marker("x --> y")[:-4]


# --------------------------------------------------------------------------- answers


class _Trickle(BaseHTTPRequestHandler):
    """Answers 200 with a body of ``server.size`` bytes sent one at a time, ``server.pause``
    seconds apart (a proxy or server that never quite finishes); counts what it sent."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        server: Any = self.server
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(server.size))
        self.end_headers()
        try:
            for _ in range(server.size):
                self.wfile.write(b" ")
                self.wfile.flush()
                server.sent += 1
                time.sleep(server.pause)
        except OSError:
            pass  # the client hung up

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - its name
        pass


@pytest.fixture
def trickle() -> Iterator[Any]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.size, server.pause, server.sent = 100_000, 0.005, 0
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.timeout(120)
def test_an_answer_that_trickles_in_is_cut_off_when_the_budget_is_spent(trickle):
    """The read timeout is per read, so 100,000 bytes at 200 a second (8 minutes) never
    time out; the budget (0.2 s) ends the call while the body is still arriving."""
    client = GitHubClient(TOKEN, f"http://127.0.0.1:{trickle.server_port}", budget=0.2,
                          sleep=Sleeps())
    with pytest.raises(TransientError, match="still arriving when the API time budget"):
        client.get_json("/user")
    assert 0 < trickle.sent < trickle.size
    assert client.budget.remaining == 0
    with pytest.raises(TransientError, match="budget .* spent before GET /user"):
        client.get_json("/user")


def test_an_answer_larger_than_the_cap_is_refused(stub, monkeypatch):
    for index in range(20):
        stub.add_comment(7, f"comment {index} " + "x" * 100, "octocat")
    client, _ = client_for(stub)
    page = requests.get(f"{stub.api_url}/repos/{REPO}/issues/7/comments?per_page=100",
                        headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10).content
    assert len(page) > 2000
    monkeypatch.setattr(transport, "MAX_ANSWER_BYTES", 2000)
    with pytest.raises(TransientError, match="passed 2,000 bytes"):
        list(paginate(client, f"/repos/{REPO}/issues/7/comments"))
    monkeypatch.setattr(transport, "MAX_ANSWER_BYTES", len(page))
    assert len(list(paginate(client, f"/repos/{REPO}/issues/7/comments"))) == 20


@pytest.mark.parametrize("header", ["\u00b2", "1e3", "-5"])
def test_a_retry_after_that_is_not_whole_seconds_is_not_waited_for(stub, header):
    """``"²".isdigit()`` is True and ``float("²")`` a ValueError: such a header (and any
    that is not whole seconds) gets the secondary-limit wait, as a missing one does."""
    client, sleeps = client_for(stub, token="pat")
    stub.fail_next(429, headers={"retry-after": header})
    assert client.get_json("/user")["login"] == "octocat"
    assert sleeps == [60.0]


def test_an_answer_keeps_its_body_and_reads_it_in_the_charset_it_names(stub):
    """The transport keeps the body it read itself (github.answers.Answer): a page's JSON
    and its next link as GitHub sent them, and a body that is not JSON in the charset its
    Content-Type names (a proxy's Latin-1 page) rather than as UTF-8."""
    for index in range(3):
        stub.add_comment(7, f"comment {index}", "octocat")
    client, _ = client_for(stub)
    answer = client.request("GET", f"/repos/{REPO}/issues/7/comments", params={"per_page": 2})
    assert [c["body"] for c in answer.json()] == ["comment 0", "comment 1"]
    assert "page=2" in answer.links["next"]["url"]
    text = "Zugriff verweigert für Gäste"
    page = Answer(status_code=403, url="", links={}, content=text.encode("latin-1"),
                  headers=requests.structures.CaseInsensitiveDict(
                      {"Content-Type": "text/html; charset=ISO-8859-1"}))
    assert page.text == text
    with pytest.raises(ValueError):
        page.json()

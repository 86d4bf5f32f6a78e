"""Stale runs (issue 11, item 7): a run for an older head never replaces the comment of a
newer one. The action is run as the runner starts it (fake pipeline, the REST stand-in as
GitHub); the pull request's head moves between the runs as a push would move it."""

from __future__ import annotations

import pytest

from adk_eval_action.github.freshness import head_marker, recorded_head, stale_reason
from adk_eval_action.github.sticky import comment_marker
from e2e.test_action import TOKEN, fake_outcome, pull_request_event, run_fake, settings_for
from support.github_stub import GitHubStub, Token

OLD, NEW = "1" * 40, "2" * 40


@pytest.fixture
def stub():
    with GitHubStub(tokens={TOKEN: Token("github-actions[bot]", installation=True)}) as server:
        yield server


def _run(tmp_path, stub, head: str, text: str, gate: int = 0) -> tuple[int, list[str]]:
    """The action for a pull_request event whose head is ``head``; the comment says ``text``."""
    folder = tmp_path / head[:4]
    folder.mkdir(exist_ok=True)
    event = pull_request_event(folder / "event.json", head_sha=head)
    outcome = fake_outcome(folder, gate)
    outcome.comment_markdown = f"### ADK evaluation\n\n{text}\n"
    settings = settings_for(folder, stub, event, RESULTS_PATH=str(folder / "r.json"))
    return run_fake(settings, outcome)


def test_a_stale_run_leaves_the_newer_comment_untouched(tmp_path, stub):
    stub.add_pull(12, NEW)  # the PR was pushed to: its head is NEW
    code, _ = _run(tmp_path, stub, NEW, "report for the new head")
    assert code == 0
    [comment] = stub.comments(12)
    assert recorded_head(comment["body"]) == NEW
    writes = len(stub.requests("POST")) + len(stub.requests("PATCH"))

    # The run for the older head finishes last, with a failing gate.
    code, printed = _run(tmp_path, stub, OLD, "report for the old head", gate=1)
    assert code == 1  # the gate's own code: not posting is not an error
    assert stub.comments(12) == [comment]  # untouched
    assert len(stub.requests("POST")) + len(stub.requests("PATCH")) == writes
    said = [p for p in printed if p.startswith("::notice title=PR comment not posted::")]
    assert said and NEW[:12] in said[0] and OLD[:12] in said[0]
    summary = (tmp_path / OLD[:4] / "summary.md").read_text()
    assert "not posted" in summary and "moved on" in summary


def test_the_run_for_the_current_head_replaces_an_older_comment(tmp_path, stub):
    stub.add_pull(12, OLD)
    _run(tmp_path, stub, OLD, "report for the old head")
    [first] = stub.comments(12)
    with stub.lock:
        stub.state.pulls[12]["head"]["sha"] = NEW  # a push moved the head
    code, _ = _run(tmp_path, stub, NEW, "report for the new head")
    assert code == 0
    [updated] = stub.comments(12)
    assert updated["id"] == first["id"] and "report for the new head" in updated["body"]
    assert recorded_head(updated["body"]) == NEW
    assert updated["body"].rstrip().endswith(comment_marker())  # the key marker stays last


def test_head_marker_records_only_a_hex_sha_and_reads_back_the_last():
    assert head_marker(NEW) == f"<!-- adk-eval-action-head:{NEW} -->"
    assert head_marker("not-a-sha -->") == "" and head_marker(None) == ""
    body = f"{head_marker(OLD)}\ntext\n{head_marker(NEW)}\n{comment_marker()}\n"
    assert recorded_head(body) == NEW and recorded_head("no marker") is None


def test_stale_reason_compares_with_the_pull_request_head():
    pull = {"number": 7, "head": {"sha": NEW}}
    assert stale_reason(pull, NEW) is None
    assert stale_reason(pull, NEW.upper()) is None
    assert stale_reason(pull, None) is None and stale_reason({"number": 7}, OLD) is None
    reason = stale_reason(pull, OLD)
    assert reason is not None and "PR #7 has moved on to " + NEW[:12] in reason

"""Hostile and broken input, end to end: one table, one row per example (issue 12's eleven
kinds), each run as the runner starts the action (or as a user runs the CLI) against a
real google-adk evaluation of a stand-in agent and the local GitHub REST stand-in.

Every row is checked for the same promises (docs/action.md, "Security model"):

- the exit code is the documented one (0 pass, 1 the gate failed on computed scores, 2
  incomplete, 130/143 a signal), with the row's message in the log;
- whenever evaluation started: the results file, the comment file, the job summary and
  the step outputs (``passed``) are all written;
- no secret value (the token, the environment's keys and passwords) is in any file or
  log line (bar the ``::add-mask::`` lines that register them with the runner);
- no comment but ours is modified, and there is at most one of ours;
- every workflow command in the log is one the action meant to send;
- the run ends within the row's bound (``seconds``; the test's timeout adds a margin).

A new kind of hostile input is one more row in ``CASES`` (cases.py).

A row whose check does not depend on a fresh evaluation (the GitHub API's answers, the
baseline, the results path: ``Case.twin``) also runs as a quick twin: the same input, run
and checks, with google-adk's evaluation of the example replayed from the session's shared
run (``good_run``, the same project evaluated once) and everything around it real
(discovery, the preflight, saving the results, the baseline, compare, render, publish
against the GitHub stand-in). Its end-to-end run is then ``slow`` (CI runs it).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.github.sticky import COMMENT_MAX_CHARS, comment_marker, is_marked
from conftest import SharedRun
from e2e.hostile.cases import CASES, Case
from e2e.hostile.workspace import (
    FOREIGN_BODY,
    PERSON_BODY,
    SECRETS,
    Run,
    Workspace,
    replay_evaluation,
    stub_for_case,
)

#: Workflow commands the action sends itself: masks, groups, the stop/resume pair around
#: the evaluation and annotations (whose message and properties are escaped).
OUR_COMMANDS = re.compile(
    r"::add-mask::.+|::group::.*|::endgroup::|::stop-commands::adk-eval-[0-9a-f]{32}"
    r"|::adk-eval-[0-9a-f]{32}::|::(error|warning|notice)( [^:]*)?::.*"
)
#: A run may take this much longer than its row's bound before the test is stopped.
TIMEOUT_MARGIN_S = 60


def _commands(log: str) -> list[str]:
    return [line for line in log.splitlines() if line.lstrip().startswith("::")]


def check_exit_and_message(case: Case, run: Run) -> None:
    assert run.exception is None, f"uncaught {run.exception!r}\n{run.log}"
    assert run.exit_code == case.exit_code, run.log
    assert re.search(case.says, run.log, re.S), f"{case.says!r} not in the log:\n{run.log}"


def check_files(case: Case, run: Run) -> None:
    if not case.evaluated:
        check_stopped(case, run)
        return
    results = run.results
    assert results is not None, "no results file"
    assert results["complete"] is (case.exit_code in (0, 1)), results["complete"]
    if case.cli:
        assert run.files.get("comment.md") and run.files.get("summary.md")
        return
    assert run.comment_file and is_marked(run.comment_file, comment_marker(
        run.workspace.inputs.get("comment_key", "default")))
    if "summary" not in case.unwritable:
        assert run.files.get("summary.md"), "no job summary"
    if "outputs" not in case.unwritable:
        assert run.outputs.get("passed") == ("true" if case.exit_code == 0 else "false")
        assert run.outputs.get("results_path") == "adk-eval-results.json"


def check_stopped(case: Case, run: Run) -> None:
    """A run stopped before evaluation started: the results file records the error (no
    suites, ``complete`` false) and the comment says "incomplete" (docs/action.md), unless
    the row's input leaves no results file to write (``recorded``); the job summary and
    outputs say it in any case."""
    results = run.results
    if not case.recorded:
        assert results is None, "the row expects no results file"
    else:
        assert results is not None, "the stop is not recorded in a results file"
        assert results["complete"] is False and results["suites"] == [], results
        assert [e for e in results["errors"] if re.search(case.says, e["message"], re.S)], \
            results["errors"]
        comment = run.files.get("comment.md") if case.cli else run.comment_file
        assert comment and "ADK eval incomplete" in comment, comment
    if not case.cli:  # the failure is still in the job summary and the outputs
        assert run.outputs.get("passed") == "false", run.outputs
        assert run.files.get("summary.md"), "no job summary"
        if case.recorded:
            assert run.outputs.get("results_path") == "adk-eval-results.json", run.outputs


def check_no_secret(run: Run) -> None:
    log = "\n".join(x for x in run.log.splitlines() if not x.startswith("::add-mask::"))
    for name, text in [("log", log), *run.files.items()]:
        leaked = [s[:6] + "…" for s in SECRETS if s in text]
        assert not leaked, f"{leaked} in {name}"


def check_comments(run: Run) -> None:
    comments = run.workspace.stub.comments(12)
    by_id = {c["id"]: c for c in comments}
    assert by_id[run.workspace.foreign["id"]]["body"] == FOREIGN_BODY
    assert by_id[run.workspace.person["id"]]["body"] == PERSON_BODY
    ours = [c for c in comments if c["id"] not in (run.workspace.foreign["id"],
                                                   run.workspace.person["id"])]
    keys = {re.sub(r"\s+", " ", c["body"].rstrip().rpartition("\n")[2]) for c in ours}
    assert len(keys) == len(ours), "two comments of one key"


def check_commands(case: Case, run: Run) -> None:
    if case.cli:
        assert not _commands(run.log), "the CLI printed a workflow command"
        return
    assert "##[" not in run.log, "a legacy ##[command] from data reached the runner"
    stray = [line for line in _commands(run.log) if not OUR_COMMANDS.fullmatch(line)]
    assert not stray, f"workflow commands from data reached the runner: {stray}"
    masks = [line.removeprefix("::add-mask::") for line in _commands(run.log)
             if line.startswith("::add-mask::")]
    assert set(masks) <= set(SECRETS), "::add-mask:: of something that is not a secret"


def run_and_check(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  limits: dict[str, Any], gemini: Any = None) -> None:
    """Prepares the row's workspace, runs it with ``limits`` (module constants lowered,
    ``"module.NAME": value``) and checks every promise of the module docstring."""
    monkeypatch.chdir(tmp_path)
    with stub_for_case() as stub:
        workspace = Workspace(tmp_path, stub)
        workspace.gemini = gemini
        for name, value in limits.items():
            module, _, attribute = name.rpartition(".")
            monkeypatch.setattr(module + "." + attribute, value)
        with workspace.later:
            case.prepare(workspace)
            run = case.run(workspace)
            check_exit_and_message(case, run)
            check_files(case, run)
            check_no_secret(run)
            check_comments(run)
            check_commands(case, run)
            assert run.seconds <= case.seconds, f"took {run.seconds:.1f} s"
            if case.check is not None:
                case.check(run)


def _row(case: Case) -> Any:
    # A row with a quick twin runs end to end only in the full suite.
    slow = (pytest.mark.slow,) if case.twin is not None else ()
    return pytest.param(case, id=case.id, marks=[
        pytest.mark.timeout(case.seconds + TIMEOUT_MARGIN_S), *case.marks, *slow])


@pytest.mark.parametrize("case", [_row(c) for c in CASES])
def test_hostile_input(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       gemini_api: Any) -> None:
    run_and_check(case, tmp_path, monkeypatch, case.limits, gemini_api)


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.id, marks=pytest.mark.timeout(c.seconds + TIMEOUT_MARGIN_S))
    for c in CASES if c.twin is not None])
def test_hostile_input_replayed(
    case: Case, good_run: SharedRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The row's quick twin (module docstring): its evaluation replayed from ``good_run``,
    its limits and then its twin's (a smaller API budget where the row waits it out)."""
    replays = replay_evaluation(monkeypatch, good_run.results)
    run_and_check(case, tmp_path, monkeypatch, {**case.limits, **(case.twin or {})})
    assert replays == [["travel_agent"]], "the row's one evaluation was not the replay"


def test_every_kind_has_a_case() -> None:
    assert {c.kind for c in CASES} == set(range(1, 12))
    assert len({c.id for c in CASES}) == len(CASES)


def test_every_kind_has_a_quick_case() -> None:
    """The quick loop (not ``slow``) runs some row of every kind, end to end or as a twin."""
    quick = {c.kind for c in CASES
             if c.twin is not None or not any(m.name == "slow" for m in c.marks)}
    assert quick == set(range(1, 12))


CHILD_SIGNALS_PARENT = '''
import signal
import time
from pathlib import Path

# The base commit's agent, imported by the re-run's child: it tells the run it is
# cancelled (SIGTERM to the parent, as a cancelled job gets) and then keeps "calling
# models" until it is ended.
Path(os.environ["HOSTILE_PID_FILE"]).write_text(str(os.getpid()))
os.kill(os.getppid(), signal.SIGTERM)
time.sleep(120)
'''


def _git(root: Path, *args: str) -> str:
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=root, env=env,
                          check=True, capture_output=True, text=True).stdout


@pytest.mark.slow  # the re-run's child is another interpreter importing google-adk
@pytest.mark.timeout(180)
def test_k10_sigterm_during_the_baseline_rerun_ends_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kind 10, `--baseline rerun`: the child evaluating the base commit is ended with the
    run (no orphan still calling models), the worktree is removed, and the head's results,
    comment, summary and outputs are written (exit 143)."""
    monkeypatch.chdir(tmp_path)
    with stub_for_case() as stub:
        ws = Workspace(tmp_path, stub)
        ws.hostile_agent("Something polite.", extra=CHILD_SIGNALS_PARENT)
        for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "base"]):
            _git(ws.root, *args)
        _git(ws.root, "checkout", "-qb", "feature")
        ws.hostile_agent("Something polite.")  # the head's agent is benign
        _git(ws.root, "commit", "-qam", "head")
        pid_file = tmp_path / "child.pid"
        ws.env["HOSTILE_PID_FILE"] = str(pid_file)
        ws.inputs.update(baseline="rerun", base_ref="main")
        run = ws.action()
    case = Case("k10-sigterm-during-rerun", 10, lambda ws: None, 143, r"stopped by SIGTERM")
    check_exit_and_message(case, run)
    check_files(case, run)
    check_no_secret(run)
    check_commands(case, run)
    child = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)  # ended and reaped, not an orphan
    assert _git(ws.root, "worktree", "list").count("\n") == 1, "the worktree is left"
    tree = re.search(r"in (\S+adk-eval-base-\S+)/tree", run.log)
    assert tree and not Path(tree.group(1)).exists()


@pytest.mark.timeout(TIMEOUT_MARGIN_S + 60)
@pytest.mark.parametrize("replayed", [
    pytest.param(False, id="end-to-end", marks=pytest.mark.slow),
    pytest.param(True, id="replayed"),
])
def test_k7_a_users_template_is_rendered_once_then_cut(
    replayed: bool, request: pytest.FixtureRequest, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kind 7, "rendered once, not three times": a user's template whose output is three
    times the comment's limit is rendered once (its child process started once), and
    the comment is cut to GitHub's 65,536 characters, not rendered again smaller. Quick
    with the evaluation replayed (module docstring), end to end in the full suite."""
    from adk_eval_action.report import sandbox

    if replayed:
        good_run: SharedRun = request.getfixturevalue("good_run")
        replay_evaluation(monkeypatch, good_run.results)

    rendered: list[Path] = []
    real = sandbox.render_user_template

    def counting(template: Path, variables: dict) -> str:
        rendered.append(template)
        return real(template, variables)

    monkeypatch.setattr(sandbox, "render_user_template", counting)
    monkeypatch.chdir(tmp_path)
    with stub_for_case() as stub:
        ws = Workspace(tmp_path, stub)
        (ws.root / "mine.md.j2").write_text("{{ 'A line of my own report.\\n' * 8000 }}")
        ws.inputs["template"] = "mine.md.j2"
        run = ws.action()
    case = Case("k7-template-rendered-once", 7, lambda ws: None, 0, r"PR comment created")
    check_exit_and_message(case, run)
    check_files(case, run)
    assert [p.name for p in rendered] == ["mine.md.j2"]
    assert len("A line of my own report.\n" * 8000) > 3 * COMMENT_MAX_CHARS
    assert run.comment_file is not None and len(run.comment_file) <= COMMENT_MAX_CHARS
    assert "comment cut to fit GitHub's limit" in run.comment_file

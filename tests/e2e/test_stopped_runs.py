"""Runs stopped before evaluation started (a config, input or other error) leave a true trace:
the results file records the error (``complete: false``, no suites), the comment says
"incomplete" and why, the action replaces its sticky comment in place through the same
publish path as any run, and the job summary and outputs are set; exit 2
(docs/action.md, "Exit codes"). Inputs so broken that not even the results path or the
comment can be read fall back to the annotation, summary and outputs alone.

Also: a baseline asked for by name that cannot be used is a warning annotation with the
accurate reason, and the comment says it was not used; the check's colour stays the
evaluation's.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval_action.action import action_command
from adk_eval_action.cli import main
from adk_eval_action.errors import ConfigError
from adk_eval_action.github.logs import GitHubFormatter, log_to
from adk_eval_action.github.publish import annotate_outcome, log_suites
from adk_eval_action.github.rest import DEFAULT_BOT_LOGIN
from adk_eval_action.github.sticky import comment_marker
from adk_eval_action.outcome import PipelineOutcome, error_annotations
from adk_eval_action.results.io import load_results
from adk_eval_action.results.model import ErrorRecord, RunMetadata, RunResults, SuiteRecord
from adk_eval_action.run.pipeline import results_writer, run_pipeline
from adk_eval_action.run.stop_outcomes import stopped_run
from adk_eval_action.settings import load_request
from conftest import working_directory
from e2e import test_action as ta
from support.github_stub import GitHubStub, Token

GOOD_CONFIG = ta.SUITE_YAML.format(agent="travel_agent")
BROKEN_CONFIG = ta.SUITE_YAML.format(agent="nope")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def stub():
    with GitHubStub(tokens={ta.TOKEN: Token(DEFAULT_BOT_LOGIN, installation=True)}) as server:
        yield server


def workspace(tmp_path: Path, config: str = GOOD_CONFIG) -> Path:
    ws = tmp_path / "workspace"
    shutil.copytree(ta.EXAMPLES, ws, ignore=shutil.ignore_patterns(".adk", "__pycache__",
                                                                   "monorepo"))
    (ws / "adk-eval.yaml").write_text(config)
    return ws


def act(tmp_path: Path, ws: Path, stub: GitHubStub, **inputs: str):
    env = ta.runner_env(ws, stub, ta.pull_request_event(tmp_path / "event.json"),
                        files=tmp_path, **{"baseline": "none", **inputs})
    for name in ("summary.md", "output.txt"):
        (tmp_path / name).write_text("")
    return CliRunner().invoke(action_command, [], env=env)


def stopped_results(path: Path) -> RunResults:
    """The results file of a run stopped before evaluation, read with the results model."""
    results = load_results(path)
    assert results.complete is False and not results.is_complete()
    assert results.suites == []
    return results


def test_config_error_replaces_the_green_sticky_comment_in_place(tmp_path, stub):
    """The new user's sequence: a green run comments "passed"; then adk-eval.yaml names a
    missing agent. The same comment now says incomplete and why; nothing green is left."""
    ws = workspace(tmp_path)
    stub.add_pull(12, ta.HEAD)
    green = act(tmp_path, ws, stub)
    assert green.exit_code == 0, green.output
    [before] = stub.comments(12)
    assert "✅ **ADK eval passed**" in before["body"]

    (ws / "adk-eval.yaml").write_text(BROKEN_CONFIG)
    stopped = act(tmp_path, ws, stub)
    assert stopped.exit_code == 2, stopped.output
    [after] = stub.comments(12)
    assert after["id"] == before["id"]  # updated in place, through the sticky comment
    body = after["body"]
    # The heading and headline of every comment: an incomplete one names its cause.
    assert body.startswith(
        "### ADK evaluation\n\n⚠️ **ADK eval incomplete** (configuration error): nothing was "
        "evaluated: the run stopped before evaluation started.\n\n")
    assert "agent folder nope not found" in body and "adk-eval.yaml" in body
    assert "✅" not in body and comment_marker() in body
    assert "adk-eval-results.json" in body

    results = stopped_results(ws / "adk-eval-results.json")
    [error] = results.errors
    assert (error.kind, error.file) == ("config", "adk-eval.yaml")
    assert "suites[0].agent" in error.message and "nope not found" in error.message

    outputs = ta.read_outputs(tmp_path / "output.txt")
    assert outputs["passed"] == "false"
    assert outputs["results_path"] == "adk-eval-results.json"
    assert outputs["comment_url"] == after["html_url"]
    assert json.loads(outputs["metrics"]) == {}
    summary = (tmp_path / "summary.md").read_text()
    assert "ADK eval incomplete" in summary and "nope not found" in summary

    # The error is an annotation once the runner obeys commands again (after the window).
    lines = stopped.output.splitlines()
    resume = next(i for i, x in enumerate(lines) if re.fullmatch(r"::adk-eval-[0-9a-f]{32}::", x))
    errors = [i for i, x in enumerate(lines)
              if x.startswith("::error file=adk-eval.yaml,title=adk-eval-action::")]
    assert errors and errors[0] > resume and "nope not found" in lines[errors[0]]


@pytest.mark.parametrize("folder", ["", "team/"])
def test_a_config_errors_annotation_is_on_its_file(tmp_path, stub, folder):
    """The error annotation of a config error names the file as GitHub places annotations:
    relative to the repository root (the workspace), also from a working_directory below
    it (workflow commands, "error": file=, line=)."""
    ws = workspace(tmp_path)
    (ws / folder).mkdir(exist_ok=True)
    (ws / folder / "adk-eval.yaml").write_text(BROKEN_CONFIG)
    stub.add_pull(12, ta.HEAD)
    result = act(tmp_path, ws, stub, working_directory=str(ws / folder))
    assert result.exit_code == 2, result.output
    errors = [x for x in result.output.splitlines() if x.startswith("::error ")]
    # The message names the file as the working directory sees it; ',' and ':' of a
    # property are escaped (%2C, %3A), as the runner's ActionCommand.cs unescapes them.
    assert errors == [
        f"::error file={folder}adk-eval.yaml,title=adk-eval-action::adk-eval.yaml "
        "(field `suites[0].agent`): agent folder nope not found"
    ]


def test_bad_input_replaces_the_sticky_comment(tmp_path, stub):
    """INPUT_NUM_RUNS=abc is refused before anything else is read; the inputs that say where
    the results and comment go are still usable, so the trace is the same."""
    ws = workspace(tmp_path)
    stub.add_pull(12, ta.HEAD)
    old = stub.add_comment(12, "✅ **ADK eval passed**: 4/4\n\n" + comment_marker(),
                           DEFAULT_BOT_LOGIN)
    result = act(tmp_path, ws, stub, num_runs="abc", results_path="out/r.json")
    assert result.exit_code == 2, result.output
    assert "::error title=adk-eval-action::invalid input num_runs" in result.output
    [comment] = stub.comments(12)
    assert comment["id"] == old["id"]
    assert "ADK eval incomplete" in comment["body"] and "num\\_runs" in comment["body"]
    [error] = stopped_results(ws / "out" / "r.json").errors
    assert error.kind == "config" and error.message.startswith("invalid input num_runs")
    outputs = ta.read_outputs(tmp_path / "output.txt")
    assert (outputs["results_path"], outputs["comment_path"]) == (
        "out/r.json", "out/adk-eval-comment.md")


def test_unusable_publishing_input_falls_back_to_the_annotation(tmp_path, stub):
    """`comment: maybe` leaves no comment mode to publish with: the documented fallback is
    the error annotation, the job summary and the outputs; nothing else is touched."""
    ws = workspace(tmp_path)
    stub.add_pull(12, ta.HEAD)
    old = stub.add_comment(12, "✅ passed\n\n" + comment_marker(), DEFAULT_BOT_LOGIN)
    result = act(tmp_path, ws, stub, comment="maybe")
    assert result.exit_code == 2
    assert "::error title=adk-eval-action::invalid input comment" in result.output
    assert stub.comments(12) == [old] and not (ws / "adk-eval-results.json").exists()
    assert (tmp_path / "summary.md").read_text().startswith(
        "## ADK evaluation\n\n⚠️ **ADK eval incomplete** (configuration error): adk-eval-action "
        "could not run: invalid input comment")
    outputs = ta.read_outputs(tmp_path / "output.txt")
    assert (outputs["passed"], outputs["results_path"]) == ("false", "")


def test_a_shard_stopped_before_evaluation_writes_its_part_and_posts_nothing(tmp_path, stub):
    ws = workspace(tmp_path, BROKEN_CONFIG)
    stub.add_pull(12, ta.HEAD)
    result = act(tmp_path, ws, stub, shard="1/2")
    assert result.exit_code == 2, result.output
    assert stub.comments(12) == []
    assert stopped_results(ws / "adk-eval-results.json").errors[0].kind == "config"
    assert ta.read_outputs(tmp_path / "output.txt")["results_path"] == "adk-eval-results.json"


@pytest.mark.parametrize("args, field", [
    (["--config", "broken.yaml"], "suites[0].eval_sets"),
    (["--baseline", "missing.json"], "baseline file not found"),
    (["/"], "outside the repository root"),
])
def test_cli_run_writes_results_and_comment_when_stopped(tmp_path, args, field):
    """The CLI's `run` keeps the same promise for --results-out and --comment-out (a value
    click itself refuses, such as --num-runs 0, is click's usage error: nothing written)."""
    ws = workspace(tmp_path)
    (ws / "broken.yaml").write_text("suites:\n  - name: t\n    agent: travel_agent\n")
    out = ["--results-out", "r.json", "--comment-out", "c.md", "--summary-out", "s.md"]
    with working_directory(ws):
        result = CliRunner().invoke(main, ["run", *args, *out])
    assert result.exit_code == 2, result.output
    [error] = stopped_results(ws / "r.json").errors
    assert error.kind == "config" and field in error.message
    comment = (ws / "c.md").read_text()
    assert comment.startswith(
        "### ADK evaluation\n\n⚠️ **ADK eval incomplete** (configuration error): nothing was "
        "evaluated: the run stopped before evaluation started.\n\n")
    # The message's field is a code span (report.format.md keeps it), its prose escaped.
    shown = f"`{field}`" if "." in field else field.replace("_", "\\_")
    assert shown in comment and "r.json" in comment
    # The job summary's heading is one level up, as the packaged templates' are.
    assert (ws / "s.md").read_text() == "## " + comment.removeprefix("### ")


def test_an_unexpected_error_before_evaluation_is_recorded_as_internal(tmp_path, monkeypatch):
    ws = workspace(tmp_path)

    def broken(request):
        raise RuntimeError("discovery broke")

    monkeypatch.setattr("adk_eval_action.run.pipeline.find_suites", broken)
    request = load_request(ws, flags={"results_path": "r.json", "comment_out": "c.md"})
    outcome = run_pipeline(request)
    assert (outcome.exit_code, outcome.passed) == (2, False)
    [error] = stopped_results(ws / "r.json").errors
    assert error.kind == "internal" and "RuntimeError: discovery broke" in error.message
    assert error.hint == "please report this as a bug"
    assert "please report this as a bug" in (ws / "c.md").read_text()


# --------------------------------------------------------------------------- baseline asked for


@pytest.mark.parametrize("repository, token, reason", [
    ("octo/agents", "", "no GitHub token (the github_token input is empty)"),
    ("", "t0k", "no GitHub repository (GITHUB_REPOSITORY is not set)"),
    ("", "", "no GitHub repository (GITHUB_REPOSITORY is not set) and no GitHub token"),
])
def test_an_unusable_artifact_context_names_what_is_missing(repository, token, reason):
    from pydantic import SecretStr

    from adk_eval_action.baseline.artifact import unusable_reason
    from adk_eval_action.baseline.models import BaselineContext

    text = unusable_reason(BaselineContext(repository=repository, token=SecretStr(token)))
    assert text.startswith(reason + ":") or text.startswith(reason + " (")
    assert ("no GitHub repository" in text) == (not repository)


def test_a_requested_artifact_baseline_without_token_is_a_warning_annotation(tmp_path, stub):
    """`baseline: artifact` with an empty github_token (GITHUB_REPOSITORY set): the run is
    still gated on thresholds alone (a missing baseline never fails the check), the reason
    names the token, not the repository, and it is a warning annotation after the log
    window; the comment says the baseline was not used."""
    ws = workspace(tmp_path)
    result = act(tmp_path, ws, stub, baseline="artifact", github_token="")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    resume = next(i for i, x in enumerate(lines) if re.fullmatch(r"::adk-eval-[0-9a-f]{32}::", x))
    warnings = [(i, x) for i, x in enumerate(lines) if x.startswith("::warning ")]
    assert [x for _, x in warnings] == [
        "::warning title=adk-eval-action::No baseline: the artifact baseline was requested but "
        "not used: no GitHub token (the github_token input is empty): pass the github_token "
        "input (it needs actions: read); outside GitHub use --baseline rerun or a results file"
    ]
    assert warnings and all(i > resume for i, _ in warnings)
    assert not any("no GitHub repository" in x for x in lines)
    comment = (ws / "adk-eval-comment.md").read_text()
    assert "No baseline: the artifact baseline was requested but not used: no GitHub token" \
        in comment
    assert ta.read_outputs(tmp_path / "output.txt")["passed"] == "true"


def test_a_failed_requirements_install_is_recorded_and_posted(tmp_path, stub):
    """`requirements:` naming a missing file stops the run before evaluation: recorded and
    posted like any stop, and the process is not restarted."""
    from adk_eval_action.action import ActionRun, run_action
    from adk_eval_action.github.transport import GitHubClient

    ws = workspace(tmp_path)
    stub.add_pull(12, ta.HEAD)
    env = ta.runner_env(ws, stub, ta.pull_request_event(tmp_path / "event.json"),
                        files=tmp_path, baseline="none", requirements="missing.txt")
    restarted: list[bool] = []
    code = run_action(ActionRun.from_sources({}, env), reexec=lambda _: restarted.append(True),
                      client_factory=lambda token, api: GitHubClient(token, api))
    assert code == 2 and not restarted
    [comment] = stub.comments(12)
    assert "⚠️ **ADK eval incomplete** (configuration error): nothing was evaluated" \
        in comment["body"]
    assert "missing.txt" in comment["body"]
    [error] = stopped_results(ws / "adk-eval-results.json").errors
    assert "missing.txt" in error.message and "not a file" in error.message


def test_a_stopped_runs_annotation_is_on_the_templates_line(tmp_path):
    """A run stopped after evaluation by its comment template (a ConfigError naming the
    template's line, as report.sandbox raises it) is annotated on that file and line,
    relative to the repository root, with a message naming it relative to the working
    directory; in process (the rendering child is left out)."""
    ws = tmp_path / "ws"
    workdir = ws / "team"
    workdir.mkdir(parents=True)
    (workdir / "t,1.j2").write_text("ok\n{{ x }\n")
    request = load_request(workdir)
    writer = results_writer(request)
    writer.start(RunMetadata())  # evaluation started
    outcome = stopped_run(request, ConfigError(workdir / "t,1.j2", "template error: E: x",
                                               line=2), writer)
    [record] = load_results(request.path(request.settings.results_path)).errors
    assert (record.kind, record.file, record.line) == ("config", "t,1.j2", 2)
    assert (outcome.error_file, outcome.error_line) == ("t,1.j2", 2)
    stream = io.StringIO()
    with log_to(stream, GitHubFormatter()):
        annotate_outcome(outcome, ws, workdir)
    assert stream.getvalue() == (
        "::error file=team/t%2C1.j2,line=2,title=adk-eval-action::t,1.j2:2: template error: "
        "E: x\n")


def test_errors_on_a_file_are_annotations_on_it(tmp_path):
    """A run that went on past errors naming a file (an eval set that does not load, an
    eval config, a named baseline file that cannot be read) annotates each on that file
    (relative to the repository root; the records' files are relative to the working
    directory); errors of an eval case (its own annotation says them) or with no file are
    not repeated; an agent's comes first and its suite's cases get none (runless)."""
    ws = tmp_path / "ws"
    workdir = ws / "team"
    for name in ("a/agent.py", "b/x.evalset.json", "base.json"):
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text("{")
    agent = ErrorRecord(kind="agent", suite="a", file="a/agent.py", line=3,
                        message="agent a failed to import")
    eval_set = ErrorRecord(kind="eval_set", suite="b", file="b/x.evalset.json",
                           message="b/x.evalset.json: not valid JSON",
                           hint="fix the file; the other eval sets still ran")
    of_a_case = ErrorRecord(kind="metric_code", suite="b", file="b/y.evalset.json",
                            eval_id="c1", message="metric m raised")
    # preflight names the default criteria where an eval config file would be: no file.
    label = ErrorRecord(kind="config", suite="b", file="the default criteria",
                        message="`criteria` is empty")
    results = RunResults(suites=[
        SuiteRecord(name="a", errors=[agent]),
        SuiteRecord(name="b", errors=[eval_set, of_a_case, label]),
    ], errors=[
        ErrorRecord(kind="credentials", message="no model credentials"),
        ErrorRecord(kind="config", file="base.json",
                    message="base.json: the baseline file could not be read: not valid JSON"),
    ])
    annotated = error_annotations(results)
    outcome = PipelineOutcome(exit_code=2, passed=False, results_path=workdir / "r.json",
                              comment_markdown="", summary_markdown="", suites=["a", "b"],
                              error_annotations=annotated)
    stream = io.StringIO()
    with log_to(stream, GitHubFormatter()):
        log_suites(outcome, ws, workdir)
    assert [x for x in stream.getvalue().splitlines() if x.startswith("::error")] == [
        "::error file=team/a/agent.py,line=3,title=a%3A agent::agent a failed to import",
        "::error file=team/b/x.evalset.json,title=b%3A eval_set::b/x.evalset.json: not valid "
        "JSON (fix the file; the other eval sets still ran)",
        "::error title=b%3A config::`criteria` is empty",
        "::error file=team/base.json,title=adk-eval-action::base.json: the baseline file could "
        "not be read: not valid JSON",
    ]
    # Each suite's group says why it has no result; none says its cases pass.
    groups = [x for x in stream.getvalue().splitlines() if not x.startswith("::error")]
    assert groups == [
        "::group::Suite a", "its agent did not load or start (the error annotation below)",
        "::endgroup::",
        "::group::Suite b", "no eval case was scored",
        "  error: b/x.evalset.json: not valid JSON (fix the file; the other eval sets still ran)",
        "  error: `criteria` is empty", "::endgroup::",
    ]
